// Private: cheap structural checks shared by the contraction, rounding and reconstruction code.
#pragma once

#include <string>

#include "ttstore/tt.hpp"

namespace tts::detail {

// Shapes chain and core sizes match (no scan of the values: validate() does that).
inline void check_structure(const TensorTrain& t, const std::string& name) {
  const int d = t.d();
  if (d < 1) throw InvalidArgument(name + " has no cores");
  if (static_cast<int>(t.ranks.size()) != d + 1 || static_cast<int>(t.cores.size()) != d) {
    throw InvalidArgument(name + " has " + std::to_string(t.modes.size()) + " modes, " +
                          std::to_string(t.ranks.size()) + " ranks and " + std::to_string(t.cores.size()) +
                          " cores (expected d, d + 1, d)");
  }
  if (t.ranks[0] != 1 || t.ranks[d] != 1) {
    throw InvalidArgument(name + ": boundary ranks must be 1");
  }
  for (int k = 0; k < d; ++k) {
    const int64_t r0 = t.ranks[k], n = t.modes[k], r1 = t.ranks[k + 1];
    if (r0 < 1 || n < 1 || r1 < 1 || static_cast<int64_t>(t.cores[k].size()) != r0 * n * r1) {
      throw InvalidArgument(name + ": core " + std::to_string(k) + " has " + std::to_string(t.cores[k].size()) +
                            " elements, expected " + std::to_string(r0) + "*" + std::to_string(n) + "*" +
                            std::to_string(r1) + "=" + std::to_string(r0 * n * r1));
    }
  }
}

// Throws "<what>: mode sizes differ ([..] vs [..])" unless the two mode lists are equal.
inline void check_same_modes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& what) {
  if (a != b) {
    std::string ma, mb;
    for (auto n : a) ma += (ma.empty() ? "" : ",") + std::to_string(n);
    for (auto n : b) mb += (mb.empty() ? "" : ",") + std::to_string(n);
    throw InvalidArgument(what + ": mode sizes differ ([" + ma + "] vs [" + mb + "])");
  }
}
inline void check_same_modes(const TensorTrain& a, const TensorTrain& b, const std::string& what) {
  check_same_modes(a.modes, b.modes, what);
}

}  // namespace tts::detail
