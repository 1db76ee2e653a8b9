// The solver registry: CPU solvers by name, replaceable one by one (a CUDA backend registers its own
// implementation under the same name).
#include <algorithm>
#include <memory>
#include <mutex>

#include "solvers/sim_registry.hpp"
#include "ttstore/sim.hpp"

namespace tts::sim {

namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Solver>> solvers;
};

// Never destroyed: a run on another thread may still hold a Solver while the process exits.
Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->solvers.push_back(detail::make_euler_2d());
    reg->solvers.push_back(detail::make_helmholtz_3d());
    reg->solvers.push_back(detail::make_navier_stokes_2d());
    reg->solvers.push_back(detail::make_poisson_2d());
    return reg;
  }();
  return *r;
}

}  // namespace

void register_solver(std::unique_ptr<Solver> s) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::string name = s->name();
  auto it = std::find_if(r.solvers.begin(), r.solvers.end(), [&](const auto& x) { return x->name() == name; });
  // A replaced solver is kept (leaked), not freed: a run that started before may still use it.
  if (it != r.solvers.end()) {
    it->release();
    *it = std::move(s);
  } else {
    r.solvers.push_back(std::move(s));
  }
}

std::vector<std::string> solvers() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& s : r.solvers) names.push_back(s->name());
  std::sort(names.begin(), names.end());
  return names;
}

const Solver& solver(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& s : r.solvers) {
    if (s->name() == name) return *s;
  }
  std::string known;
  for (const auto& s : r.solvers) known += (known.empty() ? "" : ", ") + s->name();
  throw InvalidArgument("unknown solver '" + name + "' (known: " + known + ")");
}

void validate(const std::string& name, const Params& p) { solver(name).validate(p); }

Output run(const std::string& name, const Params& p, const Hooks& hooks) { return solver(name).run(p, hooks); }

}  // namespace tts::sim
