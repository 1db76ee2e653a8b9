// navier_stokes_2d: incompressible flow in the periodic box [0, 2π)², velocity (u, v) held as QTT
// on the interleaved grid from start to end (CONTRACT.md section 6). Central differences (rank 3
// MPOs) for the advection (u·∇)u and the 5-point Laplacian (rank 5) for ν Δu, ν = 1 / reynolds,
// advanced by SSP-RK3 with the velocity projected onto the discretely divergence-free fields after
// every stage. The projection is exact in QTT: D·∇ (the wide Laplacian, diagonal in Fourier modes)
// has a pseudo-inverse that is a periodic convolution, an MPO built once from an exponential sum of
// heat kernels (qtt::periodic_green), and the state is kept as a stream function (State below), so
// D·u = 0 holds to round-off whatever the truncation. Every product and sum is rounded to `tol`
// (or to the noise floor that tol sets, for derivatives) with ranks capped at max_rank.
// The lower-level API here takes any n_bits >= 3, for tests on small grids.
#pragma once

#include <cstdint>
#include <functional>

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
  // Rounding of the state and of every operation (not a param) at 512² and coarser; finer grids
  // round at tol (h / h_512)² (rounding() below). The divergence does not depend on it (the state
  // is a stream function). The shear layer at 512² reached max_rank 64 within 3 steps
  // at 1e-9 (10-25 s a step on 2 cores) before apply corrected capped zip-ups (issue #7; not
  // measured since); at 1e-7 ψ reaches it at step ~55 of 100 (before: ~20).
  double tol = 1e-9;
  int64_t snapshot_every = 0;
};

// The params and their ranges (the HTTP limits, n_bits 9..12): n_bits, reynolds, steps, dt
// required (dt within the grid's stability limit, max_dt below); max_rank, initial, seed,
// snapshot_every (at least steps / kMaxSnapshots).
const std::vector<ParamSpec>& params();
// Params -> Config; throws InvalidArgument naming the param.
Config parse(const Params& p);

// The velocity in stream-function form, u = D_y ψ + hu, v = -D_x ψ + hv: discretely divergence-free
// whatever ψ's rounding. hu, hv hold the velocity's part in the four Fourier modes where the
// central difference D vanishes (the parity-class constants, the mean flow among them).
struct State {
  qtt::Mps psi;     // rank <= max_rank
  qtt::Mps hu, hv;  // rank <= 4
};

// The largest dt for which a run of c is stable (the dt check of parse): SSP-RK3's region holds
// every Fourier mode of the linear advection-diffusion at the initial speeds, at 80% of the limit.
double max_dt(const Config& c);

qtt::Grid grid(const Config& c);
// The tolerance c's grid rounds at: c.tol up to 512², c.tol (h / h_512)² on finer grids (not below
// 1e-12, the accuracy of G's kernel, unless c.tol is). Every derivative of the velocity magnifies
// the state's rounding noise by up to 1/h, so a tolerance fixed across grids lets that noise grow
// 4x a level relative to the fields: at 4096² the noise floor of D u was 4e-4 of D u, Taylor-Green's
// divergence ended at 5e-8 of its gradient and a step took 20x a step at 512² (with the scaled
// tolerance: 2e-12 and 2.7-2.9x, bench:qtt).
double rounding(const Config& c);
double spacing(const Config& c);  // 2π / 2^n_bits
// Initial data (projected: the divergence-free part of):
//   taylor_green        u = sin x cos y, v = -cos x sin y
//   shear_layer         u = tanh((y - π/2) / δ) for y <= π, tanh((3π/2 - y) / δ) above, δ = π/15;
//                       v = 0.05 sin x (Bell, Colella and Glaz's thick layer on [0, 2π)²: 17 points
//                       per δ at 512², rank ~10 at t = 0 and ~35 at t = 1 to 1e-6 in the dense
//                       reference)
//   decaying_turbulence the velocity of a random stream function: 32 Fourier modes with
//                       |k| in [1, 8], amplitude ~ |k|^-2, phases from `seed`
State initial_state(const Config& c);

class Stepper {
 public:
  explicit Stepper(const Config& c);
  // One SSP-RK3 step of size c.dt; `poll` is called several times within each stage (it may
  // throw, e.g. Cancelled; s is then unchanged).
  void step(State& s, const std::function<void()>& poll = {}) const;
  // The divergence-free part of (u, v) (the projection u - D p with D·∇p = D·u), as a state.
  State project(const qtt::Mps& u, const qtt::Mps& v) const;
  // (D_y ψ + hu, -D_x ψ + hv) rounded to tol / 100, uncapped (ranks up to 3 rank(ψ) + 4), or to `o`.
  void velocity(const State& s, qtt::Mps& u, qtt::Mps& v) const;
  void velocity(const State& s, qtt::Mps& u, qtt::Mps& v, const SvdOptions& o) const;
  double kinetic_energy(const State& s) const;  // ½ Σ (u² + v²) h²
  // ||D·u|| / ||∇u|| (Frobenius over the grid, central differences).
  double divergence_ratio(const State& s) const;
  qtt::Mps vorticity(const State& s) const;  // D_x v - D_y u
 private:
  // P F(u): the projected right-hand side, in state form; `poll` between its costliest parts.
  State tendency(const State& s, const std::function<void()>& poll) const;
  // a0 s0 + a1 s1 + b k, each part rounded once.
  State combine(double a0, const State& s0, double a1, const State* s1, double b, const State& k) const;
  double noise(const State& s) const;  // the velocity error a rounding of ψ can make
  Config c_;
  qtt::Mpo dx_, dy_, lap_;
  qtt::Mpo inverse_;   // (-D·∇)^+, a convolution
  qtt::Mpo harmonic_;  // Π: onto the modes where D vanishes
  SvdOptions round_;
};

// Fields u, v, vorticity as trains over the interleaved layout of [2^n, 2^n] (arrays [x, y]);
// stats: steps, t, kinetic_energy, divergence (divergence_ratio at the end), max_rank.
Output solve(const Config& c, const Hooks& hooks);

}  // namespace tts::sim::navier_stokes
