// Inner products between operands of any kind, the three metrics, and the batched scoring of one
// query against many candidates (one call, parallel over candidates); and tt.hpp's dot, norm and
// dot_batch, which are the same contraction on a TensorTrain's cores.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include "ttstore/internal/inner_kernels.hpp"
#include "ttstore/internal/late_join.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/internal/tt_checks.hpp"
#include "ttstore/internal/tt_interfaces.hpp"
#include "ttstore/query.hpp"

namespace tts {
namespace {

double dense_dot(const Operand& a, const Operand& b) {
  return cblas_ddot(static_cast<int>(a.numel()), a.f64_data(), 1, b.f64_data(), 1);
}

// <x, t> for x in mode order: V_0 = x as 1 x numel; V_{k+1} = G_k^T V_k with V_k read as
// (r_k n_k) x rest, so each step is one GEMM and the cost is O(numel r), dominated by the first cores.
double dense_train(const Operand& x, const Operand& t) {
  const auto& modes = t.modes();
  const auto& r = t.ranks();
  std::vector<double> cur, next, core;
  const double* V = x.f64_data();
  int64_t rest = x.numel();
  for (int k = 0; k < t.d(); ++k) {
    const int64_t r0 = r[k], n = modes[k], r1 = r[k + 1];
    rest /= n;
    const int64_t len = t.offsets()[k + 1] - t.offsets()[k];
    core.resize(static_cast<std::size_t>(len));
    if (t.f32()) {
      std::copy(t.f32_data() + t.offsets()[k], t.f32_data() + t.offsets()[k + 1], core.begin());
    } else {
      std::copy(t.f64_data() + t.offsets()[k], t.f64_data() + t.offsets()[k + 1], core.begin());
    }
    next.resize(static_cast<std::size_t>(r1 * rest));
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r1), static_cast<int>(rest),
                static_cast<int>(r0 * n), 1.0, core.data(), static_cast<int>(r1), V, static_cast<int>(rest), 0.0,
                next.data(), static_cast<int>(rest));
    cur.swap(next);
    V = cur.data();
  }
  return V[0];
}

// dense_train's multiply-adds: core k turns (r_k n_k) x rest into r_k+1 x rest; and its float64
// copies of the cores.
double dense_train_work(const Operand& t) {
  const auto& modes = t.modes();
  const auto& r = t.ranks();
  double rest = static_cast<double>(t.numel()), w = static_cast<double>(t.elements());
  for (int k = 0; k < t.d(); ++k) {
    rest /= static_cast<double>(modes[k]);
    w += static_cast<double>(r[k]) * static_cast<double>(modes[k]) * static_cast<double>(r[k + 1]) * rest;
  }
  return w;
}

double dense_distance(const Operand& a, const Operand& b) {
  const double* x = a.f64_data();
  const double* y = b.f64_data();
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += (x[i] - y[i]) * (x[i] - y[i]);
  return std::sqrt(s);
}

// Work items of one or two train candidates: those of equal ranks two by two (detail::inner_trains_2
// runs them interleaved), in first-seen order; second = -1 for a single. rank_key() keys an
// open-addressing table sized by the distinct keys (a few hundred at most for smooth data), so
// pairing costs a few nanoseconds per candidate.
class PairUp {
 public:
  explicit PairUp(std::vector<std::array<int64_t, 2>>& work) : work_(work), keys_(256), open_(256, kEmpty) {
    work_.clear();
  }
  void add(int64_t j, uint64_t key) {
    std::size_t h = slot(key);
    if (open_[h] == kEmpty && 2 * (used_ + 1) > keys_.size()) {
      grow();
      h = slot(key);
    }
    if (open_[h] >= 0) {
      work_[static_cast<std::size_t>(open_[h])][1] = j;
      open_[h] = kNoneOpen;
      return;
    }
    if (open_[h] == kEmpty) ++used_;
    keys_[h] = key;
    open_[h] = static_cast<int64_t>(work_.size());
    work_.push_back({j, -1});
  }

