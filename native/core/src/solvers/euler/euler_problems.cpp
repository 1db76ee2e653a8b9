// euler_2d problems: domains, point states (exact where there is an exact solution) and cell
// averages.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "solvers/sim_random.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/sim_euler.hpp"

namespace tts::sim::euler {

namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- the exact Riemann problem (Toro, Riemann Solvers and Numerical Methods, ch. 4) -------------

struct Side {
  double rho, u, p;
  double c() const { return std::sqrt(kGamma * p / rho); }
};

// f_K(p) and its derivative: the velocity jump across the K wave for star pressure p.
void wave(const Side& s, double p, double& f, double& df) {
  const double c = s.c();
  if (p > s.p) {  // shock
    const double A = 2 / ((kGamma + 1) * s.rho), B = (kGamma - 1) / (kGamma + 1) * s.p;
    const double q = std::sqrt(A / (p + B));
    f = (p - s.p) * q;
    df = q * (1 - 0.5 * (p - s.p) / (B + p));
  } else {  // rarefaction
    const double e = (kGamma - 1) / (2 * kGamma);
    f = 2 * c / (kGamma - 1) * (std::pow(p / s.p, e) - 1);
    df = 1 / (s.rho * c) * std::pow(p / s.p, -(kGamma + 1) / (2 * kGamma));
  }
}

// Star pressure and velocity by Newton's method from the two-rarefaction guess.
void star(const Side& L, const Side& R, double& ps, double& us) {
  const double e = (kGamma - 1) / (2 * kGamma);
  double p = std::pow(
      (L.c() + R.c() - 0.5 * (kGamma - 1) * (R.u - L.u)) / (L.c() / std::pow(L.p, e) + R.c() / std::pow(R.p, e)),
      1 / e);
  for (int it = 0; it < 100; ++it) {
    double fl, dl, fr, dr;
    wave(L, p, fl, dl);
    wave(R, p, fr, dr);
    const double next = std::fmax(p - (fl + fr + R.u - L.u) / (dl + dr), 1e-14);
    const bool done = std::fabs(next - p) <= 1e-15 * (next + p);
    p = next;
    if (done) break;
  }
  double fl, dl, fr, dr;
  wave(L, p, fl, dl);
  wave(R, p, fr, dr);
  ps = p;
  us = 0.5 * (L.u + R.u) + 0.5 * (fr - fl);
}

// The solution at speed s = x / t (Toro's sampling, section 4.5).
Side sample(const Side& L, const Side& R, double ps, double us, double s) {
  const double g = kGamma, g1 = (g - 1) / (g + 1);
  if (s <= us) {
    const double cl = L.c();
    if (ps > L.p) {
      const double SL = L.u - cl * std::sqrt((g + 1) / (2 * g) * ps / L.p + (g - 1) / (2 * g));
      if (s <= SL) return L;
      return {L.rho * (ps / L.p + g1) / (g1 * ps / L.p + 1), us, ps};
    }
    const double cs = cl * std::pow(ps / L.p, (g - 1) / (2 * g));
    if (s <= L.u - cl) return L;
    if (s > us - cs) return {L.rho * std::pow(ps / L.p, 1 / g), us, ps};
    const double k = 2 / (g + 1) + g1 / cl * (L.u - s);
    return {L.rho * std::pow(k, 2 / (g - 1)), 2 / (g + 1) * (cl + (g - 1) / 2 * L.u + s),
            L.p * std::pow(k, 2 * g / (g - 1))};
  }
  const double cr = R.c();
  if (ps > R.p) {
    const double SR = R.u + cr * std::sqrt((g + 1) / (2 * g) * ps / R.p + (g - 1) / (2 * g));
    if (s >= SR) return R;
    return {R.rho * (ps / R.p + g1) / (g1 * ps / R.p + 1), us, ps};
  }
  const double cs = cr * std::pow(ps / R.p, (g - 1) / (2 * g));
  if (s >= R.u + cr) return R;
  if (s < us + cs) return {R.rho * std::pow(ps / R.p, 1 / g), us, ps};
  const double k = 2 / (g + 1) - g1 / cr * (R.u - s);
  return {R.rho * std::pow(k, 2 / (g - 1)), 2 / (g + 1) * (-cr + (g - 1) / 2 * R.u + s),
          R.p * std::pow(k, 2 * g / (g - 1))};
}

const Side kSodLeft{1.0, 0.0, 1.0}, kSodRight{0.125, 0.0, 0.1};

Primitive sod(double x, double t) {
  static const auto star_state = [] {
    double ps, us;
    star(kSodLeft, kSodRight, ps, us);
    return std::pair<double, double>(ps, us);
  }();
  if (t <= 0) return x < 0.5 ? Primitive{1.0, 0.0, 0.0, 1.0} : Primitive{0.125, 0.0, 0.0, 0.1};
  const Side s = sample(kSodLeft, kSodRight, star_state.first, star_state.second, (x - 0.5) / t);
  return {s.rho, s.u, 0.0, s.p};
}

// Yee, Sandham & Djomehri's isentropic vortex: strength 5, unit core, carried by the free stream
// (1, 1, 1, 1) from (5, 5); the nearest periodic image of the centre.
Primitive vortex(double x, double y, double t) {
  constexpr double beta = 5.0, L = 10.0;
  auto fold = [&](double d) { return d - L * std::floor(d / L + 0.5); };
  const double dx = fold(x - (5.0 + t)), dy = fold(y - (5.0 + t));
  const double r2 = dx * dx + dy * dy;
  const double e = std::exp(0.5 * (1 - r2));
  const double du = -beta / (2 * kPi) * e * dy, dv = beta / (2 * kPi) * e * dx;
  const double T = 1 - (kGamma - 1) * beta * beta / (8 * kGamma * kPi * kPi) * e * e;
  const double rho = std::pow(T, 1 / (kGamma - 1));
  return {rho, 1 + du, 1 + dv, rho * T};
}

// Lax & Liu's configuration 3 (four shocks), quadrants split at (0.8, 0.8) as in Liska & Wendroff
// (2003), so that the jet that runs towards the lower left corner stays inside [0,1]² until t = 0.3.
Primitive config3(double x, double y) {
  const bool right = x > 0.8, top = y > 0.8;
  if (right && top) return {1.5, 0.0, 0.0, 1.5};
  if (!right && top) return {0.5323, 1.206, 0.0, 0.3};
  if (!right && !top) return {0.138, 1.206, 1.206, 0.029};
  return {0.5323, 0.0, 1.206, 0.3};
}

// Two shear layers (y = 1/4 and 3/4) between a dense strip moving right and light fluid moving
// left, their vertical velocity perturbed by four Fourier modes with seeded amplitudes and phases.
Primitive kelvin_helmholtz(double x, double y, uint64_t seed) {
  double a[4], phi[4];
  detail::SplitMix64 rng(seed);
  for (int k = 0; k < 4; ++k) {
    a[k] = rng.uniform(0.5, 1.0);
    phi[k] = rng.uniform(0.0, 2 * kPi);
  }
  const bool inside = std::fabs(y - 0.5) < 0.25;
  constexpr double s = 0.05;
  const double env =
      std::exp(-(y - 0.25) * (y - 0.25) / (2 * s * s)) + std::exp(-(y - 0.75) * (y - 0.75) / (2 * s * s));
  double v = 0;
  for (int k = 0; k < 4; ++k) v += a[k] * std::sin(2 * kPi * (k + 1) * x + phi[k]);
  return {inside ? 2.0 : 1.0, inside ? 0.5 : -0.5, 0.01 * v * env, 2.5};
}

}  // namespace

