// poisson_2d: second-order accuracy on the manufactured solution, an honest (recomputed) residual,
// multigrid-preconditioned CG whose iteration count does not grow with the grid, a symmetric
// positive definite preconditioner, params checked by name, progress, snapshots and cancellation.
#include <cmath>
#include <random>
#include <thread>

#include "check.hpp"
#include "ttstore/internal/poisson_mg.hpp"
#include "ttstore/sim.hpp"
#include "ttstore/sim_poisson.hpp"

using namespace tts::sim;

static const double kPi = 3.14159265358979323846;

// ||f + Δ_h u||_2 / ||f||_2 with plain loops (zero outside the grid), independent of the solver.
static double relative_residual(const std::vector<double>& u, const std::vector<double>& f, int64_t n) {
  const double h = 1.0 / (n + 1);
  auto at = [&](int64_t i, int64_t j) { return (i < 0 || j < 0 || i >= n || j >= n) ? 0.0 : u[i * n + j]; };
  double r2 = 0, f2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double au = (4 * at(i, j) - at(i - 1, j) - at(i + 1, j) - at(i, j - 1) - at(i, j + 1)) / (h * h);
      const double r = f[i * n + j] - au;
      r2 += r * r;
      f2 += f[i * n + j] * f[i * n + j];
    }
  }
  return std::sqrt(r2 / f2);
}

static poisson::Config config(int n_bits, poisson::Rhs rhs, double tol,
                              poisson::Preconditioner pre = poisson::Preconditioner::Multigrid) {
  poisson::Config c;
  c.n_bits = n_bits;
  c.rhs = rhs;
  c.tol = tol;
  c.preconditioner = pre;
  return c;
}

static const Field& field(const Output& o, const std::string& name) {
  for (const Field& f : o.fields) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no field " + name);
}

TEST(manufactured_error_matches_the_truncation_error_and_is_second_order) {
  double prev_e = 0, prev_h = 0;
  for (int b = 5; b <= 9; ++b) {
    const Output o = poisson::solve(config(b, poisson::Rhs::Manufactured, 1e-10), {});
    const int64_t n = int64_t{1} << b;
    const double h = 1.0 / (n + 1);
    const std::vector<double>& u = field(o, "u").data;
    double e = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        e = std::max(e, std::fabs(u[i * n + j] - std::sin(kPi * (i + 1) * h) * std::sin(kPi * (j + 1) * h)));
      }
    }
    const double expect = kPi * kPi * h * h / 12;
    CHECK_MSG(std::fabs(e - expect) <= 0.1 * expect,
              "n_bits " + std::to_string(b) + ": " + check::num(e) + " vs " + check::num(expect));
    CHECK_REL(o.stats.at("max_error"), e, 1e-9);
    if (prev_e > 0) {
      const double order = std::log(prev_e / e) / std::log(prev_h / h);
      CHECK_MSG(std::fabs(order - 2) <= 0.05, "order " + check::num(order) + " at n_bits " + std::to_string(b));
    }
    prev_e = e;
    prev_h = h;
  }
}

TEST(reported_residual_is_the_true_residual) {
  for (auto pre : {poisson::Preconditioner::Multigrid, poisson::Preconditioner::None}) {
    for (double tol : {1e-4, 1e-9}) {
      poisson::Config c = config(7, poisson::Rhs::Gaussians, tol, pre);
      c.seed = 11;
      const Output o = poisson::solve(c, {});
      const double r = relative_residual(field(o, "u").data, field(o, "f").data, 128);
      CHECK_REL(o.stats.at("residual"), r, 1e-6);
      CHECK(r <= tol);
      CHECK_EQ(o.stats.at("converged"), 1.0);
      CHECK_EQ(o.stats.at("iterations"), o.stats.at("steps"));
    }
  }
  // A cap that stops the iteration early is reported as such, with the residual it reached.
  poisson::Config c = config(7, poisson::Rhs::Dipole, 1e-10, poisson::Preconditioner::None);
  c.max_iters = 5;
  const Output o = poisson::solve(c, {});
  CHECK_EQ(o.stats.at("iterations"), 5.0);
  CHECK_EQ(o.stats.at("converged"), 0.0);
  CHECK_REL(o.stats.at("residual"), relative_residual(field(o, "u").data, field(o, "f").data, 128), 1e-6);
  // So is a tolerance below the rounding floor: the solve stops when restarts stop helping.
  const Output floor = poisson::solve(config(9, poisson::Rhs::Gaussians, 1e-15), {});
  CHECK_EQ(floor.stats.at("converged"), 0.0);
  CHECK(floor.stats.at("iterations") < 100);
  CHECK(floor.stats.at("residual") < 1e-9);
}

