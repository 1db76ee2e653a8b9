// euler_2d: SSP-RK3 stepping of the finite-volume scheme (fluxes in euler_flux.hpp) and the solver.
//
// Characteristic-wise reconstruction is the default. Measured (native/tests/test_euler.cpp and
// docs/readme/solvers.md): on smooth flow both give the same fifth-order error, but across the
// shocks of Sod and of configuration 3 the componentwise variant leaves over- and undershoots
// (spurious extrema) that the characteristic one does not, at about 1.4x the cost of a flux.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "solvers/euler/euler_flux.hpp"
#include "solvers/sim_params.hpp"
#include "solvers/sim_registry.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/sim_euler.hpp"

namespace tts::sim::euler {

namespace {

constexpr int64_t kGhost = 3;
// Rows per block between two polls of `cancelled`: about half a million cells a block, so that a
// block of a stage at 8192² is a fraction of a second even on a loaded host.
int64_t rows_per_block(int64_t ny) { return std::max<int64_t>(64, (int64_t{1} << 19) / std::max<int64_t>(ny, 1)); }

// Face states of a row of interfaces, (ρ, ρu, ρv, E) on each side.
struct FaceRow {
  double* L[4];
  double* R[4];
};

// Cell-average -> point value (and back, with the opposite sign) along a line: u = ū - Δ²ū / 24 is
// fourth-order accurate (Buchmüller & Helzel 2014). One-dimensional WENO5 gives face *averages*;
// evaluating the flux at them would make the scheme second order in 2-D, so the states go to the face
// centre first and the flux back to a face average after.
constexpr double k24 = 1.0 / 24.0;

// P = S0 - Δ²S / 24 per face, from the rows (or columns) before, at and after; where that leaves a
// non-positive density or pressure, the face average itself.
void to_points(const FaceRow& a, const FaceRow& b, const FaceRow& c, int64_t ao, int64_t bo, int64_t co,
               const FaceRow& p, int64_t count) {
  for (int side = 0; side < 2; ++side) {
    const double* const* A = side ? a.R : a.L;
    const double* const* B = side ? b.R : b.L;
    const double* const* C = side ? c.R : c.L;
    double* const* P = side ? p.R : p.L;
    const double *a0 = A[0] + ao, *a1 = A[1] + ao, *a2 = A[2] + ao, *a3 = A[3] + ao;
    const double *b0 = B[0] + bo, *b1 = B[1] + bo, *b2 = B[2] + bo, *b3 = B[3] + bo;
    const double *c0 = C[0] + co, *c1 = C[1] + co, *c2 = C[2] + co, *c3 = C[3] + co;
    double *p0 = P[0], *p1 = P[1], *p2 = P[2], *p3 = P[3];
#pragma omp simd
    for (int64_t m = 0; m < count; ++m) {
      const double r = b0[m] - (a0[m] - 2 * b0[m] + c0[m]) * k24;
      const double u = b1[m] - (a1[m] - 2 * b1[m] + c1[m]) * k24;
      const double v = b2[m] - (a2[m] - 2 * b2[m] + c2[m]) * k24;
      const double e = b3[m] - (a3[m] - 2 * b3[m] + c3[m]) * k24;
      const bool ok = r > 0 && kernel::pressure(r, u, v, e) > 0;
      p0[m] = ok ? r : b0[m];
      p1[m] = ok ? u : b1[m];
      p2[m] = ok ? v : b2[m];
      p3[m] = ok ? e : b3[m];
    }
  }
}

// F = F0 + Δ²F / 24: point fluxes at face centres -> face averages.
void to_averages(const double* const* a, const double* const* b, const double* const* c, int64_t ao, int64_t bo,
                 int64_t co, double* const* f, int64_t count) {
  for (int k = 0; k < 4; ++k) {
    const double *x = a[k] + ao, *y = b[k] + bo, *z = c[k] + co;
    double* o = f[k];
#pragma omp simd
    for (int64_t m = 0; m < count; ++m) o[m] = y[m] + (x[m] - 2 * y[m] + z[m]) * k24;
  }
}

}  // namespace

struct Stepper::Impl {
  Grid g;
  bool characteristic = true;
  int64_t stride = 0;           // padded row length ny + 6
  std::vector<double> U[3][4];  // state, stage 1, stage 2; each (nx + 6) x (ny + 6)
  double t = 0;

