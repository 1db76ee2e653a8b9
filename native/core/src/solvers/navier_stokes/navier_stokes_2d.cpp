// navier_stokes_2d: incompressible flow advanced in QTT (see sim_navier_stokes.hpp).
#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "solvers/sim_params.hpp"
#include "solvers/sim_random.hpp"
#include "solvers/sim_registry.hpp"
#include "ttstore/sim_navier_stokes.hpp"

namespace tts::sim::navier_stokes {

namespace {

constexpr double kPi = 3.14159265358979323846;
const std::vector<std::string> kInitial = {"taylor_green", "shear_layer", "decaying_turbulence"};

std::vector<double> axis_values(const Config& c, double (*f)(double, double, double), double a, double b) {
  const int64_t n = int64_t{1} << c.n_bits;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = f(static_cast<double>(i) * spacing(c), a, b);
  return v;
}
double f_sin(double x, double k, double ph) { return std::sin(k * x + ph); }
double f_cos(double x, double k, double ph) { return std::cos(k * x + ph); }
double f_one(double, double, double) { return 1.0; }
double f_shear(double y, double delta, double) {
  return y <= kPi ? std::tanh((y - kPi / 2) / delta) : std::tanh((3 * kPi / 2 - y) / delta);
}

// The range of reynolds: below it ν dt would have to be tiny beyond use; above it ν is below the
// scheme's own dissipation. max_rank: a step's products cost O(r^4) per core, so the cap bounds a
// step's time.
constexpr double kMinReynolds = 1e-3;
constexpr double kMaxReynolds = 1e12;
constexpr double kMaxRank = 128;

// The decaying_turbulence stream function ψ = Σ a cos(kx x + ky y + φ): 32 waves with |k| in
// [1, 8], a = |k|^-2, phases from the seed.
struct Wave {
  int kx, ky;
  double a, ph;
};
std::vector<Wave> turbulence_waves(uint64_t seed) {
  detail::SplitMix64 rng(seed);
  std::vector<Wave> waves;
  for (int m = 0; m < 32; ++m) {
    int kx = 0, ky = 0;
    double kk = 0;
    do {
      kx = static_cast<int>(std::floor(rng.uniform(-8, 9)));
      ky = static_cast<int>(std::floor(rng.uniform(0, 9)));
      kk = std::sqrt(static_cast<double>(kx * kx + ky * ky));
    } while (kk < 1 || kk > 8);
    const double a = 1.0 / (kk * kk), ph = rng.uniform(0, 2 * kPi);
    waves.push_back({kx, ky, a, ph});
  }
  return waves;
}

// A bound on max(|u| + |v|) of the initial velocity: exact for Taylor-Green (|sin(x ± y)| <= 1) and
// the shear layer (1 + 0.05); for the turbulence, the largest over a 64² grid of the normalised
// field (exact mean: the waves have |k| <= 8) plus 10% for the peaks between the points.
double speed_bound(const Config& c) {
  switch (c.initial) {
    case Initial::TaylorGreen: return 1.0;
    case Initial::ShearLayer: return 1.05;
    case Initial::DecayingTurbulence: break;
  }
  const std::vector<Wave> waves = turbulence_waves(c.seed);
  constexpr int n = 64;
  std::vector<double> u(n * n, 0.0), v(n * n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double x = 2 * kPi * i / n, y = 2 * kPi * j / n;
      for (const Wave& w : waves) {
        const double sn = std::sin(w.kx * x + w.ky * y + w.ph);
        u[i * n + j] -= w.a * w.ky * sn;
        v[i * n + j] += w.a * w.kx * sn;
      }
    }
  }
  double energy = 0, peak = 0;
  for (int k = 0; k < n * n; ++k) {
    energy += u[k] * u[k] + v[k] * v[k];
    peak = std::max(peak, std::fabs(u[k]) + std::fabs(v[k]));
  }
  const double e = std::sqrt(0.5 * energy / (n * n));
  return 1.1 * peak / e;
}

// SSP-RK3 amplifies a mode of eigenvalue λ by R(dt λ), R(z) = 1 + z + z²/2 + z³/6.
bool rk3_stable(std::complex<double> z) {
  const std::complex<double> r = 1.0 + z * (1.0 + z * (0.5 + z / 6.0));
  return std::abs(r) <= 1.0 + 1e-12;
}

}  // namespace

