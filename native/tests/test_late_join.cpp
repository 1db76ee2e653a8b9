// late_join_for: every index once, whatever the thread count, the chunk or concurrent callers.
#include <atomic>
#include <thread>
#include <vector>

#include "check.hpp"
#include "ttstore/internal/late_join.hpp"

using tts::detail::late_join_for;

static void covers_once(int64_t n, int64_t chunk, int threads) {
  std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
  late_join_for(n, chunk, threads, [&](int64_t b, int64_t e) {
    CHECK(b >= 0 && b < e && e <= n && e - b <= chunk);
    for (int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) CHECK_EQ(hits[static_cast<std::size_t>(i)].load(), 1);
}

TEST(every_index_runs_exactly_once) {
  for (int threads : {1, 2, 4}) {
    for (auto [n, chunk] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 4}, {3, 4}, {4, 4}, {1000, 1}, {1001, 16}, {50000, 7}}) {
      covers_once(n, chunk, threads);
    }
  }
}

TEST(the_caller_does_the_work_when_no_helper_joins) {
  // Many loops back to back: helpers may or may not join in time; results must not depend on it.
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 200; ++r) {
    late_join_for(64, 4, 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum.fetch_add(i);
    });
  }
  CHECK_EQ(sum.load(), int64_t{200} * (63 * 64 / 2));
}

TEST(concurrent_callers_each_cover_their_own_range) {
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&bad, t] {
      for (int r = 0; r < 50; ++r) {
        const int64_t n = 500 + t * 37 + r;
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        late_join_for(n, 8, 2, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
        });
        for (auto& h : hits) {
          if (h.load() != 1) bad.fetch_add(1);
        }
      }
    });
  }
  for (auto& c : callers) c.join();
  CHECK_EQ(bad.load(), 0);
}

TEST_MAIN()
