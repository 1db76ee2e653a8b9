// A cancel (or a pause: both act at a poll of Hooks::cancelled) reaches every solver within a
// fraction of a second wherever the run is, CONTRACT.md section 8's "within 5 s" with margin:
// inside one implicit step of helmholtz_3d, inside navier_stokes_2d's one-time Green kernel build
// (after which the kernel is still built whole for the next run), inside the set-up of the largest
// grids, and between the pieces of each pass over a large poisson_2d grid. The cancel comes from
// another thread, as the addon's cancel() does, and the bound is far below what a step or a set-up
// takes at these params (seconds to minutes before the solvers polled inside them).
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "check.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/qtt_algebra.hpp"
#include "ttstore/sim.hpp"
#include "ttstore/sim_navier_stokes.hpp"

using namespace tts;
using namespace tts::sim;
using Clock = std::chrono::steady_clock;

namespace {

// From a cancel to Cancelled leaving run(): the bound these tests hold the solvers to on a loaded
// 2-core host (a poll comes every 0.25 s at worst there, at the params below).
constexpr double kBoundS = 1.5;

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Outcome {
  bool cancelled = false;
  double latency = -1;    // seconds from the cancel to the throw
  int64_t progress = -1;  // the last `done` reported (-1: none, 0: the first step had begun)
};

enum class From { Start, FirstStep };

// Runs `solver` here while another thread cancels it `delay` seconds after `from`: the start of
// run(), or its progress(0) report (the first step begins right after it).
Outcome cancel_after(const std::string& solver, const Params& p, From from, double delay) {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = from == From::Start, ended = false;
  std::atomic<bool> cancel{false};
  Clock::time_point asked{};
  Outcome out;
  Hooks h;
  h.cancelled = [&] { return cancel.load(); };
  h.progress = [&](int64_t done, int64_t) {
    out.progress = done;
    std::lock_guard<std::mutex> lock(mu);
    armed = true;
    cv.notify_all();
  };
  std::thread canceller([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return armed || ended; });
    if (cv.wait_for(lock, std::chrono::duration<double>(delay), [&] { return ended; })) return;
    asked = Clock::now();
    cancel.store(true);
  });
  try {
    (void)run(solver, p, h);
  } catch (const Cancelled&) {
    out.cancelled = true;
  }
  const Clock::time_point thrown = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu);
    ended = true;
    cv.notify_all();
  }
  canceller.join();
  if (out.cancelled) out.latency = seconds(asked, thrown);
  std::printf("    %s: %s, %.3f s after the cancel (last progress %lld)\n", solver.c_str(),
              out.cancelled ? "cancelled" : "not cancelled", out.latency, static_cast<long long>(out.progress));
  return out;
}

// Polls of a run, and the longest time between two (from the start to the first included).
struct PollLog {
  int64_t polls = 0;
  double longest = 0;
};
PollLog run_counting_polls(const std::string& solver, const Params& p) {
  PollLog log;
  Clock::time_point last = Clock::now();
  Hooks h;
  h.cancelled = [&] {
    const Clock::time_point now = Clock::now();
    log.longest = std::max(log.longest, seconds(last, now));
    last = now;
    ++log.polls;
    return false;
  };
  (void)run(solver, p, h);
  std::printf("    %s: %lld polls, longest gap %.3f s\n", solver.c_str(), static_cast<long long>(log.polls),
              log.longest);
  return log;
}

}  // namespace

// One implicit step at 16384³ takes 5-11 s here (MALS sweeps over 42 cores); it used to poll only
// between steps.
TEST(helmholtz_3d_is_cancelled_inside_an_implicit_step_at_16384_cubed) {
  const Params p{{"n_bits", 14.0},        {"nu", 1e-3},          {"dt", 1e-3}, {"steps", 1000.0}, {"max_rank", 256.0},
                 {"initial", "gaussian"}, {"source", "gaussian"}};
  const Outcome o = cancel_after("helmholtz_3d", p, From::FirstStep, 1.0);
  CHECK(o.cancelled);
  CHECK_MSG(o.progress == 0, "the cancel was to land inside the first step");
  CHECK_MSG(o.latency >= 0 && o.latency < kBoundS, check::num(o.latency) + " s");
}

// The first run of a grid size builds the Green kernel of its projection (several seconds at 4096²
// here, before any step); this process has not built it yet.
TEST(navier_stokes_2d_is_cancelled_inside_the_green_kernel_build_at_4096_squared) {
  const Params p{{"n_bits", 12.0}, {"reynolds", 1000.0}, {"steps", 10.0}, {"dt", 1e-4}};
  const Outcome o = cancel_after("navier_stokes_2d", p, From::Start, 0.5);
  CHECK(o.cancelled);
  CHECK_MSG(o.progress == -1, "the cancel was to land in the set-up");
  CHECK_MSG(o.latency >= 0 && o.latency < kBoundS, check::num(o.latency) + " s");
}

