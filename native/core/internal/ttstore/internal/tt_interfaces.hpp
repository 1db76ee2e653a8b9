// Private: the two halves of a tensor train's reconstruction, shared by the CPU core's fused
// reconstruction and the CUDA backend's (which uploads the interfaces and forms the blocks on the
// device). The array is L (n_1..n_p x r_p) times R (r_p x n_p+1..n_d), both in mode order.
#pragma once

#include <vector>

#include "ttstore/tt.hpp"

namespace tts::detail {

// The split p that keeps both interfaces small (and the halves balanced); from the modes and ranks
// alone, so a train's rebuild cost is known from its header (train_work).
int choose_split(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks);
inline int choose_split(const TensorTrain& tt) { return choose_split(tt.modes, tt.ranks); }
// <a, b> of two trains of equal modes starts over the left interfaces of both (rows n_1..n_k) while
// they have fewer rows than the ranks at their bond (ranks the first modes cannot fill, which a
// client's train may carry), then goes on over M_k = La_k^T Lb_k (ra_k x rb_k) core by core. So a
// train with large ranks over few values costs what its values do, never an r x r matrix.
// contraction_start: that bond k (>= 1, or d); contraction_work: the multiply-adds of the whole
// contraction, both from the modes and ranks alone.
int contraction_start(const std::vector<int64_t>& modes, const std::vector<int64_t>& ra,
                      const std::vector<int64_t>& rb);
double contraction_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ra,
                        const std::vector<int64_t>& rb);
// <a, b> through BLAS in that order (interfaces, then two GEMMs per core), no checks: the contraction
// for ranks past the loop kernels' (detail::contract in inner_kernels.hpp takes the one that fits).
double contract_blas(const TensorTrain& a, const TensorTrain& b);
// The multiply-adds of distance(a, b) for trains of these ranks (its difference train orthogonalised,
// or three contractions), from the modes and ranks alone.
double distance_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ra, const std::vector<int64_t>& rb);
// Cores [0, p) as (n_1..n_p) x r_p, rows in mode order.
std::vector<double> left_interface(const TensorTrain& tt, int p);
// Cores [p, d) as r_p x (n_p+1..n_d), columns in mode order.
std::vector<double> right_interface(const TensorTrain& tt, int p);

}  // namespace tts::detail
