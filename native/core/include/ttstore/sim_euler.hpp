// euler_2d: the compressible Euler equations (γ = 1.4) by finite volumes on a uniform grid of cell
// averages: WENO5 reconstruction in characteristic variables, HLLC fluxes, SSP-RK3 (Shu-Osher) with
// CFL-limited steps (CONTRACT.md section 6). Arrays are indexed [x, y], C order.
// The lower-level API here takes any grid (rectangular, small), for tests and benchmarks; the
// registered solver builds the 2^n_bits square grid of the contract from params.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ttstore/sim.hpp"

namespace tts::sim::euler {

inline constexpr double kGamma = 1.4;

enum class Problem { IsentropicVortex, SodX, RiemannConfig3, KelvinHelmholtz };
enum class Boundary { Periodic, Transmissive };
// Characteristic: each interface projects its 6-cell stencil onto the eigenvectors of the Roe
// average of its two cells and reconstructs the four wave amplitudes (the default: no oscillations
// at shocks, see euler_2d.cpp). Componentwise: reconstructs ρ, ρu, ρv, E directly (cheaper, for
// comparison).
enum class Reconstruction { Characteristic, Componentwise };

struct Grid {
  int64_t nx = 0, ny = 0;  // cells; each >= 3 (WENO5 needs 3 ghost cells a side)
  double lx = 1, ly = 1;   // domain [0, lx] x [0, ly]; cell centres x_i = (i + 1/2) lx / nx
  Boundary bc = Boundary::Periodic;
  double dx() const { return lx / static_cast<double>(nx); }
  double dy() const { return ly / static_cast<double>(ny); }
};

// The problem's domain and boundaries on an nx x ny grid (CONTRACT.md: L = 10 for the vortex, 1
// otherwise): isentropic_vortex [0,10]² periodic, sod_x and riemann_config3 [0,1]² transmissive,
// kelvin_helmholtz [0,1]² periodic.
Grid problem_grid(Problem p, int64_t nx, int64_t ny);
double default_t_end(Problem p);  // 1, 0.2, 0.3, 1

// Primitive state (ρ, u, v, p) of a problem at a point and time: the exact solution for the vortex
// (the initial vortex carried by the free stream, periodic images folded in) and for Sod (exact
// Riemann solution along x, Toro ch. 4); the initial data (t ignored) for the others.
struct Primitive {
  double rho, u, v, p;
};
Primitive problem_state(Problem p, double x, double y, double t, uint64_t seed);

// Conserved cell averages (ρ, ρu, ρv, E) at time t, each nx * ny, C order [x, y].
struct State {
  Grid grid;
  std::vector<double> rho, mx, my, E;
  double t = 0;
};

// Cell averages of problem_state by 3 x 3 Gauss-Legendre quadrature, summed in an order that is
// symmetric under x <-> y (so a problem symmetric about the diagonal starts exactly symmetric).
State cell_averages(Problem p, const Grid& g, double t, uint64_t seed);

// The time stepper: holds the state in ghost-padded work arrays (three copies for SSP-RK3).
class Stepper {
 public:
  Stepper(const State& initial, Reconstruction r = Reconstruction::Characteristic);
  ~Stepper();
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;

  // dt = cfl / max over cells of ((|u| + c) / dx + (|v| + c) / dy). Throws Diverged when a cell
  // holds a non-positive density or pressure or a non-finite value.
  double stable_dt(double cfl) const;
  // One SSP-RK3 step of length dt. `poll` is called between blocks of rows (it may throw, e.g.
  // Cancelled; the state is then unusable).
  void step(double dt, const std::function<void()>& poll = {});

  double t() const;
  State state() const;                // unpadded copy
  std::vector<Field> fields() const;  // rho, u, v, p, each [nx, ny]
  // Σ over cells of each conserved variable times the cell area (ρ: mass).
  double total(int component) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct Config {
  int n_bits = 9;
  Problem problem = Problem::IsentropicVortex;
  double t_end = 0;   // > 0: run to this time (the last step shortened to land on it)
  int64_t steps = 0;  // > 0: run exactly this many CFL-limited steps instead
  double cfl = 0.4;
  uint64_t seed = 0;  // kelvin_helmholtz only
  int64_t snapshot_every = 0;
  Reconstruction reconstruction = Reconstruction::Characteristic;
};

// The params and their ranges (the HTTP limits, n_bits 9..13): n_bits, problem, t_end (default per
// problem) or steps, not both, cfl, seed, snapshot_every (with steps: at least steps /
// kMaxSnapshots; a run to t_end takes at most kMaxSnapshots).
const std::vector<ParamSpec>& params();
// Params -> Config; throws InvalidArgument naming the param.
Config parse(const Params& p);

// Fields rho, u, v, p ([2^n, 2^n]: ρ is the cell average, u, v, p come from the averages of the
// conserved variables); stats: steps, t, mass (Σ ρ dx dy), energy (Σ E dx dy), min_rho, min_p.
// Progress: done = steps taken, total = steps, or with t_end an estimate from the last dt.
Output solve(const Config& c, const Hooks& hooks);

}  // namespace tts::sim::euler
