// Private: choosing a truncation rank from singular values.
#pragma once

#include <cstdint>
#include <vector>

namespace tts::detail {

struct RankChoice {
  int64_t r = 1;
  double discarded_sq = 0;  // sum of sigma_i^2 for i >= r
  bool capped = false;      // max_rank cut below the tolerance's choice
};

// sigma descending. Smallest r >= 1 with sum_{i>=r} sigma_i^2 <= delta_sq, then min(r, max_rank)
// when max_rank > 0. The tail is summed from the smallest value up (no cancellation).
inline RankChoice choose_rank(const double* sigma, int64_t len, double delta_sq, int64_t max_rank) {
  RankChoice c;
  double tail = 0;
  int64_t r = len;
  for (int64_t i = len - 1; i >= 1; --i) {
    const double t = tail + sigma[i] * sigma[i];
    if (t > delta_sq) break;
    tail = t;
    r = i;
  }
  if (r < 1) r = 1;
  if (max_rank > 0 && r > max_rank) {
    r = max_rank;
    c.capped = true;
  }
  double disc = 0;
  for (int64_t i = len - 1; i >= r; --i) disc += sigma[i] * sigma[i];
  c.r = r;
  c.discarded_sq = disc;
  return c;
}

}  // namespace tts::detail
