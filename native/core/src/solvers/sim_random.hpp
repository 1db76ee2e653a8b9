// Private: the seeded generator behind every "seed" param. SplitMix64 (Steele, Lea, Flood 2014):
// the same stream on every platform and compiler, unlike the std distributions.
#pragma once

#include <cstdint>

namespace tts::sim::detail {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi), 53 random bits.
  double uniform(double lo = 0.0, double hi = 1.0) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t s_;
};

}  // namespace tts::sim::detail
