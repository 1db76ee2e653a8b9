// CallShare: engine calls running at once share the engine's threads, each call's team fixed when it
// starts; a call alone has them all, a nested CallShare changes nothing, and the count returns to 0.
#include <atomic>
#include <thread>

#include "check.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/tt.hpp"

TEST(a_call_alone_has_every_thread) {
  tts::set_threads(4);
  {
    tts::CallShare call;
    CHECK_EQ(tts::calls_running(), 1);
    CHECK_EQ(tts::detail::threads(), 4);
    {
      tts::CallShare inner;  // the same call, one level down
      CHECK_EQ(tts::calls_running(), 1);
      CHECK_EQ(tts::detail::threads(), 4);
    }
    CHECK_EQ(tts::detail::threads(), 4);
  }
  CHECK_EQ(tts::calls_running(), 0);
  tts::set_threads(0);
}

TEST(calls_at_once_split_the_threads_and_keep_their_team) {
  tts::set_threads(4);
  std::atomic<int> stage{0};
  int second_team = 0;
  {
    tts::CallShare first;
    CHECK_EQ(tts::detail::threads(), 4);
    std::thread other([&] {
      tts::CallShare second;
      second_team = tts::detail::threads();
      stage = 1;
      while (stage.load() != 2) std::this_thread::yield();
    });
    while (stage.load() != 1) std::this_thread::yield();
    CHECK_EQ(tts::calls_running(), 2);
    CHECK_EQ(second_team, 2);
    CHECK_EQ(tts::detail::threads(), 4);  // fixed when the first call started
    stage = 2;
    other.join();
    CHECK_EQ(tts::calls_running(), 1);
  }
  CHECK_EQ(tts::calls_running(), 0);
  {
    // More calls than threads: one thread each, never none.
    tts::set_threads(1);
    std::atomic<int> started{0};
    std::atomic<bool> done{false};
    std::atomic<int> smallest{1 << 30};
    std::thread a([&] {
      tts::CallShare c;
      started++;
      while (!done) std::this_thread::yield();
    });
    while (started.load() != 1) std::this_thread::yield();
    {
      tts::CallShare c;
      smallest = tts::detail::threads();
    }
    done = true;
    a.join();
    CHECK_EQ(smallest.load(), 1);
  }
  tts::set_threads(0);
}

TEST(outside_a_call_the_engine_default_holds) {
  tts::set_threads(3);
  CHECK_EQ(tts::detail::threads(), 3);
  CHECK_EQ(tts::engine_info().threads, 3);
  tts::set_threads(0);
}

TEST_MAIN()