 private:
  static constexpr int64_t kEmpty = -2, kNoneOpen = -1;
  std::size_t slot(uint64_t key) const {
    const std::size_t mask = keys_.size() - 1;
    std::size_t h = static_cast<std::size_t>(key ^ (key >> 29)) & mask;
    while (open_[h] != kEmpty && keys_[h] != key) h = (h + 1) & mask;
    return h;
  }
  void grow() {
    std::vector<uint64_t> keys(keys_.size() * 2);
    std::vector<int64_t> open(keys_.size() * 2, kEmpty);
    keys.swap(keys_);
    open.swap(open_);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (open[i] == kEmpty) continue;
      const std::size_t h = slot(keys[i]);
      keys_[h] = keys[i];
      open_[h] = open[i];
    }
  }
  std::vector<std::array<int64_t, 2>>& work_;
  std::vector<uint64_t> keys_;
  std::vector<int64_t> open_;  // per key: the work item waiting for a partner, or kNoneOpen
  std::size_t used_ = 0;
};

}  // namespace

double inner(const Operand& a, const Operand& b) {
  detail::check_same_modes(a.modes(), b.modes(), "inner");
  if (a.is_train() && b.is_train()) return detail::contract(a, b);
  if (!a.is_train() && !b.is_train()) return dense_dot(a, b);
  return a.is_train() ? dense_train(b, a) : dense_train(a, b);
}

double norm(const Operand& a) { return std::sqrt(std::max(inner(a, a), 0.0)); }

double dot(const TensorTrain& a, const TensorTrain& b) {
  detail::check_structure(a, "first tensor train");
  detail::check_structure(b, "second tensor train");
  detail::check_same_modes(a, b, "dot");
  return detail::contract(a, b);
}

double norm(const TensorTrain& a) {
  detail::check_structure(a, "tensor train");
  return std::sqrt(std::max(detail::contract(a, a), 0.0));
}

std::vector<double> dot_batch(const TensorTrain& q, const std::vector<const TensorTrain*>& cands) {
  detail::check_structure(q, "query tensor train");
  for (std::size_t j = 0; j < cands.size(); ++j) {
    const std::string name = "candidate " + std::to_string(j);
    if (!cands[j]) throw InvalidArgument(name + " is null");
    detail::check_structure(*cands[j], name);
    detail::check_same_modes(q, *cands[j], name);
  }
  std::vector<Operand> ops;
  ops.reserve(cands.size());
  for (const TensorTrain* c : cands) ops.push_back(detail::operand_of(*c));
  std::vector<const Operand*> ptrs;
  for (const Operand& o : ops) ptrs.push_back(&o);
  return score_batch(detail::operand_of(q), 0.0, ptrs, std::vector<double>(cands.size(), 0.0), Metric::Dot);
}

double score_work(const Operand& q, const Operand& c, Metric metric) {
  if (q.modes() != c.modes()) return 0;
  if (!q.is_train() && !c.is_train()) return static_cast<double>(q.numel());
  if (!q.is_train() || !c.is_train()) return dense_train_work(q.is_train() ? q : c);
  double w = detail::contraction_work(q.modes(), q.ranks(), c.ranks());
  const double copies = static_cast<double>(q.elements() + c.elements());  // to_train()'s float64 copies
  if (std::max(q.max_rank(), c.max_rank()) > detail::kLoopMaxRank) w += copies;
  if (metric == Metric::Euclidean) w += copies + detail::distance_work(q.modes(), q.ranks(), c.ranks());
  return w;
}

Metric metric_from_name(const std::string& name) {
  if (name == "dot") return Metric::Dot;
  if (name == "cosine") return Metric::Cosine;
  if (name == "euclidean") return Metric::Euclidean;
  throw InvalidArgument("metric must be cosine, euclidean or dot, got '" + name + "'");
}