Grid problem_grid(Problem p, int64_t nx, int64_t ny) {
  Grid g;
  g.nx = nx;
  g.ny = ny;
  switch (p) {
    case Problem::IsentropicVortex:
      g.lx = g.ly = 10.0;
      g.bc = Boundary::Periodic;
      break;
    case Problem::SodX:
    case Problem::RiemannConfig3: g.bc = Boundary::Transmissive; break;
    case Problem::KelvinHelmholtz: g.bc = Boundary::Periodic; break;
  }
  return g;
}

double default_t_end(Problem p) {
  switch (p) {
    case Problem::SodX: return 0.2;
    case Problem::RiemannConfig3: return 0.3;
    default: return 1.0;
  }
}

Primitive problem_state(Problem p, double x, double y, double t, uint64_t seed) {
  switch (p) {
    case Problem::IsentropicVortex: return vortex(x, y, t);
    case Problem::SodX: return sod(x, t);
    case Problem::RiemannConfig3: return config3(x, y);
    case Problem::KelvinHelmholtz: return kelvin_helmholtz(x, y, seed);
  }
  throw std::logic_error("unknown problem");
}

State cell_averages(Problem p, const Grid& g, double t, uint64_t seed) {
  if (g.nx < 1 || g.ny < 1) throw InvalidArgument("euler_2d: empty grid");
  State s;
  s.grid = g;
  s.t = t;
  const int64_t n = g.nx * g.ny;
  for (std::vector<double>* v : {&s.rho, &s.mx, &s.my, &s.E}) *v = tts::detail::zeros_in_pieces(n);
  // 3-point Gauss-Legendre on [-1/2, 1/2] (weights summing to 1).
  const double xi[3] = {-0.5 * std::sqrt(0.6), 0.0, 0.5 * std::sqrt(0.6)};
  const double w[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  const double dx = g.dx(), dy = g.dy();
  // Nine states a cell (kelvin_helmholtz: a few transcendentals each): pieces of 2^17 cells keep a
  // piece a fraction of a second even on a loaded host.
  tts::detail::in_pieces(g.nx, tts::detail::rows_per_piece(g.ny, int64_t{1} << 17), [&](int64_t lo, int64_t hi) {
#pragma omp parallel for schedule(static) num_threads(tts::detail::threads())
    for (int64_t i = lo; i < hi; ++i) {
      for (int64_t j = 0; j < g.ny; ++j) {
        double U[3][3][4];
        for (int a = 0; a < 3; ++a) {
          for (int b = 0; b < 3; ++b) {
            const Primitive q = problem_state(p, (i + 0.5 + xi[a]) * dx, (j + 0.5 + xi[b]) * dy, t, seed);
            U[a][b][0] = q.rho;
            U[a][b][1] = q.rho * q.u;
            U[a][b][2] = q.rho * q.v;
            U[a][b][3] = q.p / (kGamma - 1) + 0.5 * q.rho * (q.u * q.u + q.v * q.v);
          }
        }
        double avg[4];
        for (int c = 0; c < 4; ++c) {
          // Pairs (a, b) and (b, a) are added first: the same sum, in the same order, for the cell
          // mirrored about the diagonal.
          double sum = 0;
          for (int a = 0; a < 3; ++a) {
            sum += w[a] * w[a] * U[a][a][c];
            for (int b = a + 1; b < 3; ++b) sum += w[a] * w[b] * (U[a][b][c] + U[b][a][c]);
          }
          avg[c] = sum;
        }
        const int64_t k = i * g.ny + j;
        s.rho[k] = avg[0];
        s.mx[k] = avg[1];
        s.my[k] = avg[2];
        s.E[k] = avg[3];
      }
    }
  });
  return s;
}

}  // namespace tts::sim::euler