  int64_t at(int64_t i, int64_t j) const { return (i + kGhost) * stride + (j + kGhost); }

  // Ghost columns of the interior rows, then whole ghost rows (corners included: the transverse
  // corrections reach them).
  void fill_ghosts(int set) {
    const int64_t nx = g.nx, ny = g.ny;
    const bool periodic = g.bc == Boundary::Periodic;
    for (int c = 0; c < 4; ++c) {
      double* u = U[set][c].data();
      for (int64_t i = 0; i < nx; ++i) {
        double* row = u + at(i, 0);
        for (int64_t k = 1; k <= kGhost; ++k) {
          row[-k] = row[periodic ? ny - k : 0];
          row[ny - 1 + k] = row[periodic ? k - 1 : ny - 1];
        }
      }
      for (int64_t k = 1; k <= kGhost; ++k) {
        const double* lo = u + at(periodic ? nx - k : 0, -kGhost);
        const double* hi = u + at(periodic ? k - 1 : nx - 1, -kGhost);
        std::copy(lo, lo + stride, u + at(-k, -kGhost));
        std::copy(hi, hi + stride, u + at(nx - 1 + k, -kGhost));
      }
    }
  }

  // out = alpha U0 + beta (in + dt L(in)), L the flux divergence.
  void stage(int in, int out, double alpha, double beta, double dt, const std::function<void()>& poll) {
    fill_ghosts(in);
    const int64_t nx = g.nx, ny = g.ny, block = rows_per_block(ny);
    const double idx = 1.0 / g.dx(), idy = 1.0 / g.dy();
    const double* src[4];
    double* dst[4];
    const double* u0[4];
    for (int c = 0; c < 4; ++c) {
      src[c] = U[in][c].data();
      dst[c] = U[out][c].data();
      u0[c] = U[0][c].data();
    }
    // x faces of one row of interfaces: states at columns -2..ny+1, points and fluxes at -1..ny,
    // averages at 0..ny-1. y faces of a row of cells: j - 1/2 for j = 0..ny.
    const int64_t wx = ny + 4, wy = ny + 1;
    for (int64_t b0 = 0; b0 < nx; b0 += block) {
      if (poll) poll();
      const int64_t b1 = std::min(nx, b0 + block);
#pragma omp parallel num_threads(tts::detail::threads())
      {
        const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        const int64_t rows = b1 - b0, lo = b0 + rows * id / nt, hi = b0 + rows * (id + 1) / nt;
        if (lo < hi) {
          std::vector<double> buf(
              static_cast<std::size_t>(8 * wx + 8 * wx + 4 * wx + 8 * ny + 5 * 8 * wy + 8 * wy + 3 * 4 * wy + 4 * wy));
          double* next = buf.data();
          auto take = [&](int64_t n) {
            double* p = next;
            next += n;
            return p;
          };
          auto face_row = [&](int64_t n) {
            FaceRow f;
            for (int c = 0; c < 4; ++c) f.L[c] = take(n);
            for (int c = 0; c < 4; ++c) f.R[c] = take(n);
            return f;
          };
          auto flux_row = [&](int64_t n, double** f) {
            for (int c = 0; c < 4; ++c) f[c] = take(n);
          };
          const FaceRow xs = face_row(wx), xp = face_row(wx);
          double* xm[4];
          double* fa[4];
          double* fb[4];
          flux_row(wx, xm);
          flux_row(ny, fa);
          flux_row(ny, fb);
          FaceRow ys[5];
          for (FaceRow& r : ys) r = face_row(wy);
          const FaceRow yp = face_row(wy);
          double* ym[3][4];
          for (auto& r : ym) flux_row(wy, r);
          double* gy[4];
          flux_row(wy, gy);
          auto ring = [](int64_t r, int64_t n) { return static_cast<int>(((r % n) + n) % n); };

          auto x_faces = [&](int64_t i, double* const* f) {  // the interfaces between rows i and i + 1
            kernel::Line line{{}, stride, wx, 1};
            for (int c = 0; c < 4; ++c) line.cell[c] = src[c] + at(i, -2);
            kernel::line_states(line, characteristic, xs.L, xs.R);
            to_points(xs, xs, xs, 0, 1, 2, xp, ny + 2);
            kernel::line_hllc(xp.L, xp.R, 1, ny + 2, xm);
            to_averages(xm, xm, xm, 0, 1, 2, f, ny);
          };
          auto y_states = [&](int64_t r) {
            kernel::Line line{{}, 1, wy, 2};
            for (int c = 0; c < 4; ++c) line.cell[c] = src[c] + at(r, -1);
            kernel::line_states(line, characteristic, ys[ring(r, 5)].L, ys[ring(r, 5)].R);
          };
          auto y_fluxes = [&](int64_t r) {
            to_points(ys[ring(r - 1, 5)], ys[ring(r, 5)], ys[ring(r + 1, 5)], 0, 0, 0, yp, wy);
            kernel::line_hllc(yp.L, yp.R, 2, wy, ym[ring(r, 3)]);
          };

          for (int64_t r = lo - 2; r <= lo + 1; ++r) y_states(r);
          y_fluxes(lo - 1);
          y_fluxes(lo);
          x_faces(lo - 1, fa);
          for (int64_t i = lo; i < hi; ++i) {
            x_faces(i, fb);
            y_states(i + 2);
            y_fluxes(i + 1);
            to_averages(ym[ring(i - 1, 3)], ym[ring(i, 3)], ym[ring(i + 1, 3)], 0, 0, 0, gy, wy);
            for (int c = 0; c < 4; ++c) {
              const double* s = src[c] + at(i, 0);
              const double* z = u0[c] + at(i, 0);
              double* d = dst[c] + at(i, 0);
              const double *A = fa[c], *B = fb[c], *G = gy[c];
              if (alpha == 0.0) {
                for (int64_t j = 0; j < ny; ++j) {
                  const double du = -(B[j] - A[j]) * idx - (G[j + 1] - G[j]) * idy;
                  d[j] = beta * (s[j] + dt * du);
                }
              } else {
                for (int64_t j = 0; j < ny; ++j) {
                  const double du = -(B[j] - A[j]) * idx - (G[j + 1] - G[j]) * idy;
                  d[j] = alpha * z[j] + beta * (s[j] + dt * du);
                }
              }
            }
            std::swap(fa, fb);
          }
        }
      }
    }
  }
};

Stepper::Stepper(const State& s, Reconstruction r) : impl_(std::make_unique<Impl>()) {
  const Grid& g = s.grid;
  if (g.nx < kGhost || g.ny < kGhost) throw InvalidArgument("euler_2d: the grid needs at least 3 x 3 cells");
  const int64_t n = g.nx * g.ny;
  if (static_cast<int64_t>(s.rho.size()) != n || static_cast<int64_t>(s.mx.size()) != n ||
      static_cast<int64_t>(s.my.size()) != n || static_cast<int64_t>(s.E.size()) != n) {
    throw InvalidArgument("euler_2d: state arrays do not match the grid");
  }
  Impl& m = *impl_;
  m.g = g;
  m.characteristic = r == Reconstruction::Characteristic;
  m.stride = g.ny + 2 * kGhost;
  m.t = s.t;
  const int64_t padded = (g.nx + 2 * kGhost) * m.stride;
  const std::vector<double>* from[4] = {&s.rho, &s.mx, &s.my, &s.E};
  for (int set = 0; set < 3; ++set) {
    for (int c = 0; c < 4; ++c) m.U[set][c] = tts::detail::zeros_in_pieces(padded);
  }
  for (int c = 0; c < 4; ++c) {
    tts::detail::in_pieces(
        g.nx, tts::detail::rows_per_piece(g.ny, tts::detail::kPiecePoints), [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) {
            std::copy(from[c]->begin() + i * g.ny, from[c]->begin() + (i + 1) * g.ny, m.U[0][c].begin() + m.at(i, 0));
          }
        });
  }
}

