// navier_stokes_2d: incompressible flow in the periodic box [0, 2π)², velocity (u, v) held as QTT
// on the interleaved grid from start to end (CONTRACT.md section 6). Central differences (rank 3
// MPOs) for the advection (u·∇)u and the 5-point Laplacian (rank 5) for ν Δu, ν = 1 / reynolds,
// advanced by SSP-RK3; after every stage a projection makes the velocity discretely
// divergence-free: D·∇p = D·u* is solved in QTT by the two-site SPD solver (D·∇ is the wide
// Laplacian, singular on the four parity classes: the solve adds their projector, which fixes the
// mean of each class and leaves the solution unchanged) and u -= ∇p. Every product and sum is
// rounded to `tol` with ranks capped at max_rank.
// The lower-level API here takes any n_bits >= 3, for tests on small grids.
#pragma once

#include <cstdint>

#include "ttstore/qtt_algebra.hpp"
#include "ttstore/sim.hpp"

namespace tts::sim::navier_stokes {

enum class Initial { TaylorGreen, ShearLayer, DecayingTurbulence };

struct Config {
  int n_bits = 9;
  double reynolds = 100;
  int64_t steps = 1;
  double dt = 1e-3;
  int64_t max_rank = 64;
  Initial initial = Initial::TaylorGreen;
  uint64_t seed = 0;
  double tol = 1e-9;           // rounding of every operation and the pressure solve (not a param)
  int64_t snapshot_every = 0;
};

// Params -> Config with the HTTP limits (n_bits 9..12): n_bits, reynolds (> 0), steps (>= 1),
// dt (> 0) required; max_rank (1..4096, 64), initial (taylor_green | shear_layer |
// decaying_turbulence), seed (0..2^53-1, 0), snapshot_every (>= 1).
Config parse(const Params& p);

struct State {
  qtt::Mps u, v;
  qtt::Mps p;  // the last pressure, the warm start of the next projection
};

qtt::Grid grid(const Config& c);
double spacing(const Config& c);  // 2π / 2^n_bits
// Initial data (projected: discretely divergence-free):
//   taylor_green        u = sin x cos y, v = -cos x sin y
//   shear_layer         u = tanh((y - π/2) / δ) for y <= π, tanh((3π/2 - y) / δ) above, δ = π/15;
//                       v = 0.05 sin x
//   decaying_turbulence the velocity of a random stream function: 32 Fourier modes with
//                       |k| in [1, 8], amplitude ~ |k|^-2, phases from `seed`
State initial_state(const Config& c);

class Stepper {
 public:
  explicit Stepper(const Config& c);
  void step(State& s) const;            // one SSP-RK3 step of size c.dt
  void project(State& s) const;         // u -= ∇p with D·∇p = D·u
  double kinetic_energy(const State& s) const;  // ½ Σ (u² + v²) h²
  // ||D·u|| / ||∇u|| (Frobenius over the grid, central differences).
  double divergence_ratio(const State& s) const;
  qtt::Mps vorticity(const State& s) const;    // D_x v - D_y u
 private:
  struct Terms {
    qtt::Mps adv_x, adv_y, lap;  // u ∂_x w, v ∂_y w, Δ_h w for one component w
  };
  void rhs(const qtt::Mps& u, const qtt::Mps& v, Terms& tu, Terms& tv) const;
  // a0 w0 + a1 w1 + dt (-(adv_x + adv_y) + ν lap), rounded once.
  qtt::Mps stage(double a0, const qtt::Mps& w0, double a1, const qtt::Mps* w1, double dt, const Terms& t) const;
  Config c_;
  qtt::Mpo dx_, dy_, lap_, pressure_;
  SvdOptions round_;
};

// Fields u, v, vorticity as trains over the interleaved layout of [2^n, 2^n] (arrays [x, y]);
// stats: steps, t, kinetic_energy, divergence (divergence_ratio at the end), max_rank.
Output solve(const Config& c, const Hooks& hooks);

}  // namespace tts::sim::navier_stokes
