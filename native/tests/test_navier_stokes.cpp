// navier_stokes_2d: Taylor-Green kinetic energy follows E0 exp(-4t/Re) (u = sin x cos y: each
// component decays as exp(-2t/Re), the energy at twice the rate) after 100 steps at 512², the
// discrete divergence stays below 1e-6 of the velocity gradient norm, the outputs are trains over the
// interleaved layout of [n, n], and params are checked by name.
#include <cmath>

#include "check.hpp"
#include "ttstore/sim.hpp"
#include "ttstore/sim_navier_stokes.hpp"

using namespace tts;
using namespace tts::sim;

TEST(taylor_green_energy_decays_as_exp_minus_4t_over_re_at_512_squared) {
  navier_stokes::Config c;
  c.n_bits = 9;
  c.reynolds = 100;
  c.dt = 0.004;  // explicit diffusion: ν dt 8 / h² = 2.1, inside SSP-RK3's stability limit 2.5
  c.steps = 100;
  const navier_stokes::Stepper st(c);
  navier_stokes::State s = navier_stokes::initial_state(c);
  const double e0 = st.kinetic_energy(s);
  // ½ ∫ (sin²x cos²y + cos²x sin²y) over [0, 2π)² = π², and the grid sum is exact for these modes.
  CHECK_REL(e0, 3.14159265358979323846 * 3.14159265358979323846, 1e-12);
  double worst_div = 0;
  for (int n = 1; n <= c.steps; ++n) {
    st.step(s);
    if (n % 25 == 0) worst_div = std::max(worst_div, st.divergence_ratio(s));
  }
  const double t = c.dt * static_cast<double>(c.steps);
  const double e = st.kinetic_energy(s), want = e0 * std::exp(-4 * t / c.reynolds);
  CHECK_MSG(std::fabs(e - want) <= 1e-3 * want, "E " + check::num(e) + " vs " + check::num(want));
  CHECK_MSG(worst_div < 1e-6, "divergence " + check::num(worst_div));
  CHECK(s.u.max_rank() <= 8 && s.v.max_rank() <= 8);
}

TEST(outputs_are_trains_over_the_interleaved_layout_through_the_registry) {
  Params p{{"n_bits", 9.0}, {"reynolds", 100.0}, {"steps", 2.0}, {"dt", 0.004}, {"snapshot_every", 2.0}};
  int snaps = 0;
  Hooks h;
  h.snapshot = [&](int64_t step, double t, const std::vector<Field>& f) {
    ++snaps;
    CHECK_EQ(step, int64_t{2});
    CHECK(f.size() == 3 && f[2].name == "vorticity" && f[2].is_tt());
  };
  Output out = run("navier_stokes_2d", p, h);
  CHECK_EQ(snaps, 1);
  CHECK_EQ(out.fields.size(), std::size_t{3});
  const QttLayout l = make_layout({512, 512}, LayoutKind::Interleaved);
  for (const Field& f : out.fields) {
    CHECK(f.shape == (std::vector<int64_t>{512, 512}));
    CHECK(f.is_tt() && f.data.empty() && f.tt.modes == l.modes);
  }
  // Taylor-Green vorticity v_x - u_y is 2 sin x sin y times the decay: at (π/2, π/2), index 128.
  std::vector<double> w(512 * 512);
  reconstruct(out.fields[2].tt, l, MutableArrayView{w.data(), DType::F64, 512 * 512}, ArrayView{});
  const double h2 = 2 * 3.14159265358979323846 / 512;
  // Central differences see sin x with the factor sin(h) / h.
  const double want = 2 * std::sin(h2) / h2 * std::exp(-2 * 0.008 / 100);
  CHECK_NEAR(w[128 * 512 + 128], want, 1e-6);
  CHECK(out.stats.at("divergence") < 1e-6);
  CHECK_NEAR(out.stats.at("t"), 0.008, 1e-15);
}

TEST(params_are_checked_by_name) {
  Params p{{"n_bits", 10.0}, {"reynolds", 1000.0}, {"steps", 5.0}, {"dt", 0.001}};
  navier_stokes::Config c = navier_stokes::parse(p);
  CHECK_EQ(c.max_rank, int64_t{64});
  CHECK(c.initial == navier_stokes::Initial::TaylorGreen);
  Params bad = p;
  bad["n_bits"] = 13.0;
  CHECK_THROWS(InvalidArgument, navier_stokes::parse(bad), "n_bits");
  bad = p;
  bad["initial"] = std::string("vortex");
  CHECK_THROWS(InvalidArgument, navier_stokes::parse(bad), "initial");
  bad = p;
  bad.erase("reynolds");
  CHECK_THROWS(InvalidArgument, validate("navier_stokes_2d", bad), "reynolds");
  bad = p;
  bad["tol"] = 1e-3;
  CHECK_THROWS(InvalidArgument, validate("navier_stokes_2d", bad), "tol");
}

int main(int argc, char** argv) { return check::run_all(argc, argv); }