TEST(multigrid_pcg_iterations_stay_bounded_as_the_grid_grows) {
  int lo = 1 << 30, hi = 0;
  double none_iters = 0;
  for (int b = 4; b <= 10; ++b) {
    for (auto rhs : {poisson::Rhs::Gaussians, poisson::Rhs::Dipole, poisson::Rhs::Manufactured}) {
      const Output o = poisson::solve(config(b, rhs, 1e-8), {});
      const int it = static_cast<int>(o.stats.at("iterations"));
      std::printf("  n_bits %d rhs %d: %d iterations, residual %.2e\n", b, static_cast<int>(rhs), it,
                  o.stats.at("residual"));
      if (b >= 5) {
        lo = std::min(lo, it);
        hi = std::max(hi, it);
      }
      CHECK(o.stats.at("residual") <= 1e-8);
    }
  }
  CHECK_MSG(hi <= 14, "most iterations " + std::to_string(hi));
  CHECK_MSG(hi - lo <= 4, "iterations range " + std::to_string(lo) + ".." + std::to_string(hi));
  // Unpreconditioned CG on the same problem needs O(n) iterations: the preconditioner is doing the work.
  none_iters = poisson::solve(config(8, poisson::Rhs::Gaussians, 1e-8, poisson::Preconditioner::None), {})
                   .stats.at("iterations");
  CHECK_MSG(none_iters > 10 * hi, "unpreconditioned " + check::num(none_iters));
}

TEST(multigrid_preconditioner_is_symmetric_positive_definite) {
  for (int64_t n : {16, 64}) {
    tts::sim::detail::Multigrid mg(n);
    std::mt19937_64 gen(5);
    std::normal_distribution<double> nd;
    std::vector<double> a(n * n), b(n * n), ma(n * n), mb(n * n);
    for (auto& v : a) v = nd(gen);
    for (auto& v : b) v = nd(gen);
    mg.apply(a.data(), ma.data());
    mg.apply(b.data(), mb.data());
    double amb = 0, bma = 0, ama = 0, aa = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      amb += a[i] * mb[i];
      bma += b[i] * ma[i];
      ama += a[i] * ma[i];
      aa += a[i] * a[i];
    }
    CHECK_REL(amb, bma, 1e-12);
    CHECK(ama > 0);
    // One V-cycle on the fine operator reduces a random error by a grid-independent factor.
    std::vector<double> e(a), ae(n * n), z(n * n);
    mg.fine().apply(e.data(), ae.data());
    mg.apply(ae.data(), z.data());
    double num = 0, den = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      num += (e[i] - z[i]) * (e[i] - z[i]);
      den += e[i] * e[i];
    }
    CHECK_MSG(std::sqrt(num / den) < 0.3, "V-cycle error reduction " + check::num(std::sqrt(num / den)));
    (void)aa;
  }
}

TEST(params_are_checked_by_name) {
  auto bad = [](Params p, const char* needle) {
    CHECK_THROWS(tts::InvalidArgument, validate("poisson_2d", p), needle);
  };
  bad({}, "n_bits");
  bad({{"n_bits", 8.0}}, "n_bits");
  bad({{"n_bits", 15.0}}, "n_bits");
  bad({{"n_bits", 9.5}}, "n_bits");
  bad({{"n_bits", std::string("9")}}, "n_bits");
  bad({{"n_bits", 9.0}, {"rhs", std::string("sine")}}, "rhs");
  bad({{"n_bits", 9.0}, {"tol", 0.0}}, "tol");
  bad({{"n_bits", 9.0}, {"tol", true}}, "tol");
  bad({{"n_bits", 9.0}, {"max_iters", 0.0}}, "max_iters");
  bad({{"n_bits", 9.0}, {"preconditioner", std::string("jacobi")}}, "preconditioner");
  bad({{"n_bits", 9.0}, {"seed", -1.0}}, "seed");
  bad({{"n_bits", 9.0}, {"snapshot_every", 0.0}}, "snapshot_every");
  bad({{"n_bits", 9.0}, {"steps", 3.0}}, "steps");
  CHECK_THROWS(tts::InvalidArgument, validate("poisson_3d", {{"n_bits", 9.0}}), "poisson_3d");
  validate("poisson_2d", {{"n_bits", 9.0},
                          {"rhs", std::string("dipole")},
                          {"tol", 1e-6},
                          {"preconditioner", std::string("none")},
                          {"seed", 3.0},
                          {"max_iters", 50.0}});
  const poisson::Config c = poisson::parse({{"n_bits", 10.0}});
  CHECK_EQ(c.max_iters, int64_t{10240});
  CHECK(c.tol == 1e-8 && c.rhs == poisson::Rhs::Manufactured && c.preconditioner == poisson::Preconditioner::Multigrid);
}

