// navier_stokes_2d: incompressible flow advanced in QTT (see sim_navier_stokes.hpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "sim_params.hpp"
#include "sim_random.hpp"
#include "sim_registry.hpp"
#include "ttstore/sim_navier_stokes.hpp"

namespace tts::sim::navier_stokes {

namespace {

constexpr double kPi = 3.14159265358979323846;
const std::vector<std::string> kInitial = {"taylor_green", "shear_layer", "decaying_turbulence"};
// Divergence left by a projection, relative to ||∇u|| (10x below what the tests ask).
constexpr double kDivergence = 1e-7;

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

}  // namespace

Config parse(const Params& p) {
  detail::ParamReader r("navier_stokes_2d", p,
                        {"n_bits", "reynolds", "steps", "dt", "max_rank", "initial", "seed", "snapshot_every"});
  Config c;
  c.n_bits = static_cast<int>(r.integer("n_bits", 9, 12, std::nullopt));
  c.reynolds = r.number("reynolds", 0.0, 1e12, true, std::nullopt);
  c.steps = r.integer("steps", 1, 1000000, std::nullopt);
  c.dt = r.number("dt", 0.0, 1e6, true, std::nullopt);
  c.max_rank = r.integer("max_rank", 1, 4096, 64);
  const std::string init = r.choice("initial", kInitial);
  c.initial = init == "shear_layer" ? Initial::ShearLayer
              : init == "decaying_turbulence" ? Initial::DecayingTurbulence
                                              : Initial::TaylorGreen;
  c.seed = static_cast<uint64_t>(r.integer("seed", 0, detail::kMaxExactInteger, 0));
  c.snapshot_every = r.integer("snapshot_every", 1, detail::kMaxExactInteger, 0);
  return c;
}

qtt::Grid grid(const Config& c) { return qtt::Grid{2, c.n_bits}; }
double spacing(const Config& c) { return 2 * kPi / std::ldexp(1.0, c.n_bits); }

Stepper::Stepper(const Config& c) : c_(c) {
  const qtt::Grid g = grid(c);
  const double h = spacing(c);
  dx_ = qtt::derivative(g, qtt::Boundary::Periodic, 0, h);
  dy_ = qtt::derivative(g, qtt::Boundary::Periodic, 1, h);
  lap_ = qtt::laplacian(g, qtt::Boundary::Periodic, h);
  // -D·∇ is SPD on the complement of the parity classes; adding their projector (eigenvalue 1, the
  // scale of -D·∇'s smallest non-zero eigenvalue sin²h / h² ~ 1) makes it SPD and well scaled. The
  // right-hand sides D·u sum to zero on every class, so the solution does not change.
  pressure_ = qtt::combine(-1.0, qtt::wide_laplacian(g, qtt::Boundary::Periodic, h), 1.0, qtt::parity_projector(g));
  round_.tol = c.tol;
  round_.max_rank = c.max_rank;
}

void Stepper::rhs(const qtt::Mps& u, const qtt::Mps& v, Terms& tu, Terms& tv) const {
  for (int comp = 0; comp < 2; ++comp) {
    const qtt::Mps& w = comp == 0 ? u : v;
    Terms& t = comp == 0 ? tu : tv;
    const qtt::Mps wx = qtt::apply(dx_, w, round_), wy = qtt::apply(dy_, w, round_);
    t.adv_x = qtt::hadamard(u, wx, round_);
    t.adv_y = qtt::hadamard(v, wy, round_);
    t.lap = qtt::apply(lap_, w, round_);
  }
}

qtt::Mps Stepper::stage(double a0, const qtt::Mps& w0, double a1, const qtt::Mps* w1, double dt,
                        const Terms& t) const {
  // One rounding for the whole stage, relative to the velocity: rounding the right-hand side on its
  // own would keep its noise (the Laplacian amplifies u's rounding noise by 1/h²) at the full
  // relative precision, and its ranks with it, though dt ν Δu scales it far below tol ||u||.
  std::vector<double> c{a0, -dt, -dt, dt / c_.reynolds};
  std::vector<const qtt::Mps*> x{&w0, &t.adv_x, &t.adv_y, &t.lap};
  if (w1) {
    c.push_back(a1);
    x.push_back(w1);
  }
  return qtt::combine(c, x, round_);
}

void Stepper::project(State& s) const {
  const qtt::Mps ux = qtt::apply(dx_, s.u, round_), vy = qtt::apply(dy_, s.v, round_);
  SvdOptions exact = round_;
  exact.tol = c_.tol * 1e-2;
  const qtt::Mps div = qtt::combine({-1.0, -1.0}, {&ux, &vy}, exact);  // the rhs of -D·∇p = -D·u
  // Already divergence-free to far below the tolerance (Taylor-Green, a shear layer at t = 0): a
  // solve against round-off noise would only build ranks.
  // The scale of the velocity gradients, ||∇u||, against which the divergence left is measured.
  const double uy = norm(qtt::apply(dy_, s.u, round_)), vx = norm(qtt::apply(dx_, s.v, round_));
  const double nux = norm(ux), nvy = norm(vy);
  const double scale = std::sqrt(nux * nux + nvy * nvy + uy * uy + vx * vx), dn = norm(div);
  if (dn <= 1e-3 * c_.tol * scale) return;
  if (s.p.d() == 0) s.p = div;
  qtt::SolveOptions o;
  // What matters is the divergence left, D·u* - D·∇p (the residual), against the velocity
  // gradients: kDivergence of them. Relative to ||D·u*||, itself O(dt) small, that is a loose
  // target; a tighter one would make p chase the rounding noise of u (amplified 1/h by D) and
  // cost ranks, as the system's condition number grows as 4^n_bits.
  o.tol = std::min(1e-2, std::max(1e-12, kDivergence * scale / dn));
  o.max_rank = c_.max_rank;
  o.max_sweeps = 10;
  // The part of D·u* below the target is left alone: it is u's rounding noise amplified by D, of
  // full rank, and chasing it would fill p (and then u) with ranks to no purpose.
  SvdOptions rhs_round;
  rhs_round.tol = 0.5 * o.tol;
  rhs_round.max_rank = c_.max_rank;
  qtt::solve_spd(pressure_, round(div, rhs_round), s.p, o);
  const qtt::Mps px = qtt::apply(dx_, s.p, round_), py = qtt::apply(dy_, s.p, round_);
  s.u = qtt::combine({1.0, -1.0}, {&s.u, &px}, round_);
  s.v = qtt::combine({1.0, -1.0}, {&s.v, &py}, round_);
}

void Stepper::step(State& s) const {
  const double dt = c_.dt;
  Terms tu, tv;
  // SSP-RK3 (Shu-Osher), projected after every stage.
  rhs(s.u, s.v, tu, tv);
  State s1{stage(1.0, s.u, 0.0, nullptr, dt, tu), stage(1.0, s.v, 0.0, nullptr, dt, tv), s.p};
  project(s1);
  rhs(s1.u, s1.v, tu, tv);
  State s2{stage(0.25, s1.u, 0.75, &s.u, 0.25 * dt, tu), stage(0.25, s1.v, 0.75, &s.v, 0.25 * dt, tv), s1.p};
  project(s2);
  rhs(s2.u, s2.v, tu, tv);
  s.u = stage(2.0 / 3, s2.u, 1.0 / 3, &s.u, 2.0 / 3 * dt, tu);
  s.v = stage(2.0 / 3, s2.v, 1.0 / 3, &s.v, 2.0 / 3 * dt, tv);
  s.p = s2.p;
  project(s);
}

double Stepper::kinetic_energy(const State& s) const {
  const double h = spacing(c_);
  return 0.5 * (dot(s.u, s.u) + dot(s.v, s.v)) * h * h;
}

double Stepper::divergence_ratio(const State& s) const {
  SvdOptions exact;
  exact.tol = 1e-14;
  const qtt::Mps ux = qtt::apply(dx_, s.u, exact), uy = qtt::apply(dy_, s.u, exact);
  const qtt::Mps vx = qtt::apply(dx_, s.v, exact), vy = qtt::apply(dy_, s.v, exact);
  const qtt::Mps div = qtt::combine({1.0, 1.0}, {&ux, &vy}, exact);
  const double grad = std::sqrt(dot(ux, ux) + dot(uy, uy) + dot(vx, vx) + dot(vy, vy));
  return grad > 0 ? norm(div) / grad : 0.0;
}

qtt::Mps Stepper::vorticity(const State& s) const {
  const qtt::Mps vx = qtt::apply(dx_, s.v, round_), uy = qtt::apply(dy_, s.u, round_);
  return qtt::combine({1.0, -1.0}, {&vx, &uy}, round_);
}

State initial_state(const Config& c) {
  const qtt::Grid g = grid(c);
  const double sep_tol = 1e-13;
  SvdOptions o;
  o.tol = c.tol;
  o.max_rank = c.max_rank;
  State s;
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
      detail::SplitMix64 rng(c.seed);
      std::vector<qtt::Mps> terms;
      std::vector<double> cu, cv;
      for (int m = 0; m < 32; ++m) {
        int kx = 0, ky = 0;
        double kk = 0;
        do {
          kx = static_cast<int>(std::floor(rng.uniform(-8, 9)));
          ky = static_cast<int>(std::floor(rng.uniform(0, 9)));
          kk = std::sqrt(static_cast<double>(kx * kx + ky * ky));
        } while (kk < 1 || kk > 8);
        const double a = 1.0 / (kk * kk), ph = rng.uniform(0, 2 * kPi);
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
  Stepper(c).project(s);  // the continuous field is divergence-free; make the discrete one so
  return s;
}

Output solve(const Config& c, const Hooks& hooks) {
  if (c.n_bits < 3 || c.n_bits > 20) throw InvalidArgument("navier_stokes_2d: n_bits must be in 3..20");
  const detail::Reporter report(hooks);
  const Stepper st(c);
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
    f[0].tt = x.u;
    f[1].tt = x.v;
    f[2].tt = st.vorticity(x);
    return f;
  };
  report.progress(0, c.steps);
  for (int64_t n = 1; n <= c.steps; ++n) {
    report.poll();
    st.step(s);
    const double e = st.kinetic_energy(s);
    if (!std::isfinite(e) || e > 1e6 * (e0 + 1e-300)) {
      throw Diverged("navier_stokes_2d: the flow blew up at step " + std::to_string(n) + " (dt too large for the grid)");
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
  out.stats["max_rank"] = static_cast<double>(std::max(s.u.max_rank(), s.v.max_rank()));
  return out;
}

namespace {

class NavierStokes2d final : public Solver {
 public:
  std::string name() const override { return "navier_stokes_2d"; }
  void validate(const Params& p) const override { (void)parse(p); }
  Output run(const Params& p, const Hooks& hooks) const override { return solve(parse(p), hooks); }
};

}  // namespace

}  // namespace tts::sim::navier_stokes

namespace tts::sim::detail {
std::unique_ptr<Solver> make_navier_stokes_2d() { return std::make_unique<navier_stokes::NavierStokes2d>(); }
}  // namespace tts::sim::detail
