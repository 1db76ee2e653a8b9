// poisson_2d: matrix-free preconditioned conjugate gradients on the 5-point Laplacian.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>

#include "solvers/poisson/poisson_cg.hpp"
#include "solvers/poisson/poisson_workspace.hpp"
#include "solvers/sim_params.hpp"
#include "solvers/sim_random.hpp"
#include "solvers/sim_registry.hpp"
#include "ttstore/internal/big_buffer.hpp"
#include "ttstore/internal/poisson_mg.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/sim_poisson.hpp"

namespace tts::sim::poisson {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Adds w * g(x) g(y) with g(t) = exp(-(t - c)² / (2 s²)) / (2π s²) (unit mass) to f.
void add_gaussian(std::vector<double>& f, int64_t n, double h, double w, double cx, double cy, double s) {
  std::vector<double> gx(n), gy(n);
  for (int64_t i = 0; i < n; ++i) {
    const double t = (i + 1) * h;
    gx[i] = std::exp(-(t - cx) * (t - cx) / (2 * s * s));
    gy[i] = std::exp(-(t - cy) * (t - cy) / (2 * s * s));
  }
  const double a = w / (2 * kPi * s * s);
  tts::detail::in_pieces(n, tts::detail::rows_per_piece(n, tts::detail::kPiecePoints), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const double ax = a * gx[i];
      double* fi = f.data() + i * n;
      for (int64_t j = 0; j < n; ++j) fi[j] += ax * gy[j];
    }
  });
}

// Iterations still to go at the rate seen so far, for the progress estimate.
int64_t estimate_total(int64_t it, double rel0, double rel, double tol, int64_t max_iters) {
  if (it == 0 || !(rel > 0) || !(rel0 > rel)) return max_iters;
  const double rate = std::log(rel / rel0) / static_cast<double>(it);  // < 0
  const double more = std::ceil(std::log(tol / rel) / rate);
  if (!(more >= 0)) return it;
  return std::min<int64_t>(max_iters, it + static_cast<int64_t>(std::min(more, 1e12)));
}

const std::vector<std::string> kRhs = {"manufactured", "gaussians", "dipole"};
const std::vector<std::string> kPreconditioners = {"multigrid", "none"};

}  // namespace

const std::vector<ParamSpec>& params() {
  static const std::vector<ParamSpec> table = [] {
    std::vector<ParamSpec> t = {
        detail::required_integer("n_bits", 9, 14, "log2 of the grid points per axis: 9 (512) to 14 (16384)."),
        detail::choice_param("rhs", kRhs, "manufactured: f = 2π² sin πx sin πy."),
        detail::number_param("tol", 0, true, 0.5, false, 1e-8, "Relative residual at which CG stops."),
        detail::integer_param("max_iters", 1, static_cast<double>(kMaxSteps), std::nullopt,
                              "Cap on CG iterations (default 10 · 2^n_bits)."),
        detail::choice_param("preconditioner", kPreconditioners, "One multigrid V-cycle per iteration, or none."),
    };
    detail::add_common_params(t);
    return t;
  }();
  return table;
}

Config parse(const Params& p) {
  detail::ParamReader r("poisson_2d", p, params());
  Config c;
  c.n_bits = static_cast<int>(r.integer("n_bits"));
  const std::string rhs = r.choice("rhs");
  c.rhs = rhs == "manufactured" ? Rhs::Manufactured : rhs == "gaussians" ? Rhs::Gaussians : Rhs::Dipole;
  c.tol = r.number("tol");
  c.max_iters = r.integer("max_iters", int64_t{10} << c.n_bits);
  c.preconditioner = r.choice("preconditioner") == "none" ? Preconditioner::None : Preconditioner::Multigrid;
  c.seed = static_cast<uint64_t>(r.integer("seed"));
  c.snapshot_every = r.snapshot_every(c.max_iters, "max_iters");
  return c;
}