double max_dt(const Config& c) {
  // Frozen coefficients: the Fourier mode (θx, θy) of the central advection and the 5-point
  // viscous term has eigenvalue -4ν/h² (sin²(θx/2) + sin²(θy/2)) + i (u sin θx + v sin θy) / h,
  // whose imaginary part is at most W max(sin θx, sin θy) / h for W = max(|u| + |v|). dt is the
  // largest for which 1.25 dt λ stays in SSP-RK3's region for every mode on a 33² grid of angles.
  const double h = spacing(c), nu = 1.0 / c.reynolds, w = speed_bound(c);
  constexpr int kAngles = 33;
  auto stable = [&](double dt) {
    for (int a = 0; a < kAngles; ++a) {
      for (int b = 0; b <= a; ++b) {
        const double tx = kPi * a / (kAngles - 1), ty = kPi * b / (kAngles - 1);
        const double sx = std::sin(tx / 2), sy = std::sin(ty / 2);
        const std::complex<double> lambda(-4 * nu / (h * h) * (sx * sx + sy * sy),
                                          w * std::max(std::sin(tx), std::sin(ty)) / h);
        if (!rk3_stable(1.25 * dt * lambda)) return false;
      }
    }
    return true;
  };
  double lo = 0, hi = 1;
  if (stable(hi)) return hi;
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (lo + hi);
    (stable(mid) ? lo : hi) = mid;
  }
  return lo;
}

const std::vector<ParamSpec>& params() {
  static const std::vector<ParamSpec> table = [] {
    std::vector<ParamSpec> t = {
        detail::required_integer("n_bits", 9, 12, "log2 of the grid points per axis: 9 (512) to 12 (4096)."),
        detail::required_number("reynolds", kMinReynolds, false, kMaxReynolds, false,
                                "Reynolds number (ν = 1 / reynolds)."),
        detail::required_integer("steps", 1, static_cast<double>(kMaxSteps), "Time steps."),
        detail::required_number("dt", 0, true, 1, false,
                                "Time step; at most the explicit stability limit of the grid (the 400 names it): "
                                "SSP-RK3 stable for every Fourier mode of the advection-diffusion at the initial "
                                "speeds and reynolds, at 80% of that limit."),
        detail::integer_param("max_rank", 1, kMaxRank, 64.0, "Rank cap of the QTT fields."),
        detail::choice_param("initial", kInitial, "The initial velocity (docs/simulations.md describes each)."),
    };
    detail::add_common_params(t);
    return t;
  }();
  return table;
}

Config parse(const Params& p) {
  detail::ParamReader r("navier_stokes_2d", p, params());
  Config c;
  c.n_bits = static_cast<int>(r.integer("n_bits"));
  c.reynolds = r.number("reynolds");
  c.steps = r.integer("steps");
  c.dt = r.number("dt");
  c.max_rank = r.integer("max_rank");
  const std::string init = r.choice("initial");
  c.initial = init == "shear_layer"           ? Initial::ShearLayer
              : init == "decaying_turbulence" ? Initial::DecayingTurbulence
                                              : Initial::TaylorGreen;
  c.seed = static_cast<uint64_t>(r.integer("seed"));
  c.snapshot_every = r.snapshot_every(c.steps, "steps");
  const double limit = max_dt(c);
  if (c.dt > limit) {
    std::ostringstream what;
    what.precision(4);
    what << "at most " << limit << " for n_bits " << c.n_bits << ", reynolds " << c.reynolds << " and initial " << init
         << " (the explicit stability limit of the grid)";
    r.fail("dt", what.str());
  }
  return c;
}

qtt::Grid grid(const Config& c) { return qtt::Grid{2, c.n_bits}; }
double spacing(const Config& c) { return 2 * kPi / std::ldexp(1.0, c.n_bits); }

namespace {

// The kernel of (-D·∇)^+ for one grid, built once per process and n_bits (about a second at 512²;
// every Stepper of that size shares it). The build polls (a run is cancelled or paused inside it),
// so it is made outside the lock and published only once complete: a run stopped half-way leaves
// nothing behind, and no run waits on another's build, which may be paused for a whole turn. Runs
// of one size that start together may each build it; the first to finish is kept.
std::shared_ptr<const qtt::Mps> inverse_kernel(const Config& c) {
  static std::mutex mu;
  static std::map<int, std::shared_ptr<const qtt::Mps>> cache;
  {
    const std::lock_guard<std::mutex> lock(mu);
    const auto it = cache.find(c.n_bits);
    if (it != cache.end()) return it->second;
  }
  // 1e-12: the projection of an exactly divergence-free field (Taylor-Green) returns it to 1e-12.
  auto built = std::make_shared<const qtt::Mps>(qtt::periodic_green(grid(c), spacing(c), 2, 1e-12));
  const std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(c.n_bits, std::move(built)).first->second;
}

}  // namespace

