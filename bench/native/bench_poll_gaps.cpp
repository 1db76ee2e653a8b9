// The longest stretch of a solver's work between two polls of Hooks::cancelled (which is where a
// cancel or a pause takes effect), for any params (a CMake target, not a ctest: see bench/native/README.md):
//   sh scripts/openblas-env.sh build/cmake/bench/bench_poll_gaps [--seconds S] <solver> name=value ...
// Values that parse as numbers are numbers, the rest strings. The run is cancelled at its first poll
// after S seconds (default 30), so a long run is sampled rather than finished. Prints the time to the
// first poll, the longest gaps with the time they ended, and the time from the cancel to the throw;
// gaps of 0.5 s or more, and the first steps' progress, also as they happen (stderr).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ttstore/sim.hpp"

using namespace tts::sim;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  double budget = 30;
  int a = 1;
  if (a + 1 < argc && std::strcmp(argv[a], "--seconds") == 0) {
    budget = std::atof(argv[a + 1]);
    a += 2;
  }
  if (a >= argc) {
    std::fprintf(stderr, "usage: bench_poll_gaps [--seconds S] <solver> name=value ...\n");
    return 2;
  }
  const std::string solver = argv[a++];
  Params p;
  for (; a < argc; ++a) {
    const char* eq = std::strchr(argv[a], '=');
    if (eq == nullptr) {
      std::fprintf(stderr, "param %s is not name=value\n", argv[a]);
      return 2;
    }
    const std::string name(static_cast<const char*>(argv[a]), eq), value(eq + 1);
    char* end = nullptr;
    const double d = std::strtod(value.c_str(), &end);
    if (!value.empty() && *end == '\0') {
      p[name] = d;
    } else {
      p[name] = value;
    }
  }

  struct Gap {
    double seconds, ended_at;
    long poll;
  };
  std::vector<Gap> gaps;
  const Clock::time_point t0 = Clock::now();
  Clock::time_point last = t0, cancelled_at{};
  long polls = 0;
  bool cancel = false;
  Hooks h;
  h.cancelled = [&] {
    const Clock::time_point now = Clock::now();
    gaps.push_back(
        {std::chrono::duration<double>(now - last).count(), std::chrono::duration<double>(now - t0).count(), polls++});
    // Live, so that a run killed from outside still shows where it was slow.
    if (gaps.back().seconds >= 0.5) {
      std::fprintf(stderr, "  (gap %.3f s before poll %ld at %.2f s)\n", gaps.back().seconds, gaps.back().poll,
                   gaps.back().ended_at);
    }
    last = now;
    if (!cancel && std::chrono::duration<double>(now - t0).count() > budget) {
      cancel = true;
      cancelled_at = now;
    }
    return cancel;
  };
  h.progress = [&](int64_t done, int64_t total) {
    static int64_t last_done = -1;
    if (done != last_done && done <= 3) {
      std::fprintf(stderr, "  (progress %lld/%lld at %.2f s)\n", static_cast<long long>(done),
                   static_cast<long long>(total), std::chrono::duration<double>(Clock::now() - t0).count());
    }
    last_done = done;
  };
  const char* ended = "completed";
  try {
    (void)run(solver, p, h);
  } catch (const Cancelled&) {
    ended = "cancelled";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "failed: %s\n", e.what());
    return 1;
  }
  const Clock::time_point t1 = Clock::now();
  const double total = std::chrono::duration<double>(t1 - t0).count();
  std::printf("%s %s after %.2f s, %ld polls\n", solver.c_str(), ended, total, polls);
  if (!gaps.empty()) std::printf("  first poll after %.3f s\n", gaps.front().seconds);
  if (cancel) std::printf("  cancel to throw: %.3f s\n", std::chrono::duration<double>(t1 - cancelled_at).count());
  else std::printf("  last poll to the end: %.3f s\n", std::chrono::duration<double>(t1 - last).count());
  std::sort(gaps.begin(), gaps.end(), [](const Gap& x, const Gap& y) { return x.seconds > y.seconds; });
  for (std::size_t k = 0; k < gaps.size() && k < 8; ++k) {
    std::printf("  gap %.3f s before poll %ld (at %.2f s)\n", gaps[k].seconds, gaps[k].poll, gaps[k].ended_at);
  }
  return 0;
}
