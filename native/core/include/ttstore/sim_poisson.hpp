// poisson_2d: -Δu = f on the unit square, u = 0 on the boundary, the standard 5-point stencil on the
// 2^n_bits x 2^n_bits interior points x_i = (i + 1) h, h = 1 / (2^n_bits + 1) (CONTRACT.md section 6).
// Solved by matrix-free conjugate gradients, preconditioned by one symmetric geometric multigrid
// V-cycle per iteration (or not at all). The lower-level API here takes any n_bits >= 1, for tests.
#pragma once

#include <cstdint>
#include <vector>

#include "ttstore/sim.hpp"

namespace tts::sim::poisson {

enum class Rhs { Manufactured, Gaussians, Dipole };
enum class Preconditioner { Multigrid, None };

struct Config {
  int n_bits = 9;
  Rhs rhs = Rhs::Manufactured;
  double tol = 1e-8;      // on the relative residual ||f - A u||_2 / ||f||_2
  int64_t max_iters = 0;  // 0: 10 * 2^n_bits
  Preconditioner preconditioner = Preconditioner::Multigrid;
  uint64_t seed = 0;           // gaussians only
  int64_t snapshot_every = 0;  // 0: no snapshots (else u every that many iterations)
};

// The params and their ranges (the HTTP limits, n_bits 9..14): n_bits, rhs, tol, max_iters,
// preconditioner, seed, snapshot_every (at least max_iters / kMaxSnapshots).
const std::vector<ParamSpec>& params();
// Params -> Config; throws InvalidArgument naming the param.
Config parse(const Params& p);

// f at the grid points, C order [x, y]:
//   manufactured  2π² sin πx sin πy (the exact solution sin πx sin πy, a discrete eigenvector)
//   gaussians     eight unit-mass Gaussian sources, centres in [0.15, 0.85]², widths 0.02..0.08,
//                 signed weights in [-1, 1], all drawn from `seed`
//   dipole        a source at (0.35, 0.5) and a sink at (0.65, 0.5), width 0.05, unit mass
std::vector<double> rhs(const Config& c);

// Fields u and f ([2^n, 2^n]); stats: iterations (= steps), t (0), residual (the true relative
// residual, recomputed from u), converged (1 when residual <= tol), and for `manufactured`
// max_error (max |u - sin πx sin πy| at the grid points). Progress: done = iterations, total =
// an estimate from the convergence rate so far (capped at max_iters).
Output solve(const Config& c, const Hooks& hooks);

}  // namespace tts::sim::poisson
