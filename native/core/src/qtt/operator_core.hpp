// Private: one MPO core applied to the middle indices of a block, shared by the zip-up (zip_up.cpp)
// and the fitting sweep (mpo_fit.cpp, which also applies the adjoint, as the core with its bonds
// swapped).
#pragma once

#include <cstdint>
#include <vector>

namespace tts::detail {

// out[r, i, w1, s] = sum_{w, j} in[r, w, j, s] W[w, i, j, w1], W an MPO core [R0, n, n, R1]: by
// axpys over W's nonzeros for sparse cores (the stencils), by one GEMM per nonzero (i, j) slice for
// dense ones (operator_core.cpp). `out` is resized to rr * n * R1 * s1.
void apply_operator_core(int64_t rr, int64_t R0, int64_t n, int64_t R1, int64_t s1, const std::vector<double>& in,
                         const std::vector<double>& W, std::vector<double>& out);

}  // namespace tts::detail