Stepper::~Stepper() = default;

double Stepper::t() const { return impl_->t; }

double Stepper::stable_dt(double cfl) const {
  const Impl& m = *impl_;
  const double idx = 1.0 / m.g.dx(), idy = 1.0 / m.g.dy();
  const double *r = m.U[0][0].data(), *u = m.U[0][1].data(), *v = m.U[0][2].data(), *e = m.U[0][3].data();
  double speed = 0;
  int64_t bad = 0;
  tts::detail::in_pieces(m.g.nx, rows_per_block(m.g.ny), [&](int64_t lo, int64_t hi) {
    double piece_speed = 0;
    int64_t piece_bad = 0;
#pragma omp parallel for schedule(static) reduction(max : piece_speed) reduction(+ : piece_bad) num_threads(tts::detail::threads())
    for (int64_t i = lo; i < hi; ++i) {
      for (int64_t j = 0; j < m.g.ny; ++j) {
        const int64_t k = m.at(i, j);
        const double p = kernel::pressure(r[k], u[k], v[k], e[k]);
        const bool ok = r[k] > 0 && p > 0 && std::isfinite(e[k]) && std::isfinite(u[k]) && std::isfinite(v[k]);
        if (!ok) {
          ++piece_bad;
          continue;
        }
        const double c = std::sqrt(kGamma * p / r[k]);
        piece_speed = std::max(piece_speed, (std::fabs(u[k] / r[k]) + c) * idx + (std::fabs(v[k] / r[k]) + c) * idy);
      }
    }
    speed = std::max(speed, piece_speed);
    bad += piece_bad;
  });
  if (bad > 0) {
    throw Diverged("euler_2d: " + std::to_string(bad) + " cell(s) lost a positive density or pressure at t = " +
                   std::to_string(m.t) + " (a smaller cfl may help)");
  }
  return cfl / speed;
}

