// Timing of poisson_2d's solve clock (stats.solve_s) over repeated solves in one process, the way a
// long-running engine sees them (a CMake target, not a ctest: see bench/native/README.md):
//   OMP_NUM_THREADS=2 build/cmake/bench/bench_poisson [reps]
// Each solve runs on a fresh std::thread, as in the addon (BENCH_SAME_THREAD=1: all on the main
// thread); a second argument picks one case by index. Prints the median and the best solve_s per case; the scipy
// baseline is bench/poisson_scipy.py.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ttstore/sim.hpp"
#include "ttstore/sim_poisson.hpp"

using namespace tts::sim;

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  const bool same_thread = std::getenv("BENCH_SAME_THREAD") != nullptr;  // else a fresh thread per solve
  const int only = argc > 2 ? std::atoi(argv[2]) : -1;                   // run one case (its index)
  struct Case {
    int n_bits;
    poisson::Rhs rhs;
    poisson::Preconditioner pre;
    const char* name;
  };
  const std::vector<Case> cases = {
      {9, poisson::Rhs::Manufactured, poisson::Preconditioner::None, "512^2 manufactured none"},
      {9, poisson::Rhs::Manufactured, poisson::Preconditioner::Multigrid, "512^2 manufactured multigrid"},
      {9, poisson::Rhs::Gaussians, poisson::Preconditioner::Multigrid, "512^2 gaussians multigrid"},
      {9, poisson::Rhs::Gaussians, poisson::Preconditioner::None, "512^2 gaussians none"},
      {11, poisson::Rhs::Manufactured, poisson::Preconditioner::None, "2048^2 manufactured none"},
      {11, poisson::Rhs::Manufactured, poisson::Preconditioner::Multigrid, "2048^2 manufactured multigrid"},
  };
  std::printf("| case | median solve_s | best solve_s | iters | residual |\n|---|---:|---:|---:|---:|\n");
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    if (only >= 0 && static_cast<std::size_t>(only) != ci) continue;
    const Case& k = cases[ci];
    poisson::Config c;
    c.n_bits = k.n_bits;
    c.rhs = k.rhs;
    c.tol = 1e-8;
    c.preconditioner = k.pre;
    const int r = k.n_bits > 9 || (k.rhs == poisson::Rhs::Gaussians && k.pre == poisson::Preconditioner::None)
                      ? std::max(3, reps / 5)
                      : reps;
    std::vector<double> t;
    Output o;
    for (int i = 0; i < r; ++i) {
      // Each solve on a thread of its own, as the addon runs a simulation (its OpenMP team is new).
      if (same_thread) {
        o = poisson::solve(c, {});
      } else {
        std::thread th([&] { o = poisson::solve(c, {}); });
        th.join();
      }
      t.push_back(o.stats.at("solve_s"));
    }
    std::sort(t.begin(), t.end());
    std::printf("| %s | %.6f | %.6f | %.0f | %.2e |\n", k.name, t[t.size() / 2], t.front(), o.stats.at("iterations"),
                o.stats.at("residual"));
  }
  return 0;
}
