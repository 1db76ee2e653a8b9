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
#include "trace.hpp"

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
  detail::Trace trace("dots");
  std::vector<ResidentPtr> picked;
  std::vector<int64_t> where;
  std::vector<detail::CandidateDesc> descs;
  int max_c = 1;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->devices.find(device);
    if (it == impl_->devices.end()) return out;
    PerDevice& dev = it->second;
    // The lookups, checks and touches run on the engine's threads (each id its own map node, its own
    // stamp; nothing inserts or removes while the lock is held); the picked ids are then gathered in
    // order. One host thread walking 100,000 ids took longer than the kernel.
    const int64_t n_ids = static_cast<int64_t>(ids.size());
    std::vector<ResidentPtr> hit(ids.size());
    std::vector<detail::CandidateDesc> desc_at(ids.size());
    const uint64_t stamp = dev.lru.next_stamp();
#pragma omp parallel for schedule(static) reduction(max : max_c) if (n_ids >= 4096)
    for (int64_t j = 0; j < n_ids; ++j) {
      auto h = dev.held.find(ids[j]);
      if (h == dev.held.end()) continue;
      const Resident& r = *h->second;
      if (r.modes != q.modes() || r.max_rank > kMaxDotRank) continue;
      dev.lru.touch_at(ids[j], stamp);
      hit[j] = h->second;
      desc_at[j] = {r.block.get(), r.f32 ? 1 : 0, 0};
      max_c = std::max<int>(max_c, static_cast<int>(r.max_rank));
    }
    for (int64_t j = 0; j < n_ids; ++j) {
      if (!hit[j]) continue;
      picked.push_back(std::move(hit[j]));
      descs.push_back(desc_at[j]);
      where.push_back(j);
    }
  }
  trace.mark("select");
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
  // The query, its tables and the candidates' descriptors go in one copy to one allocation (a
  // cudaMalloc and cudaFree per array cost more than the copies).
  std::vector<unsigned char> packed;
  auto pack = [&](const auto& v) {
    const std::size_t at = (packed.size() + 15) / 16 * 16;
    const std::size_t bytes = sizeof(typename std::decay_t<decltype(v)>::value_type) * v.size();
    packed.resize(at + bytes);
    std::memcpy(packed.data() + at, v.data(), bytes);
    return at;
  };
  const std::size_t at_modes = pack(modes), at_qr = pack(q_ranks), at_qoff = pack(q_off), at_q = pack(q_cores),
                    at_desc = pack(descs);
  detail::DeviceBuffer<unsigned char> d_packed(static_cast<int64_t>(packed.size()));
  TTS_CUDA(cudaMemcpyAsync(d_packed.get(), packed.data(), packed.size(), cudaMemcpyHostToDevice, stream.get()));
  auto on_device = [&](std::size_t at, auto* type) { return reinterpret_cast<decltype(type)>(d_packed.get() + at); };
  const int32_t* d_modes = on_device(at_modes, static_cast<int32_t*>(nullptr));
  const int32_t* d_qr = on_device(at_qr, static_cast<int32_t*>(nullptr));
  const int64_t* d_qoff = on_device(at_qoff, static_cast<int64_t*>(nullptr));
  const double* d_q = on_device(at_q, static_cast<double*>(nullptr));
  const detail::CandidateDesc* d_desc = on_device(at_desc, static_cast<detail::CandidateDesc*>(nullptr));
  detail::DeviceBuffer<double> d_dots(n);
  if (trace.on()) {
    stream.sync();
    trace.mark("upload");
    trace.note(std::to_string(n) + " candidates, max rank " + std::to_string(max_c) + ", query max rank " +
               std::to_string(q.max_rank()));
  }
  detail::launch_dot_batch(d_modes, d, d_q, d_qoff, d_qr, d_desc, n, static_cast<int>(q.max_rank()), max_c,
                           d_dots.get(), stream.get());
  if (trace.on()) {
    stream.sync();
    trace.mark("kernel");
  }
  std::vector<double> dots(static_cast<std::size_t>(n));
  TTS_CUDA(cudaMemcpyAsync(dots.data(), d_dots.get(), sizeof(double) * n, cudaMemcpyDeviceToHost, stream.get()));
  stream.sync();
  for (int64_t j = 0; j < n; ++j) out[where[j]] = dots[j];
  trace.mark("download");
  return out;
}

}  // namespace tts::cuda