double rounding(const Config& c) {
  if (c.n_bits <= 9) return c.tol;
  return std::max(std::min(c.tol, 1e-12), std::ldexp(c.tol, -2 * (c.n_bits - 9)));
}

Stepper::Stepper(const Config& c) : c_(c) {
  c_.tol = rounding(c);
  const qtt::Grid g = grid(c);
  const double h = spacing(c);
  dx_ = qtt::derivative(g, qtt::Boundary::Periodic, 0, h);
  dy_ = qtt::derivative(g, qtt::Boundary::Periodic, 1, h);
  lap_ = qtt::laplacian(g, qtt::Boundary::Periodic, h);
  // D·∇ is the wide Laplacian (stride 2h), diagonal in Fourier modes: its exact pseudo-inverse is a
  // periodic convolution, an MPO of rank 4 rank(kernel) (about 150) applied in one zip-up.
  inverse_ = qtt::convolution(g, *inverse_kernel(c));
  harmonic_ = qtt::parity_projector(g);
  round_.tol = c_.tol;
  round_.max_rank = c.max_rank;
}

double Stepper::noise(const State& s) const {
  // ||(u, v)||² = ||D ψ||² + ||h||² (the parts are orthogonal), and ||D ψ|| is bounded by what the
  // stored u would be; taking it from ψ's rounding tolerance: tol ||ψ|| / h is the velocity error a
  // rounding of ψ can make, the floor every intermediate is rounded to.
  return c_.tol * (norm(s.psi) / spacing(c_) + norm(s.hu) + norm(s.hv));
}

State Stepper::project(const qtt::Mps& u, const qtt::Mps& v) const {
  const double eps = c_.tol * std::sqrt(dot(u, u) + dot(v, v));
  const double h = spacing(c_);
  // The discrete Helmholtz decomposition: u = D p + D^⊥ ψ + h, D^⊥ ψ = (D_y ψ, -D_x ψ), h in the
  // four modes where D vanishes (the parity-class constants, h = Π u). The projection keeps
  // D^⊥ ψ + h with -D·∇ ψ = D_x v - D_y u: the same field as u - D p with D·∇ p = D·u, kept as ψ,
  // so that no rounding of the state can put divergence back (D_x D_y = D_y D_x exactly).
  const qtt::Mps vx = qtt::round_to(qtt::apply(dx_, v, round_), eps / h, c_.max_rank);
  const qtt::Mps uy = qtt::round_to(qtt::apply(dy_, u, round_), eps / h, c_.max_rank);
  const qtt::Mps w = qtt::round_to(qtt::combine({1.0, -1.0}, {&vx, &uy}, round_), eps / h, c_.max_rank);
  State s;
  s.psi = qtt::apply(inverse_, w, round_);
  s.hu = qtt::apply(harmonic_, u, round_);
  s.hv = qtt::apply(harmonic_, v, round_);
  return s;
}

void Stepper::velocity(const State& s, qtt::Mps& u, qtt::Mps& v, const SvdOptions& o) const {
  const qtt::Mps py = qtt::apply(dy_, s.psi, o), px = qtt::apply(dx_, s.psi, o);
  u = qtt::combine({1.0, 1.0}, {&py, &s.hu}, o);
  v = qtt::combine({-1.0, 1.0}, {&px, &s.hv}, o);
}

void Stepper::velocity(const State& s, qtt::Mps& u, qtt::Mps& v) const {
  // 100x below tol and uncapped: the divergence this rounding adds, at most 0.01 tol ||u|| √2 / h,
  // stays far below 1e-6 ||∇u||.
  SvdOptions fine;
  fine.tol = 1e-2 * c_.tol;
  velocity(s, u, v, fine);
}

