// Operands of the query contractions: a train's cores copied into one block, or an uncompressed
// array gathered into mode order.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/query.hpp"

namespace tts {
namespace {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Element offsets of each core; throws unless the ranks chain and every size is positive.
std::vector<int64_t> core_offsets(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks) {
  const std::size_t d = modes.size();
  if (d == 0) throw InvalidArgument("a tensor train needs at least one core");
  if (ranks.size() != d + 1) {
    throw InvalidArgument("ranks " + list_text(ranks) + " must have " + std::to_string(d + 1) + " entries for " +
                          std::to_string(d) + " modes");
  }
  if (ranks.front() != 1 || ranks.back() != 1) {
    throw InvalidArgument("ranks " + list_text(ranks) + " must start and end with 1");
  }
  std::vector<int64_t> off(d + 1, 0);
  for (std::size_t k = 0; k < d; ++k) {
    if (modes[k] < 1 || ranks[k + 1] < 1) {
      throw InvalidArgument("modes " + list_text(modes) + " and ranks " + list_text(ranks) + " must be >= 1");
    }
    off[k + 1] = off[k] + ranks[k] * modes[k] * ranks[k + 1];
  }
  return off;
}

template <class T>
void check_finite(const T* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) throw InvalidArgument("tensor train core value " + std::to_string(i) + " is not finite");
  }
}

}  // namespace

Operand Operand::train(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                       const std::vector<const void*>& cores, bool f32) {
  Operand o = assemble(modes, ranks, cores, f32);
  if (f32) {
    check_finite(o.f32v_.data(), o.offsets_.back());
  } else {
    check_finite(o.f64v_.data(), o.offsets_.back());
  }
  return o;
}

Operand Operand::assemble(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                          const std::vector<const void*>& cores, bool f32) {
  Operand o;
  o.kind_ = Kind::Train;
  o.f32_ = f32;
  o.modes_ = modes;
  o.ranks_ = ranks;
  o.offsets_ = core_offsets(modes, ranks);
  o.rank_key_ = 1469598103934665603ull ^ (f32 ? 1u : 0u);  // FNV-1a over the ranks
  for (int64_t r : ranks) {
    o.max_rank_ = std::max(o.max_rank_, r);
    o.rank_key_ = (o.rank_key_ ^ static_cast<uint64_t>(r)) * 1099511628211ull;
  }
  if (cores.size() != modes.size()) {
    throw InvalidArgument("tensor train has " + std::to_string(cores.size()) + " cores for " +
                          std::to_string(modes.size()) + " modes");
  }
  const std::size_t item = f32 ? sizeof(float) : sizeof(double);
  if (f32) {
    o.f32v_.resize(static_cast<std::size_t>(o.offsets_.back()));
  } else {
    o.f64v_.resize(static_cast<std::size_t>(o.offsets_.back()));
  }
  unsigned char* dst =
      f32 ? reinterpret_cast<unsigned char*>(o.f32v_.data()) : reinterpret_cast<unsigned char*>(o.f64v_.data());
  for (std::size_t k = 0; k < cores.size(); ++k) {
    const std::size_t n = static_cast<std::size_t>(o.offsets_[k + 1] - o.offsets_[k]);
    if (cores[k] == nullptr) throw InvalidArgument("core " + std::to_string(k) + " has no data");
    std::memcpy(dst + static_cast<std::size_t>(o.offsets_[k]) * item, cores[k], n * item);
  }
  return o;
}

Operand Operand::train(const TensorTrain& tt) {
  tt.validate();
  std::vector<const void*> ptrs;
  if (!tt.f32) {
    for (const auto& c : tt.cores) ptrs.push_back(c.data());
    return train(tt.modes, tt.ranks, ptrs, false);
  }
  std::vector<std::vector<float>> f;
  for (const auto& c : tt.cores) f.emplace_back(c.begin(), c.end());
  for (const auto& c : f) ptrs.push_back(c.data());
  return train(tt.modes, tt.ranks, ptrs, true);
}

Operand detail::operand_of(const TensorTrain& tt) {
  std::vector<const void*> ptrs;
  for (const auto& c : tt.cores) ptrs.push_back(c.data());
  return Operand::assemble(tt.modes, tt.ranks, ptrs, false);
}

Operand Operand::dense(const ArrayView& a, const QttLayout& layout) {
  detail::check_array(a, layout, "array");
  Operand o;
  o.kind_ = Kind::Dense;
  o.modes_ = layout.modes;
  o.f64v_.resize(static_cast<std::size_t>(a.numel));
  detail::gather(a, layout, o.f64v_.data());
  return o;
}

int64_t Operand::numel() const {
  int64_t n = 1;
  for (int64_t m : modes_) n *= m;
  return n;
}

int64_t Operand::bytes() const {
  return static_cast<int64_t>(f32v_.capacity() * sizeof(float) + f64v_.capacity() * sizeof(double) +
                              (modes_.capacity() + ranks_.capacity() + offsets_.capacity()) * sizeof(int64_t) +
                              sizeof(Operand));
}

TensorTrain Operand::to_train() const {
  if (!is_train()) throw InvalidArgument("a dense operand has no cores");
  TensorTrain tt;
  tt.modes = modes_;
  tt.ranks = ranks_;
  tt.f32 = f32_;
  tt.cores.resize(modes_.size());
  for (std::size_t k = 0; k < modes_.size(); ++k) {
    const std::size_t b = static_cast<std::size_t>(offsets_[k]), e = static_cast<std::size_t>(offsets_[k + 1]);
    if (f32_) {
      tt.cores[k].assign(f32v_.begin() + b, f32v_.begin() + e);
    } else {
      tt.cores[k].assign(f64v_.begin() + b, f64v_.begin() + e);
    }
  }
  return tt;
}

}  // namespace tts