TEST(rhs_gaussians_follow_the_seed_and_the_dipole_is_antisymmetric) {
  poisson::Config c = config(6, poisson::Rhs::Gaussians, 1e-8);
  c.seed = 1;
  const auto a = poisson::rhs(c), a2 = poisson::rhs(c);
  c.seed = 2;
  const auto b = poisson::rhs(c);
  CHECK(a == a2);
  CHECK(a != b);
  c.rhs = poisson::Rhs::Dipole;
  const auto d = poisson::rhs(c);
  const int64_t n = 64;
  double worst = 0, big = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      worst = std::max(worst, std::fabs(d[i * n + j] + d[(n - 1 - i) * n + j]));
      big = std::max(big, std::fabs(d[i * n + j]));
    }
  }
  CHECK(big > 10);
  CHECK(worst <= 1e-12 * big);
}

TEST(progress_snapshots_and_cancel) {
  poisson::Config c = config(8, poisson::Rhs::Gaussians, 1e-10);
  c.snapshot_every = 2;
  std::vector<std::pair<int64_t, int64_t>> prog;
  std::vector<int64_t> snaps;
  Hooks h;
  h.progress = [&](int64_t d, int64_t t) { prog.emplace_back(d, t); };
  h.snapshot = [&](int64_t step, double t, const std::vector<Field>& f) {
    snaps.push_back(step);
    CHECK_EQ(f.size(), std::size_t{1});
    CHECK(f[0].name == "u" && f[0].shape == std::vector<int64_t>({256, 256}) && f[0].data.size() == 65536u);
    CHECK_EQ(t, 0.0);
  };
  const Output o = poisson::solve(c, h);
  const int64_t it = static_cast<int64_t>(o.stats.at("iterations"));
  CHECK(!prog.empty());
  CHECK_EQ(prog.back().first, it);
  CHECK_EQ(prog.back().second, it);
  for (std::size_t k = 1; k < prog.size(); ++k) CHECK(prog[k].first >= prog[k - 1].first);
  for (const auto& p : prog) CHECK(p.first <= p.second);
  CHECK_EQ(static_cast<int64_t>(snaps.size()), it / 2);
  for (std::size_t k = 0; k < snaps.size(); ++k) CHECK_EQ(snaps[k], static_cast<int64_t>(2 * (k + 1)));

  int calls = 0;
  Hooks stop;
  stop.progress = [&](int64_t, int64_t) { ++calls; };
  stop.cancelled = [&] { return calls >= 3; };
  c.preconditioner = poisson::Preconditioner::None;
  CHECK_THROWS(Cancelled, poisson::solve(c, stop), "cancelled");
  CHECK_EQ(calls, 3);
}

// Work vectors are kept between solves (poisson_workspace.hpp): a solve after a cancelled one, and
// solves running at once, each on a workspace of its own, give the same u as a lone solve.
TEST(kept_workspaces_do_not_carry_state_between_solves_or_share_it_between_concurrent_ones) {
  std::vector<poisson::Config> cs;
  for (auto pre : {poisson::Preconditioner::Multigrid, poisson::Preconditioner::None}) {
    for (auto rhs : {poisson::Rhs::Gaussians, poisson::Rhs::Dipole}) cs.push_back(config(7, rhs, 1e-9, pre));
  }
  std::vector<std::vector<double>> alone;
  for (const auto& c : cs) alone.push_back(field(poisson::solve(c, {}), "u").data);
  // A cancelled run leaves its workspace mid-iteration.
  int calls = 0;
  Hooks stop;
  stop.progress = [&](int64_t, int64_t) { ++calls; };
  stop.cancelled = [&] { return calls >= 2; };
  CHECK_THROWS(Cancelled, poisson::solve(cs[0], stop), "cancelled");
  for (std::size_t k = 0; k < cs.size(); ++k) CHECK(field(poisson::solve(cs[k], {}), "u").data == alone[k]);
  std::vector<std::vector<double>> together(cs.size());
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> ts;
    for (std::size_t k = 0; k < cs.size(); ++k) {
      ts.emplace_back([&, k] { together[k] = field(poisson::solve(cs[k], {}), "u").data; });
    }
    for (auto& t : ts) t.join();
    for (std::size_t k = 0; k < cs.size(); ++k) {
      double d = 0;
      for (std::size_t i = 0; i < alone[k].size(); ++i) d = std::max(d, std::fabs(together[k][i] - alone[k][i]));
      CHECK_MSG(together[k] == alone[k],
                "round " + std::to_string(round) + " config " + std::to_string(k) + ": max diff " + check::num(d));
    }
  }
}

TEST(registry_runs_poisson_by_name) {
  const auto names = solvers();
  CHECK(std::find(names.begin(), names.end(), "poisson_2d") != names.end());
  const Output o = run("poisson_2d", {{"n_bits", 9.0}, {"tol", 1e-6}}, {});
  CHECK_EQ(o.fields.size(), std::size_t{2});
  CHECK(field(o, "u").shape == std::vector<int64_t>({512, 512}));
  CHECK(o.stats.at("residual") <= 1e-6);
}

TEST_MAIN()
