// Linear algebra on fields held as quantized tensor trains (QTT): vectors are MPS (TensorTrain),
// linear operators are MPO. Every grid here is D axes of 2^n_bits points in the `interleaved` layout
// of CONTRACT.md section 3: core l * D + j carries bit l (most significant first) of axis j, so a
// field's cores are exactly what put_cores stores and serve dense turns back into an [x, y(, z)]
// array. Costs grow with the ranks and only linearly with n_bits.
#pragma once

#include <cstdint>
#include <vector>

#include "ttstore/tt.hpp"

namespace tts::qtt {

using Mps = TensorTrain;

// A linear operator in TT form. Core k has shape [ranks[k], modes[k] (out), modes[k] (in),
// ranks[k + 1]], row-major: element (a, i, j, b) at ((a * n + i) * n + j) * r' + b.
// (A x)(i_1..i_d) = sum_j W_1[:, i_1, j_1, :] ... W_d[:, i_d, j_d, :] x(j_1..j_d).
struct Mpo {
  std::vector<int64_t> modes;
  std::vector<int64_t> ranks;
  std::vector<std::vector<double>> cores;

  int d() const { return static_cast<int>(modes.size()); }
  int64_t max_rank() const;
  void validate() const;  // throws InvalidArgument unless shapes chain and r_0 = r_d = 1
};

// The grid: `dims` axes of 2^n_bits points each.
struct Grid {
  int dims = 1;
  int n_bits = 1;
  int d() const { return dims * n_bits; }  // number of cores
  int64_t side() const { return int64_t{1} << n_bits; }
  std::vector<int64_t> shape() const;  // [side] * dims
};

enum class Boundary { Periodic, Dirichlet };  // Dirichlet: zero outside [0, side)

// ---- dense <-> QTT (small grids, tests and references) ------------------------------------------

// A C-order [side]*dims float64 array to its QTT (TT-SVD, relative error <= tol).
Mps from_dense(const Grid& g, const std::vector<double>& a, double tol);
// The C-order array (side^dims values; only for grids that fit in memory).
std::vector<double> to_dense(const Grid& g, const Mps& x);

// f_0(x) f_1(y) ... as one QTT without a dense array: each factor is a 1-D vector of 2^n_bits
// values (compressed at tol), and the axes' trains are woven into the interleaved order. The rank
// of a bond is the product of the 1-D ranks of the axes it crosses.
Mps separable(const Grid& g, const std::vector<std::vector<double>>& factors, double tol);

// ---- vector operations --------------------------------------------------------------------------

// sum_k c_k x_k, rounded to opt (block-diagonal sum, then TT rounding).
Mps combine(const std::vector<double>& c, const std::vector<const Mps*>& x, const SvdOptions& opt);
// A x by the zip-up algorithm: x is right-orthogonalised, then one left-to-right sweep contracts
// each MPO core with the MPS core and the carried remainder and truncates by SVD before the next,
// so the full product rank (rank(A) rank(x)) is never formed across the whole train; a final
// rounding brings it to opt. The zip-up carries at most 1.5 opt.max_rank; where that cap cut a
// split (its remainder is not orthonormal, so it can need several times the result's rank), one
// apply_fit sweep from the rounded result follows, so that the cap costs no accuracy the result's
// rank could hold.
Mps apply(const Mpo& a, const Mps& x, const SvdOptions& opt);
// A x fitted variationally (two-site sweeps from `guess`, alternately right to left and left to
// right): every truncation is the SVD of the exact projection of A x, so its error is what it
// discards, whatever the noise in x that A damps. Each sweep costs about three zip-ups at the
// result's rank; ranks by opt.tol (relative to ||A x||) and opt.max_rank.
Mps apply_fit(const Mpo& a, const Mps& x, const Mps& guess, const SvdOptions& opt, int sweeps);
// Element-wise product x .* y, by the same zip-up (diag(x) as the operator).
Mps hadamard(const Mps& x, const Mps& y, const SvdOptions& opt);
// x rounded to an absolute Frobenius error abs_tol (the relative tolerance abs_tol / ||x||, at
// most 0.5), ranks capped at max_rank (0: none). For intermediate results whose accuracy is set
// by their inputs' noise rather than their own size (a derivative of a rounded field).
Mps round_to(const Mps& x, double abs_tol, int64_t max_rank);
// Sum of all elements, O(d r^2).
double total(const Mps& x);

// ---- operators on the interleaved grid ----------------------------------------------------------

// c0 I + sum_j (plus[j] S_j^+ + minus[j] S_j^-), (S_j^± x)(.., i_j, ..) = x(.., i_j ± 1, ..), as one
// MPO of rank 2 dims + 1 (the bond carries "no carry yet" or the carry/borrow of one axis, which is
// how adding 1 to a binary number propagates from the least significant bit up).
// `stride` (1 or 2) is the shift distance: with 2 the carry enters one bit up and the lowest bit of
// the axis passes unchanged (the wide stencils of a central difference applied twice).
Mpo stencil(const Grid& g, Boundary b, double c0, const std::vector<double>& plus, const std::vector<double>& minus,
            int stride = 1);
Mpo identity(const Grid& g);                             // rank 1
Mpo shift(const Grid& g, Boundary b, int axis, int by);  // by = +1 or -1; rank 2
// Central first derivative along `axis`: (x_{i+1} - x_{i-1}) / (2h); rank 3.
Mpo derivative(const Grid& g, Boundary b, int axis, double h);
// The standard (2 dims + 1)-point Laplacian with spacing h; rank 2 dims + 1.
Mpo laplacian(const Grid& g, Boundary b, double h);

// D_x D_x + D_y D_y (+ D_z D_z) for the central difference D: the Laplacian on stride 2h, rank
// 2 dims + 1. Its periodic null space holds the fields constant on each parity class of the
// indices, which is why a projection built on central differences needs parity_projector below.
Mpo wide_laplacian(const Grid& g, Boundary b, double h);
// The orthogonal projector onto the fields constant on each of the 2^dims parity classes of the
// indices (all-ones on the higher bits, identity on the lowest bit of each axis): rank 1.
Mpo parity_projector(const Grid& g);
// ca a + cb b (block-diagonal: ranks add).
Mpo combine(double ca, const Mpo& a, double cb, const Mpo& b);

// Periodic convolution with `kernel` (a field on g): A[i, j] = kernel((i - j) mod side) per axis,
// the block-circulant matrix it generates, as an MPO of rank 2^dims rank(kernel).
Mpo convolution(const Grid& g, const Mps& kernel);
// The kernel of the pseudo-inverse of -L for the periodic Laplacian L on spacing stride h
// (stride 1: laplacian, stride 2: wide_laplacian), to relative accuracy tol: convolution() of it
// inverts -L exactly (to tol) on the complement of L's null space and is zero on that null space
// (the constants; for stride 2 the fields constant on each parity class). Built from a sum of
// separable heat kernels (an exponential sum for 1/λ), never a dense grid; O(side² log(side/h))
// for the 1-D kernels plus about 100 roundings.
Mps periodic_green(const Grid& g, double h, int stride, double tol);

// ---- linear solver ------------------------------------------------------------------------------

struct SolveOptions {
  double tol = 1e-8;     // stop when the largest local relative residual of a sweep is below tol
  int64_t max_rank = 0;  // cap on the solution's ranks (0: none)
  int max_sweeps = 20;   // a sweep is one pass left to right and back; a sweep that does not
                         // cut the residual by 30% ends the solve (stagnation, e.g. at the rank cap),
                         // and so does one whose truncations to max_rank leave 70% of it
};
struct SolveReport {
  int sweeps = 0;
  double residual = 0;  // largest local relative residual seen in the last sweep (before its solves)
  bool converged = false;
};
// Solves A x = b for symmetric positive definite A by two-site alternating least squares (MALS /
// two-site DMRG): each step solves the system projected onto two neighbouring cores (dense Cholesky
// when small, CG from the current value otherwise), then splits the pair by a truncated SVD, which
// is where ranks grow or shrink. `x` is the warm start and receives the solution.
SolveReport solve_spd(const Mpo& a, const Mps& b, Mps& x, const SolveOptions& opt);

}  // namespace tts::qtt
