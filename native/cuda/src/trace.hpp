// Private: with TTSTORE_CUDA_TRACE=1 in the environment, each call of the CUDA backend that keeps a
// Trace prints one line to stderr saying where its wall time went (phases the caller marks after a
// stream synchronisation), so a short run on a GPU machine shows which phase to work on. Off, a
// Trace costs one branch per mark.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace tts::cuda::detail {

inline bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("TTSTORE_CUDA_TRACE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

class Trace {
 public:
  explicit Trace(const char* what) : what_(what), on_(tracing()), last_(now()), start_(last_) {}
  ~Trace() {
    if (!on_) return;
    std::string line = "ttstore cuda " + what_ + ": total " + ms(now() - start_);
    for (const auto& [phase, t] : phases_) line += ", " + phase + " " + ms(t);
    if (!notes_.empty()) line += " |" + notes_;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Adds the time since the previous mark (or the start) to `phase`; returns it in milliseconds.
  double mark(const char* phase) {
    if (!on_) return 0;
    const auto t = now();
    const double d = std::chrono::duration<double, std::milli>(t - last_).count();
    last_ = t;
    for (auto& [p, sum] : phases_) {
      if (p == phase) {
        sum += d;
        return d;
      }
    }
    phases_.emplace_back(phase, d);
    return d;
  }
  // Appends free text (a step's shape and times, say) after the phase totals.
  void note(const std::string& text) {
    if (on_) notes_ += " " + text;
  }
  bool on() const { return on_; }

 private:
  using Clock = std::chrono::steady_clock;
  static Clock::time_point now() { return Clock::now(); }
  static std::string ms(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f ms", v);
    return b;
  }
  static std::string ms(Clock::duration d) { return ms(std::chrono::duration<double, std::milli>(d).count()); }

  std::string what_;
  bool on_;
  Clock::time_point last_, start_;
  std::vector<std::pair<std::string, double>> phases_;
  std::string notes_;
};

}  // namespace tts::cuda::detail
