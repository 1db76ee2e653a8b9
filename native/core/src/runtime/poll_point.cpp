#include "ttstore/internal/poll_point.hpp"

#include <omp.h>

namespace tts::detail {

namespace {
thread_local const std::function<void()>* current = nullptr;
}  // namespace

void poll_point() {
  // omp_get_level counts inactive regions (an `if` that ran serially) too: no exception may leave one.
  if (current != nullptr && *current && omp_get_level() == 0) (*current)();
}

PollScope::PollScope(const std::function<void()>* poll) : previous_(current) { current = poll; }

PollScope::~PollScope() { current = previous_; }

}  // namespace tts::detail
