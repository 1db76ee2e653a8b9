// The memory bar: compressing a 2^24-element float32 array adds at most one float64 copy of it
// (2x the input's bytes) plus small buffers to the peak RSS. Also prints the time it took.
#include <sys/resource.h>

#include <chrono>

#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

static double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

TEST(peak_memory_of_a_2_pow_24_float32_compression) {
  const int64_t n = 4096, N = n * n;
  std::vector<float> x(static_cast<std::size_t>(N));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = static_cast<double>(i) / n, b = static_cast<double>(j) / n;
      x[i * n + j] = static_cast<float>(std::sin(2 * M_PI * (3 * a + 2 * b)) + std::tanh((a + 0.6 * b - 0.7) / 0.01));
    }
  }
  const double input_bytes = static_cast<double>(N) * 4;
  // Warm the libraries' own first-use allocations on a small problem, then take the baseline.
  {
    std::vector<float> s(4096, 1.0f);
    compress(ArrayView{s.data(), DType::F32, 4096}, make_layout({64, 64}, LayoutKind::Interleaved),
             SvdOptions{1e-6, 0});
  }
  const double before = peak_rss_bytes();
  const QttLayout L = make_layout({n, n}, LayoutKind::Interleaved);
  const auto t0 = std::chrono::steady_clock::now();
  const CompressResult c = compress(ArrayView{x.data(), DType::F32, N}, L, SvdOptions{1e-6, 0});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double grew = peak_rss_bytes() - before;
  std::printf(
      "  compress 2^24 float32 at 1e-6: %.3f s, max rank %lld, rel err %.3g, peak RSS +%.1f MB "
      "(%.3f x input)\n",
      secs, static_cast<long long>(c.tt.max_rank()), c.fingerprint.relative_error, grew / 1048576.0,
      grew / input_bytes);
  CHECK(c.compressible);
  CHECK(c.fingerprint.relative_error <= 1e-6);
  // one float64 working copy (2x the float32 input) plus a few MB of chunk buffers
  CHECK_MSG(grew <= 2.0 * input_bytes + 8.0 * 1048576.0, "peak grew by " + check::num(grew / 1048576.0) + " MB");
}

TEST_MAIN()
