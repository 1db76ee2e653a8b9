// The memory bar on incompressible data: a 2^24-element float32 array of noise is found
// incompressible (the sweep stops once its cores would outweigh the input) without ever holding
// the m x m singular vectors or LAPACK's 5 m^2 workspace of the largest steps: the peak stays under
// the bar of 3x the input (one float64 working copy, 2x, plus the factors of the 1024-row step).
#include <sys/resource.h>

#include <chrono>
#include <random>

#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

static double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

TEST(noise_of_2_pow_24_float32_is_incompressible_within_the_memory_bar) {
  const int64_t N = int64_t{1} << 24;
  std::vector<float> x(static_cast<std::size_t>(N));
  std::mt19937_64 gen(7);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (float& v : x) v = noise(gen);
  const double input_bytes = static_cast<double>(N) * 4;
  {
    std::vector<float> s(4096, 1.0f);
    compress(ArrayView{s.data(), DType::F32, 4096}, make_layout({4096}, LayoutKind::RowMajor), SvdOptions{1e-6, 0});
  }
  const double before = peak_rss_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  const CompressResult c =
      compress(ArrayView{x.data(), DType::F32, N}, make_layout({N}, LayoutKind::RowMajor), SvdOptions{1e-6, 0});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double grew = peak_rss_bytes() - before;
  std::printf("  compress 2^24 float32 noise at 1e-6: %.3f s, peak RSS +%.1f MB (%.3f x input)\n", secs,
              grew / 1048576.0, grew / input_bytes);
  CHECK(!c.compressible);
  CHECK(c.tt.cores.empty());
  // W (2x input) + at the 1024-row step R, V^T and dgesdd's workspace (7 x 8 MiB) + chunk buffers
  CHECK_MSG(grew <= 3.0 * input_bytes, "peak grew by " + check::num(grew / 1048576.0) + " MB");
}

TEST_MAIN()
