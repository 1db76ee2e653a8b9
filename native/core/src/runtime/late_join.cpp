// A parallel loop that never waits for a thread that has not started (see late_join.hpp).
#include "ttstore/internal/late_join.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tts::detail {
namespace {

struct Loop {
  int64_t n = 0, chunk = 1;
  int helpers = 0;  // how many helpers may join
  const std::function<void(int64_t, int64_t)>* body = nullptr;
  std::atomic<int64_t> next{0};
  std::atomic<int> joined{0};  // helpers that have asked for a chunk
  std::atomic<int> active{0};  // helpers inside: counted before they claim a chunk

  // Claims and runs chunks until none is left.
  void work() {
    for (;;) {
      const int64_t b = next.fetch_add(chunk);
      if (b >= n) return;
      (*body)(b, std::min(n, b + chunk));
    }
  }
};

class Helpers {
 public:
  static Helpers& instance() {
    static Helpers* h = new Helpers;  // never destroyed: helpers may still sleep at exit
    return *h;
  }

  // Runs `loop` on this thread and any helper that wakes in time; false when another loop holds the helpers.
  bool run(const std::shared_ptr<Loop>& loop) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> g(m_);
      while (static_cast<int>(threads_.size()) < loop->helpers) {
        threads_.emplace_back([this] { serve(); });
        threads_.back().detach();
      }
      current_ = loop;
      ++epoch_;
    }
    cv_.notify_all();
    loop->work();
    // Every chunk is claimed: wait for the helpers that claimed one (a chunk is short).
    while (loop->active.load() != 0) std::this_thread::yield();
    std::lock_guard<std::mutex> g(m_);
    current_.reset();
    return true;
  }

 private:
  void serve() {
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Loop> loop;
      {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return epoch_ != seen; });
        seen = epoch_;
        loop = current_;
      }
      if (!loop || loop->joined.fetch_add(1) >= loop->helpers) continue;
      loop->active.fetch_add(1);  // before claiming: the caller waits for active == 0 once all are claimed
      loop->work();
      loop->active.fetch_sub(1);
    }
  }

  std::mutex busy_;  // one loop at a time
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  std::shared_ptr<Loop> current_;
  uint64_t epoch_ = 0;
};

}  // namespace

void late_join_for(int64_t n, int64_t chunk, int threads, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  auto loop = std::make_shared<Loop>();
  loop->n = n;
  loop->chunk = std::max<int64_t>(1, chunk);
  loop->helpers = n > loop->chunk ? std::max(0, threads - 1) : 0;
  loop->body = &body;
  if (loop->helpers == 0 || !Helpers::instance().run(loop)) loop->work();
}

}  // namespace tts::detail
