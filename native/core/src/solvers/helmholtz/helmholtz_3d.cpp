// helmholtz_3d: implicit diffusion steps solved in QTT (see sim_helmholtz.hpp).
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "solvers/sim_params.hpp"
#include "solvers/sim_registry.hpp"
#include "ttstore/sim_helmholtz.hpp"

namespace tts::sim::helmholtz {

namespace {

constexpr double kPi = 3.14159265358979323846;

const std::vector<std::string> kBoundary = {"periodic", "dirichlet"};
const std::vector<std::string> kInitial = {"modes", "gaussian"};
const std::vector<std::string> kSource = {"none", "gaussian"};
constexpr std::size_t kMaxModes = 64;
constexpr double kMaxWaveNumber = 1e6;
// An amplitude far beyond any use, and far below where ||u|| over 2^42 points would overflow.
constexpr double kMaxAmplitude = 1e6;
// See Config::max_rank: a step's cost and memory grow as r^3 and r^2 per core.
constexpr double kMaxRank = 256;

ParamSpec list_param(std::string name, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamSpec::Type::List;
  s.max = static_cast<double>(kMaxModes);  // items
  s.doc = std::move(doc);
  return s;
}

// `modes` arrives as JSON text (the engine's params are scalars): [[kx, ky, kz, A], ...].
std::vector<std::array<double, 4>> parse_modes(const std::string& text) {
  auto bad = [&](const std::string& why) -> InvalidArgument {
    return InvalidArgument("param 'modes' for helmholtz_3d must be a list of [kx, ky, kz, amplitude] (" + why + ")");
  };
  std::vector<std::array<double, 4>> out;
  std::size_t i = 0;
  auto ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  auto expect = [&](char c) {
    ws();
    if (i >= text.size() || text[i] != c) throw bad(std::string("expected '") + c + "'");
    ++i;
  };
  expect('[');
  ws();
  if (i < text.size() && text[i] == ']') throw bad("empty list");
  while (true) {
    expect('[');
    std::array<double, 4> m{};
    for (int k = 0; k < 4; ++k) {
      if (k > 0) expect(',');
      ws();
      const char* start = text.c_str() + i;
      char* end = nullptr;
      m[k] = std::strtod(start, &end);
      if (end == start || !std::isfinite(m[k])) throw bad("a number is missing");
      i += static_cast<std::size_t>(end - start);
    }
    expect(']');
    for (int k = 0; k < 3; ++k) {
      if (!(m[k] >= 1 && m[k] == std::floor(m[k]) && m[k] <= kMaxWaveNumber)) {
        throw bad("wave numbers are integers in 1.." + std::to_string(static_cast<int64_t>(kMaxWaveNumber)));
      }
    }
    if (!(std::fabs(m[3]) <= kMaxAmplitude)) {
      throw bad("amplitudes are at most " + std::to_string(static_cast<int64_t>(kMaxAmplitude)) + " in magnitude");
    }
    out.push_back(m);
    if (out.size() > kMaxModes) throw bad("at most " + std::to_string(kMaxModes) + " modes");
    ws();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    expect(']');
    ws();
    if (i != text.size()) throw bad("trailing characters");
    return out;
  }
}

// The 1-D profile of the gaussian exp(-(x - 1/2)² / (2 0.1²)) along one axis.
std::vector<double> gaussian_axis(const Config& c) {
  std::vector<double> g = points(c);
  for (double& v : g) v = std::exp(-(v - 0.5) * (v - 0.5) / (2 * 0.1 * 0.1));
  return g;
}

// sin(w k x_i) on one axis with the argument reduced exactly: w x_i = π m_i / D for integers m_i
// and D (periodic: 2i / 2^n; dirichlet: (i + 1) / (2^n + 1)), so the phase is (k m_i) mod 2D, an
// integer. Rounding sin(w k x_i) at k x_i up to 1e6 instead leaves noise of 1e-12 relative, which
// is of full QTT rank at the 1e-14 the modes are compressed to: a single mode of wave number 4321
// at n_bits 14 would then be of full rank to set up, where a sine has rank 2.
std::vector<double> mode_axis(const Config& c, int64_t k) {
  const int64_t n = int64_t{1} << c.n_bits;
  const bool periodic = c.boundary == qtt::Boundary::Periodic;
  const int64_t D = periodic ? n : n + 1;
  std::vector<double> f(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t m = periodic ? 2 * i : i + 1;
    f[static_cast<std::size_t>(i)] = std::sin(kPi * static_cast<double>((k * m) % (2 * D)) / static_cast<double>(D));
  }
  return f;
}

qtt::Mps gaussian(const Config& c) {
  const std::vector<double> g = gaussian_axis(c);
  return qtt::separable(grid(c), {g, g, g}, c.tol * 0.1);
}

}  // namespace

const std::vector<ParamSpec>& params() {
  static const std::vector<ParamSpec> table = [] {
    std::vector<ParamSpec> t = {
        detail::required_integer("n_bits", 9, 14, "log2 of the grid points per axis: 9 (512) to 14 (16384)."),
        detail::required_number("nu", 0, true, 1e12, false, "Diffusion coefficient."),
        detail::required_number("dt", 0, true, 1e12, false, "Time step (implicit)."),
        detail::required_integer("steps", 1, static_cast<double>(kMaxSteps), "Time steps."),
        detail::choice_param("boundary", kBoundary, "Periodic, or u = 0 on the faces."),
        detail::choice_param("initial", kInitial, "modes: the list below; gaussian: exp(-|x - c|²/(2·0.1²))."),
        list_param("modes", "With initial \"modes\": [[kx, ky, kz, amplitude], ...], 1 to " +
                                std::to_string(kMaxModes) + " modes, wave numbers integers in 1.." +
                                std::to_string(static_cast<int64_t>(kMaxWaveNumber)) + ", |amplitude| <= " +
                                std::to_string(static_cast<int64_t>(kMaxAmplitude)) + " (default [[1, 1, 1, 1.0]])."),
        detail::choice_param("source", kSource,
                             "A constant source s in (I - ν dt Δ) u⁺ = u + dt s; gaussian: the initial gaussian."),
        detail::integer_param("max_rank", 1, kMaxRank, 64.0, "Rank cap of the QTT field."),
        detail::number_param("tol", 0, true, 1, true, 1e-8, "Solver tolerance and rounding."),
    };
    detail::add_common_params(t);
    return t;
  }();
  return table;
}

Config parse(const Params& p) {
  detail::ParamReader r("helmholtz_3d", p, params());
  Config c;
  c.n_bits = static_cast<int>(r.integer("n_bits"));
  c.nu = r.number("nu");
  c.dt = r.number("dt");
  c.steps = r.integer("steps");
  c.boundary = r.choice("boundary") == "dirichlet" ? qtt::Boundary::Dirichlet : qtt::Boundary::Periodic;
  c.initial = r.choice("initial") == "gaussian" ? Initial::Gaussian : Initial::Modes;
  if (const std::optional<std::string> text = r.list("modes")) {
    if (c.initial != Initial::Modes)
      throw InvalidArgument("param 'modes' for helmholtz_3d applies only to initial 'modes'");
    c.modes = parse_modes(*text);
  }
  c.source = r.choice("source") == "gaussian" ? Source::Gaussian : Source::None;
  c.max_rank = r.integer("max_rank");
  c.tol = r.number("tol");
  r.integer("seed");
  c.snapshot_every = r.snapshot_every(c.steps, "steps");
  return c;
}

qtt::Grid grid(const Config& c) { return qtt::Grid{3, c.n_bits}; }

double spacing(const Config& c) {
  const double n = std::ldexp(1.0, c.n_bits);
  return c.boundary == qtt::Boundary::Periodic ? 1.0 / n : 1.0 / (n + 1);
}

std::vector<double> points(const Config& c) {
  const int64_t n = int64_t{1} << c.n_bits;
  const double h = spacing(c);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = (c.boundary == qtt::Boundary::Periodic ? i : i + 1) * h;
  return x;
}

double eigenvalue(const Config& c, double kx, double ky, double kz) {
  const double h = spacing(c);
  const double w = c.boundary == qtt::Boundary::Periodic ? 2 * kPi : kPi;
  double lam = 0;
  for (double k : {kx, ky, kz}) {
    const double s = std::sin(w * k * h / 2);
    lam += 4 / (h * h) * s * s;
  }
  return lam;
}

qtt::Mps initial_field(const Config& c) {
  if (c.initial == Initial::Gaussian) return gaussian(c);
  std::vector<qtt::Mps> terms;
  std::vector<double> coef;
  for (const auto& m : c.modes) {
    std::vector<std::vector<double>> f(3);
    for (int a = 0; a < 3; ++a) f[a] = mode_axis(c, static_cast<int64_t>(m[a]));
    terms.push_back(qtt::separable(grid(c), f, 1e-14));
    coef.push_back(m[3]);
  }
  std::vector<const qtt::Mps*> ptr;
  for (const auto& t : terms) ptr.push_back(&t);
  SvdOptions o;
  o.tol = c.tol * 1e-2;
  o.max_rank = c.max_rank;
  return qtt::combine(coef, ptr, o);
}

qtt::Mpo implicit_operator(const Config& c) {
  const double h = spacing(c), a = c.nu * c.dt / (h * h);
  // I - nu dt Δ_h = (1 + 6a) I - a Σ_j (S_j^+ + S_j^-)
  return qtt::stencil(grid(c), c.boundary, 1 + 6 * a, std::vector<double>(3, -a), std::vector<double>(3, -a));
}

qtt::SolveReport step(const Config& c, const qtt::Mpo& a, const qtt::Mps& rhs, qtt::Mps& u) {
  qtt::SolveOptions o;
  o.tol = c.tol;
  o.max_rank = c.max_rank;
  o.max_sweeps = 20;
  return qtt::solve_spd(a, rhs, u, o);
}

Output solve(const Config& c, const Hooks& hooks) {
  if (c.n_bits < 2 || c.n_bits > 20) throw InvalidArgument("helmholtz_3d: n_bits must be in 2..20");
  const detail::Reporter report(hooks);
  const qtt::Mpo a = implicit_operator(c);
  qtt::Mps u = initial_field(c);
  std::optional<qtt::Mps> source;
  if (c.source == Source::Gaussian) source = gaussian(c);
  SvdOptions round_opt;
  round_opt.tol = c.tol * 0.1;
  round_opt.max_rank = c.max_rank;
  const std::vector<int64_t> shape = grid(c).shape();

  int64_t sweeps = 0;
  double worst = 0;
  report.progress(0, c.steps);
  for (int64_t n = 1; n <= c.steps; ++n) {
    report.poll();
    const qtt::Mps rhs = source ? qtt::combine({1.0, c.dt}, {&u, &*source}, round_opt) : u;
    const qtt::SolveReport r = step(c, a, rhs, u);
    if (!std::isfinite(qtt::total(u))) throw Diverged("helmholtz_3d: the solution is no longer finite");
    sweeps += r.sweeps;
    worst = std::max(worst, r.residual);
    report.progress(n, c.steps);
    if (c.snapshot_every > 0 && report.wants_snapshots() && n % c.snapshot_every == 0) {
      std::vector<Field> snap(1);
      snap[0].name = "u";
      snap[0].shape = shape;
      snap[0].tt = u;
      report.snapshot(n, static_cast<double>(n) * c.dt, snap);
    }
  }
  Output out;
  out.fields.resize(1);
  out.fields[0].name = "u";
  out.fields[0].shape = shape;
  out.stats["steps"] = static_cast<double>(c.steps);
  out.stats["t"] = static_cast<double>(c.steps) * c.dt;
  out.stats["max_rank"] = static_cast<double>(u.max_rank());
  out.stats["sweeps"] = static_cast<double>(sweeps);
  out.stats["residual"] = worst;
  out.stats["norm"] = norm(u);
  out.fields[0].tt = std::move(u);
  return out;
}

namespace {

class Helmholtz3d final : public Solver {
 public:
  std::string name() const override { return "helmholtz_3d"; }
  const std::vector<ParamSpec>& params() const override { return helmholtz::params(); }
  void validate(const Params& p) const override { (void)parse(p); }
  Output run(const Params& p, const Hooks& hooks) const override { return solve(parse(p), hooks); }
};

}  // namespace

}  // namespace tts::sim::helmholtz

namespace tts::sim::detail {
std::unique_ptr<Solver> make_helmholtz_3d() { return std::make_unique<helmholtz::Helmholtz3d>(); }
}  // namespace tts::sim::detail
