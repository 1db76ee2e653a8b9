// Private: the train-against-train contraction <q, c>, for one query and many candidates or one pair.
//
// M_k = sum_i Q_k[:, i, :]^T M_{k-1} C_k[:, i, :], from M_0 = [1]; <q, c> = M_d. Per core that is
// 2 n r^3 multiply-adds; the query is converted to float64 once (and padded to rows of 8 when every
// rank is <= 8, the common case of smooth fields), candidates are read in place (float32 or
// float64). The rank <= 8 kernels hold one row of M in one AVX-512 register (or two AVX2 registers),
// chosen at run time from the CPU; the AVX-512 one runs site by site with the exact ranks as
// template parameters and takes two candidates of equal ranks at once (inner_trains_2). Elsewhere
// plain loops the compiler vectorises.
#pragma once

#include "ttstore/query.hpp"

namespace tts::detail {

struct PreparedTrain {
  const Operand* src = nullptr;
  std::vector<double> cores;   // float64 copy of the cores, at src->offsets()
  bool pad8 = false;           // every rank <= 8: padded copy below is filled
  std::vector<double> padded;  // core k at padded_offsets[k]: [r_k][n_k][8], zero beyond r_{k+1}
  std::vector<int64_t> padded_offsets;
};

PreparedTrain prepare_train(const Operand& q);

// Largest rank the loop kernels take; above it the contraction goes through BLAS (not inside a
// parallel region: OpenBLAS contends when called from several OpenMP threads at once).
constexpr int64_t kLoopMaxRank = 64;

// Largest rank for which one pair alone (not a batch) goes through the loop kernels: up to it the
// rank <= 8 kernels beat BLAS's call overhead; above it BLAS's blocked GEMMs win (measured in
// docs/performance.md), while a batch keeps the loops to kLoopMaxRank, since it runs many pairs at once.
constexpr int64_t kPairLoopMaxRank = 8;

// <a, b> for one pair of trains of equal modes (not checked here), any ranks: the loop kernels up to
// kPairLoopMaxRank, else contract_blas. With score_batch's batched loop kernels, the one
// train-against-train contraction: inner, norm and score_batch, and tt.hpp's dot, norm, distance and
// dot_batch, all come here. The TensorTrain form reads the cores in place on the BLAS path.
double contract(const Operand& a, const Operand& b);
double contract(const TensorTrain& a, const TensorTrain& b);

// <q, c> for two trains of equal modes with ranks <= kLoopMaxRank; safe to call from many threads.
double inner_trains(const PreparedTrain& q, const Operand& c);

// <q, a> and <q, b> into out[0], out[1]: when a and b have equal ranks and dtype (equal rank_key()
// is a quick sign of it) the two contractions run interleaved, which keeps more multiply-adds in
// flight than one after the other; otherwise one by one.
void inner_trains_2(const PreparedTrain& q, const Operand& a, const Operand& b, double* out);

// Asks the CPU to start loading c's cores (up to 32 KiB) into cache. A batch calls it for the next
// candidate before contracting the current one: candidates sit in separate heap blocks, so the
// hardware prefetcher cannot see the next one coming, and a top-K over thousands of them streams
// more than the last-level cache holds.
void prefetch_cores(const Operand& c);

// The kernels for a pair whose ranks are all <= 8; inner_trains takes the best one the CPU has.
enum class Pad8Kernel : uint8_t { Loops, Avx2, Avx512 };
Pad8Kernel best_pad8_kernel();
bool pad8_kernel_supported(Pad8Kernel k);
const char* pad8_kernel_name(Pad8Kernel k);  // "loops", "avx2", "avx512"
// inner_trains with a given kernel for rank <= 8 pairs (tests compare them); Loops for the rest.
double inner_trains_with(const PreparedTrain& q, const Operand& c, Pad8Kernel k);
// inner_trains_2 with a given kernel; each result has the bits inner_trains_with gives it alone.
void inner_trains_2_with(const PreparedTrain& q, const Operand& a, const Operand& b, double* out, Pad8Kernel k);

}  // namespace tts::detail
