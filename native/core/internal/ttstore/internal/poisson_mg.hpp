// Private: the 5-point operator on one grid level and the geometric multigrid V-cycle that
// preconditions poisson_2d's conjugate gradients.
//
// The fine grid has 2^k points per axis with the boundary one spacing beyond the end points. Such a
// grid does not nest (2^k + 1 intervals do not halve), so a coarse point is the centre of a pair of
// fine points (as in cell-centred multigrid): the coarse grid has half the points at twice the
// spacing, and its end points sit delta * H from the boundary with delta = (delta_fine + 1/2) / 2
// (1 on the finest grid, 3/4, 5/8, ... towards 1/2). Each level's operator is the flux form of -Δ
// with that boundary distance: an end point's diagonal along an axis is 1 + 1/delta instead of 2,
// which keeps it symmetric positive definite and is the standard stencil when delta = 1.
// Transfers: bilinear interpolation P between the point positions (towards u = 0 at the boundary),
// restriction R = P^T / 4. Smoother: red-black Gauss-Seidel, red first before the coarse
// correction and black first after it, so the V-cycle is a symmetric positive definite operator
// and CG stays CG.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ttstore/internal/big_buffer.hpp"

namespace tts::sim::detail {

struct GridOp {
  int64_t n = 0;     // points per axis
  double h = 0;      // spacing
  double delta = 1;  // boundary distance of the end points, in units of h

  // Diagonal weight (in units of 1/h²) along one axis of point k.
  double axis_diag(int64_t k) const;
  // y = A x; returns <x, y>.
  double apply(const double* x, double* y) const;
  // r = b - A x; returns ||r||².
  double residual(const double* b, const double* x, double* r) const;
  // One Gauss-Seidel half sweep over the points with (i + j) % 2 == colour.
  void relax(const double* b, double* x, int colour) const;
  // The same half sweep as from x = 0: x = h² b / diagonal at those points, which is all it reads
  // (the other points are left as they are: the next half sweep writes them without reading them).
  void relax_from_zero(const double* b, double* x, int colour) const;
};

class Multigrid {
 public:
  // n = 2^k points per axis, h = 1 / (n + 1); `sweeps` Gauss-Seidel sweeps before and after.
  explicit Multigrid(int64_t n, int sweeps = 1);
  // z = M^{-1} r: one V-cycle from zero on A z = r. z and r must not alias.
  void apply(const double* r, double* z);
  const GridOp& fine() const { return levels_.front().op; }
  int depth() const { return static_cast<int>(levels_.size()); }
  std::size_t bytes() const;  // the level vectors and the coarse factor

 private:
  struct Level {
    GridOp op;
    tts::detail::BigVector<double> b, x, r;  // rhs and iterate (coarse levels only), residual
  };
  void cycle(std::size_t l, const double* b, double* x);
  void restrict_to(std::size_t l, const double* fine, double* coarse) const;  // coarse = R fine
  void prolong_add(std::size_t l, const double* coarse, double* fine) const;  // fine += P coarse
  void coarse_solve(const double* b, double* x) const;

  std::vector<Level> levels_;
  int sweeps_;
  std::vector<double> chol_;  // Cholesky factor of the coarsest operator (column major, lower)
};

}  // namespace tts::sim::detail
