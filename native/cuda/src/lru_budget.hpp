// Private: the eviction policy of GPU core placement, apart from any device so it is tested on the
// CPU: ids with byte sizes in recency order (oldest first) under a byte budget. Not thread-safe (the
// caller holds its lock).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace tts::cuda::detail {

// Recency is a stamp per id, so a touch only writes the id's stamp: a batch that scores 100,000
// resident ids touches them all in parallel (touch_at) instead of splicing a list 100,000 times.
// The eviction order comes from a min-heap of (stamp, id) that may hold stale stamps: a popped entry
// whose stamp is older than its id's is pushed again with the current one, so each touch costs at
// most one heap push, paid at eviction, and the order evicted is exactly least recently used first
// (ties, ids touched in one batch, by smaller id).
class LruBudget {
 public:
  // Sets the budget; returns the ids evicted (oldest first) to get back within it.
  std::vector<int64_t> set_budget(int64_t bytes) {
    budget_ = bytes;
    return shrink_to(budget_);
  }
  int64_t budget() const { return budget_; }
  int64_t used() const { return used_; }
  int64_t evictions() const { return evictions_; }
  std::size_t size() const { return items_.size(); }
  bool contains(int64_t id) const { return items_.count(id) > 0; }

  // Ids to evict (oldest first, already removed here) so that `bytes` more fit in the budget. A
  // request larger than the budget evicts everything (the caller refuses it beforehand).
  std::vector<int64_t> make_room(int64_t bytes) { return shrink_to(budget_ - bytes); }

  void insert(int64_t id, int64_t bytes) {
    remove(id);
    const uint64_t serial = ++serials_;
    items_[id] = Item{bytes, ++clock_, serial};
    heap_.push({clock_, id, serial});
    used_ += bytes;
  }
  void touch(int64_t id) { touch_at(id, next_stamp()); }  // most recently used now
  // A stamp newer than every earlier one, for touch_at.
  uint64_t next_stamp() { return ++clock_; }
  // Marks `id` used at `stamp` (from next_stamp). Safe from several threads at once for distinct ids
  // while nothing inserts or removes (the caller holds its lock).
  void touch_at(int64_t id, uint64_t stamp) {
    auto it = items_.find(id);
    if (it != items_.end()) it->second.stamp = stamp;
  }
  bool remove(int64_t id) {
    auto it = items_.find(id);
    if (it == items_.end()) return false;
    used_ -= it->second.bytes;
    items_.erase(it);  // its heap entry goes stale (serial no longer found)
    if (heap_.size() > 2 * items_.size() + 64) rebuild_heap();
    return true;
  }
  // Evicts the least recently used id and returns it, or -1 when empty.
  int64_t evict_oldest() {
    while (!heap_.empty()) {
      const Entry e = heap_.top();
      heap_.pop();
      auto it = items_.find(std::get<1>(e));
      if (it == items_.end() || it->second.serial != std::get<2>(e)) continue;  // removed since
      if (it->second.stamp != std::get<0>(e)) {                                 // touched since
        heap_.push({it->second.stamp, it->first, it->second.serial});
        continue;
      }
      used_ -= it->second.bytes;
      items_.erase(it);
      ++evictions_;
      return std::get<1>(e);
    }
    return -1;
  }

 private:
  struct Item {
    int64_t bytes;
    uint64_t stamp;
    uint64_t serial;  // which insert of the id this is
  };
  using Entry = std::tuple<uint64_t, int64_t, uint64_t>;  // (stamp, id, serial)
  std::vector<int64_t> shrink_to(int64_t target) {
    std::vector<int64_t> out;
    while (used_ > target && !items_.empty()) out.push_back(evict_oldest());
    return out;
  }
  void rebuild_heap() {
    std::vector<Entry> live;
    live.reserve(items_.size());
    for (const auto& [id, item] : items_) live.emplace_back(item.stamp, id, item.serial);
    heap_ = std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>(std::greater<Entry>(), std::move(live));
  }
  int64_t budget_ = 0, used_ = 0, evictions_ = 0;
  uint64_t clock_ = 0, serials_ = 0;
  std::unordered_map<int64_t, Item> items_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

}  // namespace tts::cuda::detail