State Stepper::tendency(const State& s, const std::function<void()>& poll) const {
  // The projected right-hand side P F(u), F = -(u·D) u + ν Δ_h u, in state form: (G curl F, Π F).
  // The viscous part is taken in that form directly: Δ_h commutes with D, G and Π (all circulant),
  // and curl u = -D·∇ ψ, so G curl(ν Δ_h u) = ν Δ_h ψ and Π ν Δ_h u = ν Δ_h (hu, hv) (ψ has no part
  // in the null space of D·∇: it is G's result). Only the advection goes through the products, the
  // curl and G. Before, ν Δ_h u went with them, rounded to the velocity's noise floor magnified by
  // 1/h², at 4096² a floor of 14% of ν Δ_h u; for Taylor-Green (whose advection is a gradient)
  // ν Δ_h u is all of the curl, and G's input carried ranks 17-28 (14-15 now): a Taylor-Green step
  // at 4096² took 3.0-4.1 s, now 1.0-1.8 s (same build and run, a loaded 2-core host).
  //
  // Every advective term is kept only as accurate as the velocity's own rounding noise eps makes
  // meaningful: a derivative magnifies that noise up to 1/h, so rounding D u to tol relative to
  // itself would keep the magnified noise, of full rank, and the products would then saturate
  // max_rank.
  const double h = spacing(c_), eps = noise(s), viscosity = 1.0 / c_.reynolds;
  qtt::Mps u, v;
  velocity(s, u, v, round_);
  const double nu = norm(u), nv = norm(v), speed = std::sqrt(nu * nu + nv * nv);
  qtt::Mps f[2];
  for (int comp = 0; comp < 2; ++comp) {
    const qtt::Mps& w = comp == 0 ? u : v;
    const qtt::Mps wx = qtt::round_to(qtt::apply(dx_, w, round_), eps / h, c_.max_rank);
    const qtt::Mps wy = qtt::round_to(qtt::apply(dy_, w, round_), eps / h, c_.max_rank);
    // a ⊙ D w to what D w's error allows: |a| (about ||a|| / side, the rms) times eps / h, taken
    // relative to the product's norm, about ||a|| ||D w|| / side.
    auto product = [&](const qtt::Mps& a, double na, const qtt::Mps& b) {
      SvdOptions o = round_;
      const double nb = norm(b);
      if (na > 0 && nb > 0) o.tol = std::min(1e-2, std::max(c_.tol, speed * eps / (h * na * nb)));
      return qtt::hadamard(a, b, o);
    };
    const qtt::Mps ax = product(u, nu, wx), ay = product(v, nv, wy);
    f[comp] = qtt::combine({-1.0, -1.0}, {&ax, &ay}, round_);
    if (poll) poll();
  }
  const qtt::Mps fvx = qtt::apply(dx_, f[1], round_), fuy = qtt::apply(dy_, f[0], round_);
  // The curl of an F that is nearly a gradient cancels to a small part of its terms: rounded
  // relative to itself it would keep their noise; to eps (G does not amplify, λ_min ~ 1) it need not.
  SvdOptions curl_round = round_;
  const double terms = norm(fvx) + norm(fuy);
  if (terms > 0) curl_round.tol = std::min(1e-2, std::max(c_.tol, eps / terms));
  const qtt::Mps curl = qtt::combine({1.0, -1.0}, {&fvx, &fuy}, curl_round);
  State k;
  // ||G curl|| <= ||curl|| / λ_min and λ_min ~ 1 on [0, 2π)², so eps / ||curl|| relative to the
  // result keeps its error under eps; the zip-up truncates at that tolerance too, which is what keeps
  // its carried rank (up to rank(G) rank(curl)) from making this the costliest product of the step.
  SvdOptions inv = round_;
  const double cn = norm(curl);
  if (cn > 0) inv.tol = std::min(1e-2, std::max(c_.tol, eps / cn));
  if (poll) poll();
  const qtt::Mps adv = qtt::apply(inverse_, curl, inv);
  if (poll) poll();
  // Δ_h ψ to ψ's rounding noise magnified by the Laplacian (tol ||ψ|| / h²), as the derivatives of
  // the velocity are to eps / h.
  const qtt::Mps visc = qtt::round_to(qtt::apply(lap_, s.psi, round_), c_.tol * norm(s.psi) / (h * h), c_.max_rank);
  k.psi = qtt::combine({1.0, viscosity}, {&adv, &visc}, round_);
  const qtt::Mps lhu = qtt::apply(lap_, s.hu, round_), lhv = qtt::apply(lap_, s.hv, round_);
  const qtt::Mps pu = qtt::apply(harmonic_, f[0], round_), pv = qtt::apply(harmonic_, f[1], round_);
  k.hu = qtt::combine({1.0, viscosity}, {&pu, &lhu}, round_);
  k.hv = qtt::combine({1.0, viscosity}, {&pv, &lhv}, round_);
  return k;
}

