// helmholtz_3d: a mode of the discrete Laplacian decays by exactly 1 / (1 + nu dt λ_h) per implicit
// step (both boundaries); the manufactured problem (I - αΔ)u = f, u = sin πx sin πy sin πz,
// converges at order 2; the output is a train over the interleaved layout of [n, n, n] (never a
// dense array); params are checked by name, the modes list arrives as JSON text; snapshots and
// cancellation work through the hooks.
#include <cmath>

#include "check.hpp"
#include "ttstore/sim.hpp"
#include "ttstore/sim_helmholtz.hpp"

using namespace tts;
using namespace tts::sim;

static const double kPi = 3.14159265358979323846;

static double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

TEST(a_single_mode_decays_by_one_over_one_plus_nu_dt_lambda_per_step) {
  for (qtt::Boundary b : {qtt::Boundary::Periodic, qtt::Boundary::Dirichlet}) {
    helmholtz::Config c;
    c.n_bits = 5;
    c.nu = 0.05;
    c.dt = 0.01;
    c.steps = 4;
    c.boundary = b;
    c.modes = {{1, 2, 3, 1.5}};
    c.tol = 1e-9;
    const qtt::Mps u0 = helmholtz::initial_field(c);
    Output out = helmholtz::solve(c, {});
    CHECK(out.fields.size() == 1 && out.fields[0].is_tt() && out.fields[0].data.empty());
    const qtt::Grid g = helmholtz::grid(c);
    const std::vector<double> got = qtt::to_dense(g, out.fields[0].tt);
    std::vector<double> want = qtt::to_dense(g, u0);
    const double factor = std::pow(1 / (1 + c.nu * c.dt * helmholtz::eigenvalue(c, 1, 2, 3)), c.steps);
    for (double& v : want) v *= factor;
    const double e = rel_diff(got, want);
    CHECK_MSG(e < 10 * c.tol, "error " + check::num(e));
    CHECK_NEAR(out.stats.at("t"), 0.04, 1e-15);
    CHECK_EQ(out.stats.at("steps"), 4.0);
    // A product of sines is rank 2 along every axis: the solver keeps it low-rank.
    CHECK(out.stats.at("max_rank") <= 8);
    // The grid points: x_i = i h (periodic), (i + 1) h with h = 1 / (n + 1) (dirichlet).
    const std::vector<double> x = helmholtz::points(c);
    const int64_t n = 32;
    const int64_t i = 3, j = 7, k = 20;
    const double w = b == qtt::Boundary::Periodic ? 2 * kPi : kPi;
    CHECK_NEAR(want[(i * n + j) * n + k],
               1.5 * factor * std::sin(w * x[i]) * std::sin(2 * w * x[j]) * std::sin(3 * w * x[k]), 1e-12);
  }
}

// (I - αΔ_h) u_h = f with f = (1 + 3απ²) sin πx sin πy sin πz: ||u_h - u||_max = O(h²).
TEST(the_manufactured_problem_converges_at_order_two) {
  double prev = 0, prev_h = 0;
  for (int bits = 3; bits <= 6; ++bits) {
    helmholtz::Config c;
    c.n_bits = bits;
    c.boundary = qtt::Boundary::Dirichlet;
    c.nu = 0.1;
    c.dt = 1.0;
    c.tol = 1e-11;
    const double alpha = c.nu * c.dt;
    const std::vector<double> x = helmholtz::points(c);
    std::vector<double> s(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) s[i] = std::sin(kPi * x[i]);
    const qtt::Grid g = helmholtz::grid(c);
    qtt::Mps exact = qtt::separable(g, {s, s, s}, 1e-15);
    SvdOptions o;
    o.tol = 1e-15;
    const qtt::Mps f = qtt::combine({1 + 3 * alpha * kPi * kPi}, {&exact}, o);
    qtt::Mps u = f;
    const qtt::SolveReport r = helmholtz::step(c, helmholtz::implicit_operator(c), f, u);
    CHECK(r.converged);
    const std::vector<double> a = qtt::to_dense(g, u), b = qtt::to_dense(g, exact);
    double e = 0;
    for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(a[i] - b[i]));
    if (prev > 0) {
      const double order = std::log(prev / e) / std::log(prev_h / helmholtz::spacing(c));
      CHECK_MSG(order > 1.9 && order < 2.1, "order " + check::num(order) + " at n_bits " + std::to_string(bits));
    }
    prev = e;
    prev_h = helmholtz::spacing(c);
  }
}

