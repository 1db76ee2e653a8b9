// Private: a parallel loop that never waits for a thread that has not started.
//
// An OpenMP loop ends at a barrier that every thread of the team must reach, so on a machine shared
// with other work a team thread the scheduler has not run yet holds the whole loop back by a time
// slice (milliseconds), which makes two threads slower than one for a loop of a few milliseconds
// (a top-K batch). Here the caller works through the chunks itself while helpers join when they get
// a CPU; at the end it waits only for chunks a helper has claimed. Helpers sleep between loops
// (no spinning that would take the CPU from the caller).
#pragma once

#include <cstdint>
#include <functional>

namespace tts::detail {

// Calls body(begin, end) over [0, n) in chunks of `chunk`, on the calling thread and up to
// threads - 1 helpers (shared by every caller; a call made while another runs gets none).
// body must not throw.
void late_join_for(int64_t n, int64_t chunk, int threads, const std::function<void(int64_t, int64_t)>& body);

}  // namespace tts::detail
