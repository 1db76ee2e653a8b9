// Private: each solver's param table (ParamSpec, sim.hpp) and the reader that checks params against
// it, with messages that name the param; and the hooks a solver calls, wrapped so that an empty hook
// costs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ttstore/internal/poll_point.hpp"
#include "ttstore/sim.hpp"

namespace tts::sim::detail {

// Largest integer a double (and so a JSON number) holds exactly.
inline constexpr int64_t kMaxExactInteger = (int64_t{1} << 53) - 1;

// Table rows, so that a solver's table reads as a list of its params.
ParamSpec integer_param(std::string name, double lo, double hi, std::optional<double> fallback, std::string doc);
ParamSpec required_integer(std::string name, double lo, double hi, std::string doc);
// lo < v (or lo <= v when !lo_open) and v <= hi (v < hi when hi_open).
ParamSpec number_param(std::string name, double lo, bool lo_open, double hi, bool hi_open,
                       std::optional<double> fallback, std::string doc);
ParamSpec required_number(std::string name, double lo, bool lo_open, double hi, bool hi_open, std::string doc);
ParamSpec choice_param(std::string name, std::vector<std::string> choices, std::string doc);
// seed and snapshot_every, which every solver takes.
void add_common_params(std::vector<ParamSpec>& table);

class ParamReader {
 public:
  // Rejects any param whose name is not in `table` (kept by reference: a solver's static table).
  ParamReader(std::string solver, const Params& p, const std::vector<ParamSpec>& table);

  bool has(const std::string& name) const;
  // An Integer param in its range; when absent its fallback, else `def` (a default that depends on
  // other params), else it is required.
  int64_t integer(const std::string& name, std::optional<int64_t> def = std::nullopt) const;
  // A Number param in its range (absent: as integer()).
  double number(const std::string& name, std::optional<double> def = std::nullopt) const;
  // A Choice param; absent: its first choice.
  std::string choice(const std::string& name) const;
  // A List param's JSON text; absent: nullopt.
  std::optional<std::string> list(const std::string& name) const;
  // snapshot_every (0 when absent), at least ceil(steps / kMaxSnapshots) for a run of `steps` steps
  // (iterations) of `what` ("steps", "max_iters").
  int64_t snapshot_every(int64_t steps, const std::string& what) const;
  // InvalidArgument "param <name> of <solver> must be <what>, got <value>".
  [[noreturn]] void fail(const std::string& name, const std::string& what) const;

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& what, const Param* got) const;
  const Param* find(const std::string& name) const;
  const ParamSpec& spec(const std::string& name, ParamSpec::Type type) const;

  std::string solver_;
  const Params& p_;
  const std::vector<ParamSpec>& table_;
};

// hooks.cancelled() -> throw Cancelled; progress/snapshot only when set. While it lives, poll() is
// also the calling thread's poll_point() (poll_point.hpp), so the library's long computations stop
// for a cancel or a pause inside a step, not only between steps.
class Reporter {
 public:
  explicit Reporter(const Hooks& h)
      : h_(h), poll_(h.cancelled ? std::function<void()>([this] { poll(); }) : nullptr), scope_(&poll_) {}
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;
  void poll() const {
    if (h_.cancelled && h_.cancelled()) throw Cancelled();
  }
  void progress(int64_t done, int64_t total) const {
    if (h_.progress) h_.progress(done, total < done ? done : total);
  }
  bool wants_snapshots() const { return static_cast<bool>(h_.snapshot); }
  void snapshot(int64_t step, double t, const std::vector<Field>& fields) const {
    if (h_.snapshot) h_.snapshot(step, t, fields);
  }

 private:
  const Hooks& h_;
  const std::function<void()> poll_;
  const tts::detail::PollScope scope_;
};

}  // namespace tts::sim::detail