void Stepper::step(double dt, const std::function<void()>& poll) {
  Impl& m = *impl_;
  m.stage(0, 1, 0.0, 1.0, dt, poll);
  m.stage(1, 2, 0.75, 0.25, dt, poll);
  m.stage(2, 0, 1.0 / 3.0, 2.0 / 3.0, dt, poll);
  m.t += dt;
}

State Stepper::state() const {
  const Impl& m = *impl_;
  State s;
  s.grid = m.g;
  s.t = m.t;
  std::vector<double>* to[4] = {&s.rho, &s.mx, &s.my, &s.E};
  for (int c = 0; c < 4; ++c) {
    to[c]->resize(m.g.nx * m.g.ny);
    for (int64_t i = 0; i < m.g.nx; ++i) {
      const double* row = m.U[0][c].data() + m.at(i, 0);
      std::copy(row, row + m.g.ny, to[c]->begin() + i * m.g.ny);
    }
  }
  return s;
}

std::vector<Field> Stepper::fields() const {
  const Impl& m = *impl_;
  const int64_t nx = m.g.nx, ny = m.g.ny;
  std::vector<Field> f;
  for (const char* name : {"rho", "u", "v", "p"})
    f.push_back(Field{name, {nx, ny}, tts::detail::zeros_in_pieces(nx * ny)});
  const double *r = m.U[0][0].data(), *u = m.U[0][1].data(), *v = m.U[0][2].data(), *e = m.U[0][3].data();
  tts::detail::in_pieces(nx, rows_per_block(ny), [&](int64_t lo, int64_t hi) {
#pragma omp parallel for schedule(static) num_threads(tts::detail::threads())
    for (int64_t i = lo; i < hi; ++i) {
      for (int64_t j = 0; j < ny; ++j) {
        const int64_t k = m.at(i, j), o = i * ny + j;
        f[0].data[o] = r[k];
        f[1].data[o] = u[k] / r[k];
        f[2].data[o] = v[k] / r[k];
        f[3].data[o] = kernel::pressure(r[k], u[k], v[k], e[k]);
      }
    }
  });
  return f;
}

