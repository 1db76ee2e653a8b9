// Private: poisson_2d's work vectors and multigrid hierarchy, kept between solves. On virtual
// machines touching fresh memory is expensive (a fresh 2 MiB vector costs about 0.25 ms, more than a
// whole CG iteration at 512²), so a solve leases a workspace sized for its grid and hands it back
// when it ends. A lease is exclusive: solves running at once (SVC_GATE_SIM_CONCURRENCY > 1) each get
// a workspace of their own, made fresh when none of their size is idle. Idle workspaces are kept
// up to kIdleBytes in all; beyond that the least recently returned are freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ttstore/internal/big_buffer.hpp"
#include "ttstore/internal/poisson_mg.hpp"

namespace tts::sim::detail {

struct Workspace {
  explicit Workspace(int64_t n);
  Multigrid& multigrid();  // built on first use, then kept with the workspace
  std::size_t bytes() const;

  const int64_t n;
  tts::detail::BigVector<double> r, p, q;  // n² each, contents unspecified on lease
  std::vector<double> zero;                // n zeros: the row beyond the boundary

 private:
  std::unique_ptr<Multigrid> mg_;
};

class WorkspaceLease {
 public:
  explicit WorkspaceLease(int64_t n);  // an idle workspace for n points per axis, or a new one
  ~WorkspaceLease();                   // back to the pool (or freed, past the idle cap)
  WorkspaceLease(const WorkspaceLease&) = delete;
  WorkspaceLease& operator=(const WorkspaceLease&) = delete;
  Workspace& operator*() const { return *ws_; }
  Workspace* operator->() const { return ws_.get(); }

 private:
  std::unique_ptr<Workspace> ws_;
};

// Frees every idle workspace (tests; memory pressure).
void release_idle_workspaces();

}  // namespace tts::sim::detail
