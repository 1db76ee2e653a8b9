// Private: the eviction policy of GPU core placement, apart from any device so it is tested on the
// CPU: ids with byte sizes in recency order (oldest first) under a byte budget. Not thread-safe (the
// caller holds its lock).
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace tts::cuda::detail {

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
  std::size_t size() const { return pos_.size(); }
  bool contains(int64_t id) const { return pos_.count(id) > 0; }

  // Ids to evict (oldest first, already removed here) so that `bytes` more fit in the budget. A
  // request larger than the budget evicts everything (the caller refuses it beforehand).
  std::vector<int64_t> make_room(int64_t bytes) { return shrink_to(budget_ - bytes); }

  void insert(int64_t id, int64_t bytes) {
    remove(id);
    order_.push_back({id, bytes});
    pos_[id] = std::prev(order_.end());
    used_ += bytes;
  }
  void touch(int64_t id) {  // most recently used now
    auto it = pos_.find(id);
    if (it != pos_.end()) order_.splice(order_.end(), order_, it->second);
  }
  bool remove(int64_t id) {
    auto it = pos_.find(id);
    if (it == pos_.end()) return false;
    used_ -= it->second->bytes;
    order_.erase(it->second);
    pos_.erase(it);
    return true;
  }
  // Evicts the least recently used id and returns it, or -1 when empty.
  int64_t evict_oldest() {
    if (order_.empty()) return -1;
    const int64_t id = order_.front().id;
    remove(id);
    ++evictions_;
    return id;
  }

 private:
  struct Item {
    int64_t id;
    int64_t bytes;
  };
  std::vector<int64_t> shrink_to(int64_t target) {
    std::vector<int64_t> out;
    while (used_ > target && !order_.empty()) out.push_back(evict_oldest());
    return out;
  }
  int64_t budget_ = 0, used_ = 0, evictions_ = 0;
  std::list<Item> order_;
  std::unordered_map<int64_t, std::list<Item>::iterator> pos_;
};

}  // namespace tts::cuda::detail
