// GPU core placement: trains held in device memory under entry ids, one byte budget per device,
// least recently used first out, and the batched inner products of a query against them.
//
// Each resident train is one device block (its cores back to back, as stored: float32 or float64)
// owned by a shared_ptr, so an eviction while a batch is scoring only drops the map's reference; the
// memory goes when the batch lets go of it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <list>
#include <mutex>
#include <unordered_map>

#include "cuda_raii.hpp"
#include "kernels.hpp"
#include "lru_budget.hpp"

namespace tts::cuda {
namespace {

struct Resident {
  detail::DeviceBuffer<unsigned char> block;
  std::vector<int64_t> modes, ranks;
  bool f32 = false;
  int64_t max_rank = 0;
};
using ResidentPtr = std::shared_ptr<const Resident>;

struct PerDevice {
  detail::LruBudget lru;
  std::unordered_map<int64_t, ResidentPtr> held;
};

}  // namespace

struct Residency::Impl {
  mutable std::mutex mu;
  int64_t budget = int64_t{4} << 30;
  std::unordered_map<int, PerDevice> devices;

  PerDevice& dev(int device) {
    auto [it, fresh] = devices.try_emplace(device);
    if (fresh) it->second.lru.set_budget(budget);
    return it->second;
  }
};

Residency::Residency() : impl_(std::make_unique<Impl>()) {}

Residency& Residency::instance() {
  static Residency* r = new Residency();  // never destroyed: device memory goes with the process
  return *r;
}

void Residency::set_budget(int64_t bytes) {
  if (bytes < 0) throw InvalidArgument("GPU cache budget must be >= 0 bytes");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->budget = bytes;
  for (auto& [index, d] : impl_->devices) {
    for (int64_t id : d.lru.set_budget(bytes)) d.held.erase(id);
  }
}

int64_t Residency::budget() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->budget;
}

Placement Residency::place(int device, int64_t id, const Operand& train) {
  if (!train.is_train()) throw InvalidArgument("only compressed entries (trains) can be placed on a GPU");
  detail::require_device(device);
  const int64_t bytes = train.elements() * (train.f32() ? 4 : 8);
  Placement out;
  out.bytes = bytes;
  std::lock_guard<std::mutex> lock(impl_->mu);
  PerDevice& d = impl_->dev(device);
  if (d.held.count(id)) {
    d.lru.touch(id);
    out.resident_before = true;
    return out;
  }
  if (bytes > impl_->budget) {
    throw Unavailable("the entry's cores take " + std::to_string(bytes) + " bytes, more than the GPU cache budget of " +
                      std::to_string(impl_->budget) + " bytes (SVC_GATE_GPU_CACHE_BYTES)");
  }
  for (int64_t victim : d.lru.make_room(bytes)) {
    d.held.erase(victim);
    ++out.evicted;
  }
  detail::DeviceScope scope(device);
  auto r = std::make_shared<Resident>();
  for (;;) {  // the budget may exceed what the device has free: evict more while allocation fails
    try {
      r->block.reset(detail::train_header_bytes(train.d()) + bytes);
      break;
    } catch (const Unavailable&) {
      const int64_t victim = d.lru.evict_oldest();
      if (victim < 0) throw;
      d.held.erase(victim);
      ++out.evicted;
    }
  }
  // One copy: the ranks header, then the cores as stored.
  const int64_t head = detail::train_header_bytes(train.d());
  std::vector<unsigned char> staged(static_cast<std::size_t>(head + bytes), 0);
  for (int k = 0; k <= train.d(); ++k) {
    const int32_t rk = static_cast<int32_t>(train.ranks()[k]);
    std::memcpy(staged.data() + 4 * k, &rk, 4);
  }
  const void* src =
      train.f32() ? static_cast<const void*>(train.f32_data()) : static_cast<const void*>(train.f64_data());
  std::memcpy(staged.data() + head, src, static_cast<std::size_t>(bytes));
  TTS_CUDA(cudaMemcpy(r->block.get(), staged.data(), staged.size(), cudaMemcpyHostToDevice));
  r->modes = train.modes();
  r->ranks = train.ranks();
  r->f32 = train.f32();
  r->max_rank = train.max_rank();
  d.lru.insert(id, bytes);
  d.held.emplace(id, std::move(r));
  return out;
}

