// TensorTrain bookkeeping: sizes, validation, float32 rounding.
#include <cmath>
#include <limits>

#include "ttstore/internal/tt_sum.hpp"
#include "ttstore/tt.hpp"

namespace tts {

int64_t TensorTrain::max_rank() const {
  int64_t r = 0;
  for (int64_t x : ranks) r = x > r ? x : r;
  return r;
}

int64_t TensorTrain::numel() const {
  int64_t p = 1;
  for (int64_t n : modes) p *= n;
  return p;
}

int64_t TensorTrain::core_elements() const {
  int64_t s = 0;
  for (const auto& c : cores) s += static_cast<int64_t>(c.size());
  return s;
}

int64_t TensorTrain::stored_bytes() const { return core_elements() * (f32 ? 4 : 8); }

void TensorTrain::validate() const {
  const int nd = d();
  if (nd < 1) throw InvalidArgument("a tensor train needs at least one core");
  if (static_cast<int>(ranks.size()) != nd + 1) {
    throw InvalidArgument("ranks has " + std::to_string(ranks.size()) + " entries, expected " + std::to_string(nd + 1) +
                          " (one more than the " + std::to_string(nd) + " modes)");
  }
  if (static_cast<int>(cores.size()) != nd) {
    throw InvalidArgument("got " + std::to_string(cores.size()) + " cores for " + std::to_string(nd) + " modes");
  }
  if (ranks[0] != 1 || ranks[nd] != 1) {
    throw InvalidArgument("boundary ranks must be 1, got r_0 = " + std::to_string(ranks[0]) + " and r_" +
                          std::to_string(nd) + " = " + std::to_string(ranks[nd]));
  }
  int64_t numel = 1;
  for (int k = 0; k < nd; ++k) {
    const int64_t n = modes[k], r0 = ranks[k], r1 = ranks[k + 1];
    if (n < 1) {
      throw InvalidArgument("mode " + std::to_string(k) + " has size " + std::to_string(n) + "; sizes must be >= 1");
    }
    if (numel > std::numeric_limits<int64_t>::max() / n) {
      throw InvalidArgument("the modes describe more than 2^63 elements");
    }
    numel *= n;
    if (r1 < 1) {
      throw InvalidArgument("rank r_" + std::to_string(k + 1) + " is " + std::to_string(r1) + "; ranks must be >= 1");
    }
    const double expect_d = static_cast<double>(r0) * static_cast<double>(n) * static_cast<double>(r1);
    const int64_t expect = r0 * n * r1;
    if (expect_d > 9e15 || static_cast<int64_t>(cores[k].size()) != expect) {
      throw InvalidArgument("core " + std::to_string(k) + " has " + std::to_string(cores[k].size()) +
                            " elements, expected " + std::to_string(r0) + "*" + std::to_string(n) + "*" +
                            std::to_string(r1) + "=" + std::to_string(expect));
    }
    const auto& c = cores[k];
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (!std::isfinite(c[i])) {
        throw InvalidArgument("core " + std::to_string(k) + " element " + std::to_string(i) + " is not finite");
      }
      if (f32 && static_cast<double>(static_cast<float>(c[i])) != c[i]) {
        throw InvalidArgument("core " + std::to_string(k) + " element " + std::to_string(i) +
                              " is not a float32 value but the train is marked f32");
      }
    }
  }
}

TensorTrain to_f32(const TensorTrain& tt) {
  TensorTrain out = tt;
  for (auto& c : out.cores) {
    for (double& v : c) v = static_cast<double>(static_cast<float>(v));
  }
  out.f32 = true;
  return out;
}

TensorTrain detail::linear_combination(const std::vector<double>& c, const std::vector<const TensorTrain*>& x) {
  if (c.size() != x.size() || x.empty()) throw InvalidArgument("combine: one coefficient per term, at least one term");
  const int d = x[0]->d();
  for (const TensorTrain* t : x) {
    if (t->modes != x[0]->modes) throw InvalidArgument("combine: terms have different modes");
  }
  TensorTrain s;
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
    for (const TensorTrain* t : x) s.ranks[k] += t->ranks[k];
  }
  for (int k = 0; k < d; ++k) {
    const int64_t R0 = s.ranks[k], n = s.modes[k], R1 = s.ranks[k + 1];
    std::vector<double> core(static_cast<std::size_t>(R0 * n * R1), 0.0);
    int64_t o0 = 0, o1 = 0;  // this term's block offsets
    for (std::size_t t = 0; t < x.size(); ++t) {
      const TensorTrain& m = *x[t];
      const int64_t r0 = m.ranks[k], r1 = m.ranks[k + 1];
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
  return s;
}

}  // namespace tts
