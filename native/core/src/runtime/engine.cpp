// Backend facts and thread control.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/tt.hpp"

#ifndef TTS_VERSION
#define TTS_VERSION "0.0.0-dev"
#endif

namespace tts {

namespace detail {
namespace {
std::atomic<int> g_threads{0};
int g_calls = 0;  // CallShares alive; under g_calls_mu with OpenBLAS's pool size that follows it
std::mutex g_calls_mu;
thread_local int t_team = 0;  // this thread's call's share, 0 outside a CallShare

int base_threads() {
  static const int initial = omp_get_max_threads();  // OMP_NUM_THREADS, else every core
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : initial;
}
int share(int calls) { return std::max(1, base_threads() / std::max(1, calls)); }
}  // namespace
int threads() { return t_team > 0 ? t_team : base_threads(); }
}  // namespace detail

EngineInfo engine_info() {
  EngineInfo e;
  e.version = TTS_VERSION;
  e.backend = "cpu";
  std::string blas = openblas_get_config();
  const char* core = openblas_get_corename();
  if (core && *core) blas += std::string(" (") + core + ")";
  e.blas = blas;
  e.threads = detail::base_threads();
  return e;
}

void set_threads(int n) {
  if (n < 0) throw InvalidArgument("thread count must be >= 0 (0: all cores), got " + std::to_string(n));
  // 0 restores the default: OMP_NUM_THREADS when set, else every core.
  detail::g_threads.store(n, std::memory_order_relaxed);
  const int t = detail::base_threads();
  omp_set_num_threads(t);
  std::lock_guard<std::mutex> lock(detail::g_calls_mu);
  openblas_set_num_threads(detail::share(detail::g_calls));
}

// OpenBLAS's pool size is process-wide: setting it while another call is inside a BLAS routine only
// changes the team of that call's next routine.
CallShare::CallShare() : counted_(detail::t_team == 0) {
  if (!counted_) return;
  std::lock_guard<std::mutex> lock(detail::g_calls_mu);
  detail::t_team = detail::share(++detail::g_calls);
  openblas_set_num_threads(detail::t_team);
}

CallShare::~CallShare() {
  if (!counted_) return;
  detail::t_team = 0;
  std::lock_guard<std::mutex> lock(detail::g_calls_mu);
  openblas_set_num_threads(detail::share(--detail::g_calls));
}

int calls_running() {
  std::lock_guard<std::mutex> lock(detail::g_calls_mu);
  return detail::g_calls;
}

}  // namespace tts