double Stepper::total(int component) const {
  const Impl& m = *impl_;
  const double* u = m.U[0][component].data();
  double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s) num_threads(tts::detail::threads())
  for (int64_t i = 0; i < m.g.nx; ++i) {
    for (int64_t j = 0; j < m.g.ny; ++j) s += u[m.at(i, j)];
  }
  return s * m.g.dx() * m.g.dy();
}

// ---- the registered solver ------------------------------------------------------------------------

namespace {

const std::vector<std::string> kProblems = {"isentropic_vortex", "sod_x", "riemann_config3", "kelvin_helmholtz"};
constexpr double kMaxTEnd = 1e4;
constexpr double kMaxCfl = 1.0;
// The grid on which the initial wave speeds are sampled to bound the steps a t_end implies.
constexpr int64_t kProbeCells = 64;

// The time step of the first step on a grid of 2^n_bits cells a side: cfl over the largest
// (|u| + c) / dx + (|v| + c) / dy of the initial data, taken on a kProbeCells² grid (microseconds,
// no threads: it runs where params are checked) and scaled to the grid's dx.
double first_dt(const Config& c) {
  const State s = cell_averages(c.problem, problem_grid(c.problem, kProbeCells, kProbeCells), 0.0, c.seed);
  double speed = 0;
  for (std::size_t k = 0; k < s.rho.size(); ++k) {
    const double r = s.rho[k], u = s.mx[k] / r, v = s.my[k] / r;
    const double p = (kGamma - 1) * (s.E[k] - 0.5 * r * (u * u + v * v));
    const double a = std::sqrt(kGamma * p / r);
    speed = std::max(speed, (std::fabs(u) + a) / s.grid.dx() + (std::fabs(v) + a) / s.grid.dy());
  }
  return c.cfl / (speed * std::ldexp(1.0, c.n_bits) / static_cast<double>(kProbeCells));
}

}  // namespace

const std::vector<ParamSpec>& params() {
  static const std::vector<ParamSpec> table = [] {
    std::vector<ParamSpec> t = {
        detail::required_integer("n_bits", 9, 13, "log2 of the cells per axis: 9 (512) to 13 (8192)."),
        detail::choice_param("problem", kProblems, "The initial data (docs/simulations.md describes each)."),
        detail::number_param("t_end", 0, true, kMaxTEnd, false, std::nullopt,
                             "End time (default 1, sod_x 0.2, riemann_config3 0.3); give t_end or steps, not both."),
        detail::integer_param("steps", 1, static_cast<double>(kMaxSteps), std::nullopt,
                              "CFL-limited time steps; give t_end or steps, not both."),
        detail::number_param("cfl", 0, true, kMaxCfl, false, 0.4, "Courant number of each step."),
    };
    detail::add_common_params(t);
    return t;
  }();
  return table;
}