std::vector<double> rhs(const Config& c) {
  const int64_t n = int64_t{1} << c.n_bits;
  const double h = 1.0 / static_cast<double>(n + 1);
  std::vector<double> f = tts::detail::zeros_in_pieces(n * n);
  switch (c.rhs) {
    case Rhs::Manufactured: {
      std::vector<double> s(n);
      for (int64_t i = 0; i < n; ++i) s[i] = std::sin(kPi * (i + 1) * h);
      tts::detail::in_pieces(n, tts::detail::rows_per_piece(n, tts::detail::kPiecePoints), [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          for (int64_t j = 0; j < n; ++j) f[i * n + j] = 2 * kPi * kPi * s[i] * s[j];
        }
      });
      break;
    }
    case Rhs::Gaussians: {
      detail::SplitMix64 rng(c.seed);
      for (int k = 0; k < 8; ++k) {
        const double cx = rng.uniform(0.15, 0.85), cy = rng.uniform(0.15, 0.85);
        const double s = rng.uniform(0.02, 0.08), w = rng.uniform(-1.0, 1.0);
        add_gaussian(f, n, h, w, cx, cy, s);
      }
      break;
    }
    case Rhs::Dipole:
      add_gaussian(f, n, h, 1.0, 0.35, 0.5, 0.05);
      add_gaussian(f, n, h, -1.0, 0.65, 0.5, 0.05);
      break;
  }
  return f;
}

