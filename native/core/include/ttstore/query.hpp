// Similarity on the stored representation: inner products of trains (core against core) and of
// trains against arrays kept uncompressed, batched over many candidates, and the three metrics.
#pragma once

#include <memory>

#include "ttstore/tt.hpp"

namespace tts {

class Operand;
namespace detail {
// tt's cores as a train operand for the core's own contractions (dot, norm, dot_batch): shapes as the
// caller checked them, values not scanned, so a NaN core gives a NaN inner product as it did before.
Operand operand_of(const TensorTrain& tt);
}  // namespace detail

// One side of a query contraction, in one owned block, immutable once built (so any number of
// threads may read it).
// - Train: the cores back to back as stored (core k is [r_k, n_k, r_{k+1}] row-major), float32 or
//   float64; the contraction reads float32 cores in place and computes in float64.
// - Dense: the values of an array stored uncompressed, float64, in mode order (the layout's order),
//   so that it contracts with a train of the same modes without any reshuffling.
class Operand {
 public:
  enum class Kind : uint8_t { Train, Dense };

  // Copies the cores into one block; throws InvalidArgument unless ranks chain (r_0 = r_d = 1),
  // sizes are positive and every value is finite. cores[k] points at r_k n_k r_{k+1} elements of
  // float32 or float64 (one type for all).
  static Operand train(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                       const std::vector<const void*>& cores, bool f32);
  static Operand train(const TensorTrain& tt);
  // Gathers `a` into mode order as float64. Throws InvalidArgument on NaN/Inf.
  static Operand dense(const ArrayView& a, const QttLayout& layout);

  Kind kind() const { return kind_; }
  bool is_train() const { return kind_ == Kind::Train; }
  int d() const { return static_cast<int>(modes_.size()); }
  const std::vector<int64_t>& modes() const { return modes_; }
  const std::vector<int64_t>& ranks() const { return ranks_; }  // Train: d + 1 entries; Dense: empty
  int64_t max_rank() const { return max_rank_; }
  // A hash of the ranks and the dtype (Train; equal for equal ones, unequal ones may collide):
  // score_batch pairs candidates that contract with the same steps by it.
  uint64_t rank_key() const { return rank_key_; }
  bool f32() const { return f32_; }
  int64_t numel() const;  // product of the modes
  // Train: start of core k (an element offset into f32_data() or f64_data()); offsets()[d] = total.
  const std::vector<int64_t>& offsets() const { return offsets_; }
  // Elements held: the cores' (Train) or the values' (Dense).
  int64_t elements() const { return static_cast<int64_t>(f32_ ? f32v_.size() : f64v_.size()); }
  const float* f32_data() const { return f32v_.data(); }
  const double* f64_data() const { return f64v_.data(); }  // Train f64 cores, or the Dense values
  // Heap bytes this operand holds (what a cache counts).
  int64_t bytes() const;
  // A float64 TensorTrain copy (Train only).
  TensorTrain to_train() const;

 private:
  friend Operand detail::operand_of(const TensorTrain& tt);
  // train() without the scan of the values.
  static Operand assemble(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                          const std::vector<const void*>& cores, bool f32);

  Kind kind_ = Kind::Train;
  bool f32_ = false;
  std::vector<int64_t> modes_, ranks_, offsets_;
  int64_t max_rank_ = 0;
  uint64_t rank_key_ = 0;
  std::vector<float> f32v_;
  std::vector<double> f64v_;
};

// <a, b> for operands of equal modes: two trains O(d n r^3) (never a dense rebuild; the contraction
// tt.hpp's dot and norm also take), a train and a dense array O(numel r), two dense arrays O(numel).
// Throws InvalidArgument when the modes differ.
double inner(const Operand& a, const Operand& b);
// ||a||_2 from the same contractions.
double norm(const Operand& a);

enum class Metric : uint8_t { Dot, Cosine, Euclidean };
Metric metric_from_name(const std::string& name);  // "dot" | "cosine" | "euclidean"

// The metric of q against every candidate, in one call, parallel over candidates. q_norm and
// norms[j] are ||q|| and ||c_j|| (as kept with the entries, so cosine costs one inner product).
// cosine: <q,c> / (||q|| ||c||) clamped to [-1, 1], 0 when either norm is 0.
// euclidean: sqrt(max(0, ||q||^2 + ||c||^2 - 2 <q,c>)); for two trains whose subtraction would lose
// more than half of the digits (near duplicates) it is recomputed from the difference train, for
// two dense arrays it is summed directly, so near duplicates keep their accuracy.
// dot: <q,c>. Throws InvalidArgument when a candidate's modes differ from q's.
// known_dots (optional, one per candidate): <q, c_j> computed elsewhere (a GPU backend); NaN entries
// are computed here.
std::vector<double> score_batch(const Operand& q, double q_norm, const std::vector<const Operand*>& cands,
                                const std::vector<double>& norms, Metric metric,
                                const std::vector<double>* known_dots = nullptr);

// What score_batch spends on candidate c, in multiply-adds (a value copied counts as one), from the
// modes and ranks alone (microseconds for thousands of candidates), for the path it takes: two trains
// their contraction (plus float64 copies where BLAS takes over), a train and an array O(numel r), two
// arrays numel; with euclidean, two trains also the recomputation of a near duplicate from their
// difference, as if every candidate were one. So a top-K can score its candidates in turns of bounded
// work (ttstore/limits.hpp kMaxTurnWork). 0 when the modes differ (score_batch refuses the pair).
double score_work(const Operand& q, const Operand& c, Metric metric);

}  // namespace tts