TEST(a_gaussian_spreads_and_keeps_its_mass_when_periodic) {
  helmholtz::Config c;
  c.n_bits = 5;
  c.initial = helmholtz::Initial::Gaussian;
  c.nu = 0.01;
  c.dt = 0.01;
  c.steps = 3;
  c.tol = 1e-6;
  c.max_rank = 256;  // a 3-D gaussian is rank r^3 on the interleaved bonds (r its 1-D rank)
  const qtt::Mps u0 = helmholtz::initial_field(c);
  Output out = helmholtz::solve(c, {});
  const qtt::Mps& u = out.fields[0].tt;
  // (I - nu dt Δ) conserves the sum on a periodic grid (Δ's rows sum to 0) and lowers the peak.
  CHECK_REL(qtt::total(u), qtt::total(u0), 1e-5);
  CHECK(out.stats.at("norm") < norm(u0));
  const std::vector<double> d = qtt::to_dense(helmholtz::grid(c), u);
  // The centre of the cube (0.5, 0.5, 0.5) is grid point (16, 16, 16) and stays the maximum.
  double mx = 0;
  int64_t at = -1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] > mx) {
      mx = d[i];
      at = static_cast<int64_t>(i);
    }
  }
  CHECK_EQ(at, (16 * 32 + 16) * 32 + 16);
  CHECK(mx < 1.0);
}

TEST(params_are_checked_by_name_and_modes_come_as_json_text) {
  Params p{{"n_bits", 9.0},
           {"nu", 0.1},
           {"dt", 0.01},
           {"steps", 2.0},
           {"modes", std::string("[[1, 2, 3, 0.5], [2,2,2,1]]")}};
  helmholtz::Config c = helmholtz::parse(p);
  CHECK_EQ(c.modes.size(), std::size_t{2});
  CHECK_EQ(c.modes[0][2], 3.0);
  CHECK_EQ(c.modes[1][3], 1.0);
  CHECK(c.boundary == qtt::Boundary::Periodic);
  CHECK_EQ(c.max_rank, int64_t{64});
  Params bad = p;
  bad["modes"] = std::string("[[1, 2, 0.5, 1]]");
  CHECK_THROWS(InvalidArgument, helmholtz::parse(bad), "modes");
  bad = p;
  bad["n_bits"] = 8.0;
  CHECK_THROWS(InvalidArgument, helmholtz::parse(bad), "n_bits");
  bad = p;
  bad["boundary"] = std::string("neumann");
  CHECK_THROWS(InvalidArgument, helmholtz::parse(bad), "boundary");
  bad = p;
  bad["viscosity"] = 1.0;
  CHECK_THROWS(InvalidArgument, helmholtz::parse(bad), "viscosity");
  bad = p;
  bad.erase("dt");
  CHECK_THROWS(InvalidArgument, helmholtz::parse(bad), "dt");
  CHECK_THROWS(InvalidArgument, validate("helmholtz_3d", bad), "dt");
}

// Through the registry at the smallest HTTP grid: 512^3 as a train of 27 cores, snapshots as trains.
TEST(runs_at_512_cubed_through_the_registry_with_snapshots_and_cancel) {
  Params p{{"n_bits", 9.0}, {"nu", 0.5}, {"dt", 0.001}, {"steps", 2.0}, {"snapshot_every", 1.0}};
  int snaps = 0;
  Hooks h;
  h.snapshot = [&](int64_t step, double t, const std::vector<Field>& f) {
    ++snaps;
    CHECK(f.size() == 1 && f[0].is_tt() && f[0].tt.d() == 27);
    CHECK_NEAR(t, 0.001 * static_cast<double>(step), 1e-15);
  };
  Output out = run("helmholtz_3d", p, h);
  CHECK_EQ(snaps, 2);
  const Field& u = out.fields[0];
  CHECK(u.shape == (std::vector<int64_t>{512, 512, 512}));
  CHECK_EQ(u.tt.d(), 27);
  const QttLayout l = make_layout(u.shape, LayoutKind::Interleaved);
  CHECK(l.modes == u.tt.modes);
  CHECK(u.tt.max_rank() <= 8);
  Hooks stop;
  stop.cancelled = [] { return true; };
  CHECK_THROWS(Cancelled, run("helmholtz_3d", p, stop), "");
}

int main(int argc, char** argv) { return check::run_all(argc, argv); }