State Stepper::combine(double a0, const State& s0, double a1, const State* s1, double b, const State& k) const {
  auto one = [&](const qtt::Mps State::*m) {
    std::vector<double> c{a0, b};
    std::vector<const qtt::Mps*> x{&(s0.*m), &(k.*m)};
    if (s1) {
      c.push_back(a1);
      x.push_back(&(s1->*m));
    }
    return qtt::combine(c, x, round_);
  };
  return State{one(&State::psi), one(&State::hu), one(&State::hv)};
}

void Stepper::step(State& s, const std::function<void()>& poll) const {
  const double dt = c_.dt;
  // SSP-RK3 (Shu-Osher) on the projected equation: every stage is divergence-free by construction,
  // as the velocity scheme projected after each stage would make it.
  const State s1 = combine(1.0, s, 0.0, nullptr, dt, tendency(s, poll));
  const State s2 = combine(0.75, s, 0.25, &s1, 0.25 * dt, tendency(s1, poll));
  s = combine(1.0 / 3, s, 2.0 / 3, &s2, 2.0 / 3 * dt, tendency(s2, poll));
}

double Stepper::kinetic_energy(const State& s) const {
  const double h = spacing(c_);
  qtt::Mps u, v;
  velocity(s, u, v);
  return 0.5 * (dot(u, u) + dot(v, v)) * h * h;
}

double Stepper::divergence_ratio(const State& s) const {
  qtt::Mps u, v;
  velocity(s, u, v);
  SvdOptions exact;
  exact.tol = 1e-14;
  const qtt::Mps ux = qtt::apply(dx_, u, exact), uy = qtt::apply(dy_, u, exact);
  const qtt::Mps vx = qtt::apply(dx_, v, exact), vy = qtt::apply(dy_, v, exact);
  const qtt::Mps div = qtt::combine({1.0, 1.0}, {&ux, &vy}, exact);
  const double grad = std::sqrt(dot(ux, ux) + dot(uy, uy) + dot(vx, vx) + dot(vy, vy));
  return grad > 0 ? norm(div) / grad : 0.0;
}

qtt::Mps Stepper::vorticity(const State& s) const {
  // D_x v - D_y u = -D·∇ ψ (h is constant on the parity classes, which D maps to zero).
  qtt::Mps u, v;
  velocity(s, u, v);
  SvdOptions fine;
  fine.tol = 1e-12;
  const qtt::Mps vx = qtt::apply(dx_, v, fine), uy = qtt::apply(dy_, u, fine);
  return qtt::combine({1.0, -1.0}, {&vx, &uy}, round_);
}