Output solve(const Config& c, const Hooks& hooks) {
  if (c.n_bits < 1 || c.n_bits > 15) throw InvalidArgument("poisson_2d: n_bits must be in 1..15");
  const detail::Reporter report(hooks);
  const int64_t n = int64_t{1} << c.n_bits, N = n * n;
  const int64_t max_iters = c.max_iters > 0 ? c.max_iters : int64_t{10} << c.n_bits;
  const double h = 1.0 / static_cast<double>(n + 1);
  Output out;
  out.fields.push_back(Field{"u", {n, n}, tts::detail::zeros_in_pieces(N)});
  out.fields.push_back(Field{"f", {n, n}, rhs(c)});
  // solve_s: the time to solution, from here (the right-hand side given, as a library caller has
  // it) to the confirmed true residual. The work vectors and the multigrid hierarchy come from a
  // workspace kept between solves (built inside the clock when none of this size is idle).
  const auto started = std::chrono::steady_clock::now();
  const detail::WorkspaceLease ws(n);
  detail::Multigrid* mg = c.preconditioner == Preconditioner::Multigrid ? &ws->multigrid() : nullptr;
  const detail::Stencil5 A{n, h, ws->zero.data()};
  double* x = out.fields[0].data.data();
  const double* f = out.fields[1].data.data();
  double* r = ws->r.data();
  double* p = ws->p.data();
  double* q = ws->q.data();

  // CG (Saad, Iterative Methods, alg. 9.1) from x = 0, so that r = f and, without a
  // preconditioner, p = r = f: the first step reads f in place and measures ||f||² as <p, p>. With
  // the multigrid preconditioner z = M r goes into p for a cycle's first step and into q after.
  // The recursive residual decides when to stop, then the true residual f - A x confirms it (and
  // the iteration restarts from it in the rare case where rounding let the two drift apart). A
  // step measures the true residual in its own pass (f is the only extra read), and leaves the
  // recursive residual unwritten, when it may be the last: a cycle's first step, where r_in is f
  // already, and a step that the convergence rate so far expects to reach tol. Otherwise the true
  // residual takes a pass of its own after the loop, and a step that guessed wrong writes r after.
  double fnorm2 = -1;  // ||f||², measured by the first pass over f
  double rel = 1.0, true_rel = 1.0;
  int64_t it = 0;
  bool x_zero = true;
  const double* r0 = f;  // the residual a cycle starts from
  double r0r0 = -1;      // <r0, r0> when known
  std::vector<Field> snap;
  while (rel > c.tol && it < max_iters) {
    report.poll();
    detail::CgStep step;
    if (mg) {
      mg->apply(r0, p);
      double rr0 = 0;
      detail::dot2(r0, p, N, &step.rz, &rr0);
      if (fnorm2 < 0) fnorm2 = rr0;
      if (!(fnorm2 > 0)) {  // f = 0: u = 0 solves it exactly
        rel = 0.0;
        break;
      }
    } else {
      step.rz = r0r0;  // < 0 on the first cycle: the step measures it
    }
    step.p = mg ? p : r0;
    step.p_out = p;
    step.x = x;
    step.r_in = r0;
    step.r_out = r;
    step.b = f;
    double true_rr = -1, rel_prev = -1;  // the true residual of x as it stands, when measured
    while (it < max_iters) {
      step.x_zero = x_zero;
      const detail::CgStepResult s = detail::cg_step(A, step);
      if (fnorm2 < 0) fnorm2 = s.pp;
      if (!(fnorm2 > 0) || !(s.pq > 0)) break;  // f = 0, or p = 0: the residual is already exactly zero
      x_zero = false;
      true_rr = s.true_rr;
      rel_prev = rel;
      rel = std::sqrt(s.rr / fnorm2);
      ++it;
      if (c.snapshot_every > 0 && report.wants_snapshots() && it % c.snapshot_every == 0) {
        snap.assign(1, Field{"u", {n, n}, out.fields[0].data});
        report.snapshot(it, 0.0, snap);
      }
      report.progress(it, estimate_total(it, 1.0, rel, c.tol, max_iters));
      report.poll();
      if (rel <= c.tol) break;
      if (step.b != nullptr) detail::finish_step(A, step, s);
      double rz_new = s.rr;
      if (mg) {
        mg->apply(r, q);
        double rr = 0;
        detail::dot2(r, q, N, &rz_new, &rr);
      }
      // The next step renews the direction this step used (f itself, without a preconditioner,
      // after a cycle's first step) into p.
      if (step.z != nullptr) step.p = step.p_out;
      step.z = mg ? q : r;
      step.beta = rz_new / s.rz;
      step.rz = rz_new;
      step.r_in = r;
      step.b = rel * (rel / rel_prev) <= c.tol ? f : nullptr;
    }
    if (!(fnorm2 > 0)) {
      rel = 0.0;
      break;
    }
    // The true residual (norm only: it is written out below in the rare case of a restart).
    rel = std::sqrt((true_rr >= 0 ? true_rr : detail::residual(A, f, x, nullptr)) / fnorm2);
    if (!(rel > c.tol)) break;
    if (!(rel < 1e300)) throw Diverged("poisson_2d: the iteration diverged");
    // A tolerance below the rounding floor of the true residual (about eps * cond(A)) cannot be
    // met: stop once a restart no longer halves it.
    if (!(rel < 0.5 * true_rel) || it >= max_iters) break;
    true_rel = rel;
    // Restart from the true residual: into r for the multigrid (z = M r0 goes to p), into p
    // without a preconditioner (p = r0, and the step writes the new residual to r).
    double* dst = mg ? r : p;
    r0r0 = detail::residual(A, f, x, dst);
    r0 = dst;
  }
  out.stats["solve_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  report.progress(it, it);
  out.stats["iterations"] = static_cast<double>(it);
  out.stats["steps"] = static_cast<double>(it);
  out.stats["t"] = 0.0;
  out.stats["residual"] = rel;
  out.stats["converged"] = rel <= c.tol ? 1.0 : 0.0;
  if (c.rhs == Rhs::Manufactured) {
    const std::vector<double>& x = out.fields[0].data;
    std::vector<double> s(n);
    for (int64_t i = 0; i < n; ++i) s[i] = std::sin(kPi * (i + 1) * h);
    double e = 0;
    tts::detail::in_pieces(n, tts::detail::rows_per_piece(n, tts::detail::kPiecePoints), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        for (int64_t j = 0; j < n; ++j) e = std::max(e, std::fabs(x[i * n + j] - s[i] * s[j]));
      }
    });
    out.stats["max_error"] = e;
  }
  return out;
}

namespace {

class Poisson2d : public Solver {
 public:
  std::string name() const override { return "poisson_2d"; }
  const std::vector<ParamSpec>& params() const override { return poisson::params(); }
  void validate(const Params& p) const override { (void)parse(p); }
  Output run(const Params& p, const Hooks& hooks) const override { return solve(parse(p), hooks); }
};

}  // namespace

}  // namespace tts::sim::poisson

namespace tts::sim::detail {
std::unique_ptr<Solver> make_poisson_2d() { return std::make_unique<poisson::Poisson2d>(); }
}  // namespace tts::sim::detail