Config parse(const Params& p) {
  detail::ParamReader r("euler_2d", p, params());
  Config c;
  c.n_bits = static_cast<int>(r.integer("n_bits"));
  const std::string problem = r.choice("problem");
  c.problem = static_cast<Problem>(std::find(kProblems.begin(), kProblems.end(), problem) - kProblems.begin());
  if (r.has("t_end") && r.has("steps")) {
    throw InvalidArgument("params t_end and steps of euler_2d exclude each other; give one");
  }
  c.t_end = r.number("t_end", default_t_end(c.problem));
  c.steps = r.has("steps") ? r.integer("steps") : 0;
  c.cfl = r.number("cfl");
  c.seed = static_cast<uint64_t>(r.integer("seed"));
  // A run to t_end does not know its step count: it stops taking snapshots at kMaxSnapshots.
  c.snapshot_every = r.snapshot_every(c.steps, "steps");
  if (c.steps == 0) {
    // A run to t_end is held to the steps a run of steps may take, counted at the initial wave
    // speeds (a t_end of 1e6 would otherwise run for years, 5 CU and a time_limit later).
    const double dt = first_dt(c);
    if (c.t_end / dt > static_cast<double>(kMaxSteps)) {
      std::ostringstream what;
      what.precision(4);
      what << "at most " << static_cast<double>(kMaxSteps) * dt << " for n_bits " << c.n_bits << " and cfl " << c.cfl
           << " (about " << static_cast<double>(kMaxSteps) << " steps of " << dt << " at the initial wave speeds)";
      r.fail("t_end", what.str());
    }
  }
  return c;
}

Output solve(const Config& c, const Hooks& hooks) {
  if (c.n_bits < 2 || c.n_bits > 15) throw InvalidArgument("euler_2d: n_bits must be in 2..15");
  const detail::Reporter report(hooks);
  const int64_t n = int64_t{1} << c.n_bits;
  std::optional<Stepper> st;
  st.emplace(cell_averages(c.problem, problem_grid(c.problem, n, n), 0.0, c.seed), c.reconstruction);
  const double t_end =
      c.steps > 0 ? std::numeric_limits<double>::infinity() : (c.t_end > 0 ? c.t_end : default_t_end(c.problem));
  const std::function<void()> poll = [&] { report.poll(); };
  int64_t step = 0;
  // Stop when t_end is reached up to rounding (the last step is shortened to land on it).
  auto more = [&] { return c.steps > 0 ? step < c.steps : st->t() < t_end * (1 - 1e-14); };
  while (more()) {
    report.poll();
    double dt = st->stable_dt(c.cfl);
    if (st->t() + dt >= t_end) dt = t_end - st->t();
    st->step(dt, poll);
    ++step;
    if (c.snapshot_every > 0 && report.wants_snapshots() && step % c.snapshot_every == 0 &&
        step / c.snapshot_every <= kMaxSnapshots) {
      report.snapshot(step, st->t(), st->fields());
    }
    const int64_t total =
        c.steps > 0 ? c.steps : step + static_cast<int64_t>(std::ceil(std::max(0.0, t_end - st->t()) / dt));
    report.progress(step, more() ? std::max(total, step + 1) : step);
  }
  report.progress(step, step);
  (void)st->stable_dt(c.cfl);  // throws Diverged if the last step broke the state
  Output out;
  out.fields = st->fields();
  out.stats["steps"] = static_cast<double>(step);
  out.stats["t"] = st->t();
  out.stats["mass"] = st->total(0);
  out.stats["energy"] = st->total(3);
  double min_rho = std::numeric_limits<double>::infinity(), min_p = min_rho;
  for (double v : out.fields[0].data) min_rho = std::min(min_rho, v);
  for (double v : out.fields[3].data) min_p = std::min(min_p, v);
  out.stats["min_rho"] = min_rho;
  out.stats["min_p"] = min_p;
  return out;
}

namespace {

class Euler2d : public Solver {
 public:
  std::string name() const override { return "euler_2d"; }
  const std::vector<ParamSpec>& params() const override { return euler::params(); }
  void validate(const Params& p) const override { (void)parse(p); }
  Output run(const Params& p, const Hooks& hooks) const override { return solve(parse(p), hooks); }
};

}  // namespace

}  // namespace tts::sim::euler

namespace tts::sim::detail {
std::unique_ptr<Solver> make_euler_2d() { return std::make_unique<euler::Euler2d>(); }
}  // namespace tts::sim::detail