std::vector<double> score_batch(const Operand& q, double q_norm, const std::vector<const Operand*>& cands,
                                const std::vector<double>& norms, Metric metric,
                                const std::vector<double>* known_dots) {
  const int64_t nc = static_cast<int64_t>(cands.size());
  if (norms.size() != cands.size()) {
    throw InvalidArgument("score_batch: " + std::to_string(cands.size()) + " candidates but " +
                          std::to_string(norms.size()) + " norms");
  }
  if (!std::isfinite(q_norm) || q_norm < 0)
    throw InvalidArgument("score_batch: the query norm must be finite and >= 0");
  if (known_dots && known_dots->size() != cands.size()) {
    throw InvalidArgument("score_batch: " + std::to_string(known_dots->size()) + " known dots for " +
                          std::to_string(cands.size()) + " candidates");
  }
  // One pass over the candidates sorts them: train pairs within the loop kernels' ranks into work
  // items that run in parallel (their modes are checked there, where their cores are read anyway);
  // the rest (a dense side, or huge ranks) go one by one through BLAS, which threads on its own.
  std::vector<double> dots(cands.size(), 0.0);
  std::vector<int64_t> blas_pairs;
  // Kept per calling thread (a fresh 10k-item list costs page faults); the team reads the caller's.
  thread_local std::vector<std::array<int64_t, 2>> kept;
  std::vector<std::array<int64_t, 2>>& work = kept;
  PairUp pairs(work);
  const bool q_train = q.is_train() && q.max_rank() <= detail::kLoopMaxRank;
  for (int64_t j = 0; j < nc; ++j) {
    if (j + 16 < nc) __builtin_prefetch(cands[j + 16], 0, 3);  // separate heap blocks: no hardware prefetch
    if (!cands[j]) throw InvalidArgument("score_batch: candidate " + std::to_string(j) + " is null");
    if (!std::isfinite(norms[j]) || norms[j] < 0) {
      throw InvalidArgument("score_batch: the norm of candidate " + std::to_string(j) + " must be finite and >= 0");
    }
    const Operand& c = *cands[j];
    const bool known = known_dots && !std::isnan((*known_dots)[j]);
    if (!known && q_train && c.is_train() && c.max_rank() <= detail::kLoopMaxRank) {
      pairs.add(j, c.rank_key());
      continue;
    }
    if (c.modes() != q.modes())
      detail::check_same_modes(q.modes(), c.modes(), "score_batch: candidate " + std::to_string(j));
    const bool both_dense = !q.is_train() && !c.is_train();
    if (metric == Metric::Euclidean && both_dense) continue;  // summed directly below
    if (known) {
      dots[j] = (*known_dots)[j];
      continue;
    }
    blas_pairs.push_back(j);
  }
  if (!work.empty()) {
    const detail::PreparedTrain pq = detail::prepare_train(q);
    const int64_t nw = static_cast<int64_t>(work.size());
    std::atomic<int64_t> bad{nc};  // the first candidate whose modes differ from q's
    // Not an OpenMP loop: its closing barrier would wait for a team thread the scheduler has not run
    // yet, on a shared machine a time slice longer than the whole batch (detail::late_join_for).
    detail::late_join_for(nw, 16, detail::threads(), [&](int64_t w0, int64_t w1) {
      for (int64_t w = w0; w < w1; ++w) {
        for (int64_t j : work[std::min(w + 2, nw - 1)]) {
          if (j >= 0) __builtin_prefetch(cands[j], 0, 3);
        }
        for (int64_t j : work[std::min(w + 1, nw - 1)]) {
          if (j >= 0) detail::prefetch_cores(*cands[j]);
        }
        const auto [a, b] = work[w];
        bool same = true;
        for (int64_t j : work[w]) {
          if (j >= 0 && cands[j]->modes() != q.modes()) {
            same = false;
            for (int64_t seen = bad.load(); j < seen && !bad.compare_exchange_weak(seen, j);) {
            }
          }
        }
        if (!same) continue;
        if (b < 0) {
          dots[a] = detail::inner_trains(pq, *cands[a]);
        } else {
          double out[2];
          detail::inner_trains_2(pq, *cands[a], *cands[b], out);
          dots[a] = out[0];
          dots[b] = out[1];
        }
      }
    });
    if (const int64_t j = bad.load(); j < nc)
      detail::check_same_modes(q.modes(), cands[j]->modes(), "score_batch: candidate " + std::to_string(j));
  }
  for (int64_t j : blas_pairs) dots[j] = inner(q, *cands[j]);

  std::vector<double> out(cands.size());
  TensorTrain q_tt;  // float64 copy of q, made on the first near-duplicate
  for (int64_t j = 0; j < nc; ++j) {
    const Operand& c = *cands[j];
    switch (metric) {
      case Metric::Dot: out[j] = dots[j]; break;
      case Metric::Cosine:
        out[j] = (q_norm == 0 || norms[j] == 0) ? 0.0 : std::clamp(dots[j] / (q_norm * norms[j]), -1.0, 1.0);
        break;
      case Metric::Euclidean: {
        if (!q.is_train() && !c.is_train()) {
          out[j] = dense_distance(q, c);
          break;
        }
        const double scale = q_norm * q_norm + norms[j] * norms[j];
        const double d2 = scale - 2 * dots[j];
        if (q.is_train() && c.is_train() && d2 < 1e-8 * scale) {
          if (q_tt.d() == 0) q_tt = q.to_train();
          out[j] = distance(q_tt, c.to_train());
        } else {
          out[j] = std::sqrt(std::max(d2, 0.0));
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace tts
