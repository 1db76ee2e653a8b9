// helmholtz_3d: implicit diffusion on the unit cube, entirely in QTT (CONTRACT.md section 6). Each
// step solves (I - nu dt Δ_h) u^{n+1} = u^n + dt s with the 7-point Laplacian as an MPO (rank 7 on
// the interleaved grid), by the two-site SPD solver warm-started from u^n. The field never exists
// as a dense array: initial data are built from 1-D factors, and the output is the train.
// The lower-level API here takes any n_bits >= 2, for tests on small grids.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ttstore/qtt_algebra.hpp"
#include "ttstore/sim.hpp"

namespace tts::sim::helmholtz {

enum class Initial { Modes, Gaussian };
enum class Source { None, Gaussian };

struct Config {
  int n_bits = 9;
  double nu = 1.0;
  double dt = 1e-3;
  int64_t steps = 1;
  qtt::Boundary boundary = qtt::Boundary::Periodic;
  Initial initial = Initial::Modes;
  std::vector<std::array<double, 4>> modes{{1, 1, 1, 1.0}};  // [kx, ky, kz, amplitude]
  Source source = Source::None;                              // gaussian: the initial gaussian, constant in time
  // Cap on u's ranks. Where u needs more, the solve stops at the residual the cap allows (stats
  // residual says which): a 3-D gaussian has rank r^3 across the interleaved bonds, and at 512^3
  // (nu dt = 5e-4, tol 1e-5) it stops near 1.4e-3 at 64, 1e-4 at 96, 2e-5 at 128, converges at 192.
  int64_t max_rank = 64;
  double tol = 1e-8;  // SPD solver tolerance (local relative residual) and rounding
  int64_t snapshot_every = 0;
};

// The params and their ranges (the HTTP limits, n_bits 9..14): n_bits, nu, dt, steps required;
// boundary, initial, modes (JSON text [[kx, ky, kz, A], ...]), source, max_rank, tol, seed
// (accepted, unused: nothing is random), snapshot_every (at least steps / kMaxSnapshots).
const std::vector<ParamSpec>& params();
// Params -> Config; throws InvalidArgument naming the param.
Config parse(const Params& p);

qtt::Grid grid(const Config& c);
double spacing(const Config& c);              // h: 1 / 2^n (periodic), 1 / (2^n + 1) (dirichlet)
std::vector<double> points(const Config& c);  // the 2^n coordinates of one axis
// λ_h of mode (kx, ky, kz): the eigenvalue of -Δ_h, Σ (4/h²) sin²(θ/2), θ = 2π k h or π k h.
double eigenvalue(const Config& c, double kx, double ky, double kz);

qtt::Mps initial_field(const Config& c);
qtt::Mpo implicit_operator(const Config& c);  // I - nu dt Δ_h
// One implicit step: solves implicit_operator(c) u = rhs from the warm start u (updated in place).
qtt::SolveReport step(const Config& c, const qtt::Mpo& a, const qtt::Mps& rhs, qtt::Mps& u);

// Field u as a train over the interleaved layout of [2^n, 2^n, 2^n]; stats: steps, t, max_rank
// (of u), sweeps (total over all steps), residual (largest final local residual of any step),
// norm (||u||_2 over the grid points). Progress: done = steps.
Output solve(const Config& c, const Hooks& hooks);

}  // namespace tts::sim::helmholtz