bool Residency::resident(int device, int64_t id) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->devices.find(device);
  return it != impl_->devices.end() && it->second.held.count(id) > 0;
}

bool Residency::evict(int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  bool any = false;
  for (auto& [index, d] : impl_->devices) {
    if (d.held.erase(id)) {
      d.lru.remove(id);
      any = true;
    }
  }
  return any;
}

void Residency::clear() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->devices.clear();
}

ResidencyStats Residency::stats(int device) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ResidencyStats s;
  s.budget_bytes = impl_->budget;
  auto it = impl_->devices.find(device);
  if (it == impl_->devices.end()) return s;
  s.entries = static_cast<int64_t>(it->second.held.size());
  s.bytes = it->second.lru.used();
  s.evictions = it->second.lru.evictions();
  return s;
}

std::vector<double> Residency::dots(int device, const Operand& q, const std::vector<int64_t>& ids) {
  std::vector<double> out(ids.size(), std::numeric_limits<double>::quiet_NaN());
  if (!q.is_train() || q.max_rank() > kMaxDotRank || ids.empty()) return out;
  std::vector<ResidentPtr> picked;
  std::vector<int64_t> where;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->devices.find(device);
    if (it == impl_->devices.end()) return out;
    for (std::size_t j = 0; j < ids.size(); ++j) {
      auto h = it->second.held.find(ids[j]);
      if (h == it->second.held.end()) continue;
      const Resident& r = *h->second;
      if (r.modes != q.modes() || r.max_rank > kMaxDotRank) continue;
      it->second.lru.touch(ids[j]);
      picked.push_back(h->second);
      where.push_back(static_cast<int64_t>(j));
    }
  }
  if (picked.empty()) return out;
  detail::require_device(device);
  detail::DeviceScope scope(device);
  detail::Stream stream;
  const int d = q.d();
  const int64_t n = static_cast<int64_t>(picked.size());
  std::vector<int32_t> modes(q.modes().begin(), q.modes().end()), q_ranks(q.ranks().begin(), q.ranks().end());
  std::vector<int64_t> q_off(q.offsets().begin(), q.offsets().begin() + d);
  std::vector<double> q_cores(static_cast<std::size_t>(q.elements()));
  if (q.f32()) {
    std::copy(q.f32_data(), q.f32_data() + q.elements(), q_cores.begin());
  } else {
    std::copy(q.f64_data(), q.f64_data() + q.elements(), q_cores.begin());
  }
  std::vector<detail::CandidateDesc> descs(static_cast<std::size_t>(n));
  int max_c = 1;
  for (int64_t j = 0; j < n; ++j) {
    descs[j] = {picked[j]->block.get(), picked[j]->f32 ? 1 : 0, 0};
    max_c = std::max<int>(max_c, static_cast<int>(picked[j]->max_rank));
  }
  auto up = [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    detail::DeviceBuffer<T> b(static_cast<int64_t>(v.size()));
    TTS_CUDA(cudaMemcpyAsync(b.get(), v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice, stream.get()));
    return b;
  };
  auto d_modes = up(modes);
  auto d_qr = up(q_ranks);
  auto d_qoff = up(q_off);
  auto d_q = up(q_cores);
  auto d_desc = up(descs);
  detail::DeviceBuffer<double> d_dots(n);
  detail::launch_dot_batch(d_modes.get(), d, d_q.get(), d_qoff.get(), d_qr.get(), d_desc.get(), n,
                           static_cast<int>(q.max_rank()), max_c, d_dots.get(), stream.get());
  std::vector<double> dots(static_cast<std::size_t>(n));
  TTS_CUDA(cudaMemcpyAsync(dots.data(), d_dots.get(), sizeof(double) * n, cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  for (int64_t j = 0; j < n; ++j) out[where[j]] = dots[j];
  return out;
}

}  // namespace tts::cuda
