#include "solvers/poisson/poisson_workspace.hpp"

#include <algorithm>
#include <mutex>

namespace tts::sim::detail {

namespace {

// Idle memory kept for later solves: a 2048² workspace with its multigrid is about 140 MiB.
constexpr std::size_t kIdleBytes = std::size_t{256} << 20;

struct Pool {
  std::mutex mu;
  std::vector<std::unique_ptr<Workspace>> idle;  // oldest first
  std::size_t bytes = 0;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: leases may end during static destruction
  return *p;
}

}  // namespace

Workspace::Workspace(int64_t n_) : n(n_), r(n_ * n_), p(n_ * n_), q(n_ * n_), zero(n_, 0.0) {}

Multigrid& Workspace::multigrid() {
  if (!mg_) mg_ = std::make_unique<Multigrid>(n);
  return *mg_;
}

std::size_t Workspace::bytes() const {
  const std::size_t v = sizeof(double) * static_cast<std::size_t>(n * n);
  return 3 * v + (mg_ ? mg_->bytes() : 0);
}

WorkspaceLease::WorkspaceLease(int64_t n) {
  Pool& P = pool();
  {
    std::lock_guard<std::mutex> lock(P.mu);
    for (auto it = P.idle.rbegin(); it != P.idle.rend(); ++it) {
      if ((*it)->n == n) {
        ws_ = std::move(*it);
        P.idle.erase(std::next(it).base());
        P.bytes -= ws_->bytes();
        return;
      }
    }
  }
  ws_ = std::make_unique<Workspace>(n);
}

WorkspaceLease::~WorkspaceLease() {
  if (!ws_) return;
  const std::size_t b = ws_->bytes();
  if (b > kIdleBytes) return;  // too big to keep: freed here, outside the lock
  std::vector<std::unique_ptr<Workspace>> freed;
  {
    Pool& P = pool();
    std::lock_guard<std::mutex> lock(P.mu);
    P.idle.push_back(std::move(ws_));
    P.bytes += b;
    std::size_t drop = 0;
    while (P.bytes > kIdleBytes) {
      P.bytes -= P.idle[drop]->bytes();
      ++drop;
    }
    for (std::size_t k = 0; k < drop; ++k) freed.push_back(std::move(P.idle[k]));
    P.idle.erase(P.idle.begin(), P.idle.begin() + static_cast<std::ptrdiff_t>(drop));
  }
}

void release_idle_workspaces() {
  std::vector<std::unique_ptr<Workspace>> freed;
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.mu);
  freed.swap(P.idle);
  P.bytes = 0;
}

}  // namespace tts::sim::detail
