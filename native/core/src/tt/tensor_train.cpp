// TensorTrain bookkeeping: sizes, validation, float32 rounding.
#include <cmath>
#include <limits>

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

}  // namespace tts