State initial_state(const Config& c) {
  const qtt::Grid g = grid(c);
  const double sep_tol = 1e-13;
  SvdOptions o;
  o.tol = rounding(c);
  o.max_rank = c.max_rank;
  struct {
    qtt::Mps u, v;
  } s;
  switch (c.initial) {
    case Initial::TaylorGreen: {
      const qtt::Mps u = qtt::separable(g, {axis_values(c, f_sin, 1, 0), axis_values(c, f_cos, 1, 0)}, sep_tol);
      const qtt::Mps v = qtt::separable(g, {axis_values(c, f_cos, 1, 0), axis_values(c, f_sin, 1, 0)}, sep_tol);
      s.u = u;
      s.v = qtt::combine({-1.0}, {&v}, o);
      break;
    }
    case Initial::ShearLayer:
      s.u = qtt::separable(g, {axis_values(c, f_one, 0, 0), axis_values(c, f_shear, kPi / 15, 0)}, sep_tol);
      s.v = qtt::separable(g, {axis_values(c, f_sin, 1, 0), axis_values(c, f_one, 0, 0)}, sep_tol);
      s.v = qtt::combine({0.05}, {&s.v}, o);
      break;
    case Initial::DecayingTurbulence: {
      // ψ = Σ a cos(kx x + ky y + φ); u = ψ_y, v = -ψ_x, each sin(kx x + φ + ky y) split into
      // sin(kx x + φ) cos(ky y) + cos(kx x + φ) sin(ky y).
      std::vector<qtt::Mps> terms;
      std::vector<double> cu, cv;
      for (const Wave& w : turbulence_waves(c.seed)) {
        const int kx = w.kx, ky = w.ky;
        const double a = w.a, ph = w.ph;
        terms.push_back(qtt::separable(g, {axis_values(c, f_sin, kx, ph), axis_values(c, f_cos, ky, 0)}, sep_tol));
        terms.push_back(qtt::separable(g, {axis_values(c, f_cos, kx, ph), axis_values(c, f_sin, ky, 0)}, sep_tol));
        // u = ψ_y = -a ky sin(θ), v = -ψ_x = a kx sin(θ)
        cu.insert(cu.end(), {-a * ky, -a * ky});
        cv.insert(cv.end(), {a * kx, a * kx});
      }
      std::vector<const qtt::Mps*> ptr;
      for (const auto& t : terms) ptr.push_back(&t);
      s.u = qtt::combine(cu, ptr, o);
      s.v = qtt::combine(cv, ptr, o);
      // Unit kinetic energy density: max speed of order 1.
      const double e = std::sqrt(0.5 * (dot(s.u, s.u) + dot(s.v, s.v)) / std::ldexp(1.0, 2 * c.n_bits));
      s.u = qtt::combine({1 / e}, {&s.u}, o);
      s.v = qtt::combine({1 / e}, {&s.v}, o);
      break;
    }
  }
  // The continuous field is divergence-free; its discrete projection is the state.
  return Stepper(c).project(s.u, s.v);
}

Output solve(const Config& c, const Hooks& hooks) {
  if (c.n_bits < 3 || c.n_bits > 20) throw InvalidArgument("navier_stokes_2d: n_bits must be in 3..20");
  const detail::Reporter report(hooks);
  const Stepper st(c);
  report.poll();
  State s = initial_state(c);
  const double e0 = st.kinetic_energy(s);
  const std::vector<int64_t> shape = grid(c).shape();
  auto fields = [&](const State& x) {
    std::vector<Field> f(3);
    const char* names[3] = {"u", "v", "vorticity"};
    for (int i = 0; i < 3; ++i) {
      f[i].name = names[i];
      f[i].shape = shape;
    }
    st.velocity(x, f[0].tt, f[1].tt);
    f[2].tt = st.vorticity(x);
    return f;
  };
  report.progress(0, c.steps);
  const std::function<void()> poll = [&] { report.poll(); };
  for (int64_t n = 1; n <= c.steps; ++n) {
    report.poll();
    st.step(s, poll);
    const double e = st.kinetic_energy(s);
    if (!std::isfinite(e) || e > 1e6 * (e0 + 1e-300)) {
      throw Diverged("navier_stokes_2d: the flow blew up at step " + std::to_string(n) +
                     " (dt too large for the grid)");
    }
    report.progress(n, c.steps);
    if (c.snapshot_every > 0 && report.wants_snapshots() && n % c.snapshot_every == 0) {
      report.snapshot(n, static_cast<double>(n) * c.dt, fields(s));
    }
  }
  Output out;
  out.fields = fields(s);
  out.stats["steps"] = static_cast<double>(c.steps);
  out.stats["t"] = static_cast<double>(c.steps) * c.dt;
  out.stats["kinetic_energy"] = st.kinetic_energy(s);
  out.stats["divergence"] = st.divergence_ratio(s);
  out.stats["max_rank"] = static_cast<double>(s.psi.max_rank());
  return out;
}

namespace {

class NavierStokes2d final : public Solver {
 public:
  std::string name() const override { return "navier_stokes_2d"; }
  const std::vector<ParamSpec>& params() const override { return navier_stokes::params(); }
  void validate(const Params& p) const override { (void)parse(p); }
  Output run(const Params& p, const Hooks& hooks) const override { return solve(parse(p), hooks); }
};

}  // namespace

}  // namespace tts::sim::navier_stokes

namespace tts::sim::detail {
std::unique_ptr<Solver> make_navier_stokes_2d() { return std::make_unique<navier_stokes::NavierStokes2d>(); }
}  // namespace tts::sim::detail
