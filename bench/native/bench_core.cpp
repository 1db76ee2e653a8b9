// Timing of the core on 2^24-element float32 fields (a CMake target, not a ctest: see bench/native/README.md):
//   OMP_NUM_THREADS=2 build/cmake/bench/bench_core
// Prints seconds per call, ranks and the measured error; compare with bench_numpy_ttsvd.py.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ttstore/tt.hpp"

using namespace tts;
using clk = std::chrono::steady_clock;

static double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }
static long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// "sin plus front": smooth waves plus a sharp tanh front (and optional noise), float32.
static std::vector<float> field(const std::string& kind, double noise) {
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t N = int64_t{1} << 24;
  std::vector<float> x(static_cast<std::size_t>(N));
  if (kind == "1d") {
    for (int64_t i = 0; i < N; ++i) {
      const double t = static_cast<double>(i) / N;
      x[i] = static_cast<float>(std::sin(2 * M_PI * 5 * t) + 0.3 * std::sin(2 * M_PI * 37 * t) +
                                std::tanh((t - 0.41) / 0.003) + noise * u(g));
    }
  } else {
    const int64_t n = 4096;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double a = static_cast<double>(i) / n, b = static_cast<double>(j) / n;
        x[i * n + j] = static_cast<float>(std::sin(2 * M_PI * (3 * a + 2 * b)) + 0.5 * std::cos(2 * M_PI * 7 * a * b) +
                                          std::tanh((a + 0.6 * b - 0.7) / 0.01) + noise * u(g));
      }
    }
  }
  return x;
}

int main(int argc, char** argv) {
  const std::string kind = argc > 1 ? argv[1] : "2d";
  const double noise = argc > 2 ? std::atof(argv[2]) : 0.0;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 1;
  const auto x = field(kind, noise);
  const std::vector<int64_t> shape =
      kind == "1d" ? std::vector<int64_t>{int64_t{1} << 24} : std::vector<int64_t>{4096, 4096};
  const QttLayout L = make_layout(shape, default_layout(shape));
  const ArrayView a{x.data(), DType::F32, static_cast<int64_t>(x.size())};
  std::printf("field %s noise %g, %s, %s, rss before %ld MB\n", kind.c_str(), noise, layout_name(L.kind),
              engine_info().blas.c_str(), peak_rss_mb());
  for (double tol : {1e-3, 1e-6}) {
    double best = 1e30;
    TensorTrain t;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = clk::now();
      t = qtt_svd(a, L, SvdOptions{tol, 0});
      best = std::min(best, since(t0));
    }
    auto t1 = clk::now();
    const Fingerprint f = fingerprint(t, L, a);
    const double tf = since(t1);
    t1 = clk::now();
    const CompressResult c = compress(a, L, SvdOptions{tol, 0});
    const double tc = since(t1);
    std::string ranks;
    for (auto rk : t.ranks) ranks += std::to_string(rk) + " ";
    std::printf(
        "tol %g: qtt_svd %.3f s, fingerprint %.3f s, compress %.3f s (f32 %d) | rel %.3g | max rank %lld | ranks %s| "
        "peak rss %ld MB\n",
        tol, best, tf, tc, c.tt.f32, f.relative_error, static_cast<long long>(t.max_rank()), ranks.c_str(),
        peak_rss_mb());
  }
  return 0;
}