// Runs stopped at points spread over the kernel build leave no kernel, or a whole one, in the cache:
// the next run's initial Taylor-Green state has exactly its energy, π², which a wrong kernel (the
// projection's inverse) would not give. The build is the first work of a run (its Stepper's), so
// the first `build` polls of a run are the build's.
TEST(a_navier_stokes_2d_run_after_runs_cancelled_in_the_kernel_build_finds_the_kernel_whole) {
  navier_stokes::Config c;
  c.n_bits = 9;
  c.reynolds = 100;
  c.dt = 0.003;
  c.steps = 1;
  int64_t build = 0;  // the polls of one build (as navier_stokes_2d.cpp makes it)
  {
    const std::function<void()> count = [&] { ++build; };
    const tts::detail::PollScope scope(&count);
    (void)qtt::periodic_green(navier_stokes::grid(c), navier_stokes::spacing(c), 2, 1e-12);
  }
  CHECK_MSG(build > 100, std::to_string(build) + " polls in the build");
  const Params p{{"n_bits", 9.0}, {"reynolds", 100.0}, {"steps", 1.0}, {"dt", c.dt}};
  for (int64_t at : {int64_t{1}, build / 3, 2 * build / 3}) {
    int64_t polls = 0;
    Hooks h;
    h.cancelled = [&] { return ++polls >= at; };
    h.progress = [&](int64_t, int64_t) {
      CHECK_MSG(false, "the run reached its steps, cancel at poll " + std::to_string(at));
    };
    CHECK_THROWS(Cancelled, run("navier_stokes_2d", p, h), "");
  }
  const navier_stokes::Stepper st(c);
  navier_stokes::State s = navier_stokes::initial_state(c);
  CHECK_REL(st.kinetic_energy(s), 3.14159265358979323846 * 3.14159265358979323846, 1e-10);
  st.step(s);
  CHECK_MSG(st.divergence_ratio(s) < 1e-6, "divergence " + check::num(st.divergence_ratio(s)));
}

// Each solver at its largest accepted grid, cancelled as it starts: the set-up (fields of 2 GiB a
// component at these sizes, the initial trains) polls as it goes instead of only before the first
// step. Two modes of wave numbers in the thousands at 16384³ took minutes to set up (the first poll
// came after them) before their sines were evaluated with an exact argument reduction. Each run asks
// for far more steps than it can take before the cancel, so that a fast host cannot finish it first.
TEST(every_solver_at_its_largest_grid_is_cancelled_within_a_bound_of_its_start) {
  const std::pair<std::string, Params> runs[] = {
      {"helmholtz_3d",
       {{"n_bits", 14.0},
        {"nu", 1e-3},
        {"dt", 1e-3},
        {"steps", 100000.0},
        {"max_rank", 256.0},
        {"modes", "[[4321, 3210, 2109, 1.0], [1234, 2345, 3456, -1.0]]"}}},
      {"poisson_2d", {{"n_bits", 14.0}, {"rhs", "gaussians"}}},
      {"euler_2d", {{"n_bits", 13.0}, {"problem", "kelvin_helmholtz"}, {"steps", 100000.0}}},
  };
  for (const auto& [solver, p] : runs) {
    const Outcome o = cancel_after(solver, p, From::Start, 0.2);
    CHECK_MSG(o.cancelled, solver + " was to be cancelled");
    CHECK_MSG(o.latency >= 0 && o.latency < kBoundS, solver + ": " + check::num(o.latency) + " s");
  }
}

// Beyond 2048² (one piece, the passes as fast as before) a pass over the grid polls between pieces
// of 2^22 points: at 4096² each of a step's three passes polls at least four times, where a step
// used to poll once; a V-cycle's finest level does the same.
TEST(poisson_2d_polls_between_the_pieces_of_each_pass_beyond_2048_squared) {
  for (const char* pre : {"none", "multigrid"}) {
    const int64_t iters = 3;
    const Params p{{"n_bits", 12.0},
                   {"rhs", "dipole"},
                   {"preconditioner", pre},
                   {"tol", 1e-14},
                   {"max_iters", static_cast<double>(iters)}};
    const PollLog log = run_counting_polls("poisson_2d", p);
    CHECK_MSG(log.polls >= iters * 3 * 4, std::string(pre) + ": " + std::to_string(log.polls) + " polls");
    CHECK_MSG(log.longest < kBoundS, std::string(pre) + ": " + check::num(log.longest) + " s");
  }
}

TEST_MAIN()
