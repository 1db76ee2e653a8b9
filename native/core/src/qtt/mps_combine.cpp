// Linear combinations of MPS: the block-diagonal sum (ranks add), then TT rounding.
#include <algorithm>
#include <string>

#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

Mps combine(const std::vector<double>& c, const std::vector<const Mps*>& x, const SvdOptions& opt) {
  if (c.size() != x.size() || x.empty()) throw InvalidArgument("combine: one coefficient per term, at least one term");
  const int d = x[0]->d();
  for (const Mps* t : x) {
    if (t->modes != x[0]->modes) throw InvalidArgument("combine: terms have different modes");
  }
  Mps s;
  s.modes = x[0]->modes;
  if (d == 1) {  // one core: a plain weighted sum
    s.ranks = {1, 1};
    s.cores.assign(1, std::vector<double>(x[0]->cores[0].size(), 0.0));
    for (std::size_t t = 0; t < x.size(); ++t) {
      for (std::size_t e = 0; e < s.cores[0].size(); ++e) s.cores[0][e] += c[t] * x[t]->cores[0][e];
    }
    return s;
  }
  s.ranks.assign(static_cast<std::size_t>(d + 1), 0);
  s.ranks[0] = s.ranks[d] = 1;
  for (int k = 1; k < d; ++k) {
    for (const Mps* t : x) s.ranks[k] += t->ranks[k];
  }
  for (int k = 0; k < d; ++k) {
    const int64_t R0 = s.ranks[k], n = s.modes[k], R1 = s.ranks[k + 1];
    std::vector<double> core(static_cast<std::size_t>(R0 * n * R1), 0.0);
    int64_t o0 = 0, o1 = 0;  // this term's block offsets
    for (std::size_t t = 0; t < x.size(); ++t) {
      const Mps& m = *x[t];
      const int64_t r0 = m.ranks[k], r1 = m.ranks[k + 1];
      // The coefficient rides on the first core; the first core is a row of blocks, the last a
      // column, the others block-diagonal.
      const double w = (k == 0) ? c[t] : 1.0;
      for (int64_t a = 0; a < r0; ++a) {
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t b = 0; b < r1; ++b) {
            core[((o0 + a) * n + i) * R1 + (o1 + b)] = w * m.cores[k][(a * n + i) * r1 + b];
          }
        }
      }
      if (k > 0) o0 += r0;
      if (k < d - 1) o1 += r1;
    }
    s.cores.push_back(std::move(core));
  }
  return round(s, opt);
}

Mps round_to(const Mps& x, double abs_tol, int64_t max_rank) {
  const double n = norm(x);
  SvdOptions o;
  o.tol = n > 0 ? std::min(0.5, abs_tol / n) : 0.5;
  o.max_rank = max_rank;
  return round(x, o);
}

}  // namespace tts::qtt
