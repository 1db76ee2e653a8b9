// Linear combinations of MPS: the block-diagonal sum (detail::linear_combination), then TT rounding.
#include <algorithm>
#include <string>

#include "ttstore/internal/tt_sum.hpp"
#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

Mps combine(const std::vector<double>& c, const std::vector<const Mps*>& x, const SvdOptions& opt) {
  return round(detail::linear_combination(c, x), opt);
}

Mps round_to(const Mps& x, double abs_tol, int64_t max_rank) {
  const double n = norm(x);
  SvdOptions o;
  o.tol = n > 0 ? std::min(0.5, abs_tol / n) : 0.5;
  o.max_rank = max_rank;
  return round(x, o);
}

}  // namespace tts::qtt
