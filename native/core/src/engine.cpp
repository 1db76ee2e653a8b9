// Backend facts and thread control.
#include <omp.h>

#include <atomic>

#include "linalg.hpp"
#include "threads.hpp"
#include "ttstore/tt.hpp"

#ifndef TTS_VERSION
#define TTS_VERSION "0.0.0-dev"
#endif

namespace tts {

namespace detail {
namespace {
std::atomic<int> g_threads{0};
}
int threads() {
  static const int initial = omp_get_max_threads();  // OMP_NUM_THREADS, else every core
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : initial;
}
}  // namespace detail

EngineInfo engine_info() {
  EngineInfo e;
  e.version = TTS_VERSION;
  e.backend = "cpu";
  std::string blas = openblas_get_config();
  const char* core = openblas_get_corename();
  if (core && *core) blas += std::string(" (") + core + ")";
  e.blas = blas;
  e.threads = detail::threads();
  return e;
}

void set_threads(int n) {
  if (n < 0) throw InvalidArgument("thread count must be >= 0 (0: all cores), got " + std::to_string(n));
  // 0 restores the default: OMP_NUM_THREADS when set, else every core.
  detail::g_threads.store(n, std::memory_order_relaxed);
  const int t = detail::threads();
  omp_set_num_threads(t);
  openblas_set_num_threads(t);
}

}  // namespace tts
