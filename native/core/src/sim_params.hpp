// Private: reading a solver's params (CONTRACT.md section 6) into typed values, with messages that
// name the param; and the hooks a solver calls, wrapped so that an empty hook costs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ttstore/sim.hpp"

namespace tts::sim::detail {

// Largest integer a double (and so a JSON number) holds exactly.
inline constexpr int64_t kMaxExactInteger = (int64_t{1} << 53) - 1;

class ParamReader {
 public:
  // Rejects any param whose name is not in `known`.
  ParamReader(std::string solver, const Params& p, const std::vector<std::string>& known);

  bool has(const std::string& name) const;
  // An integral number in [lo, hi]; `def` when absent (absent without a default: required).
  int64_t integer(const std::string& name, int64_t lo, int64_t hi, std::optional<int64_t> def) const;
  // A finite number with lo < v <= hi (open below when lo_open, else lo <= v).
  double number(const std::string& name, double lo, double hi, bool lo_open, std::optional<double> def) const;
  // One of `choices` (a string); the first choice is the default.
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const;

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& what, const Param* got) const;
  const Param* find(const std::string& name) const;

  std::string solver_;
  const Params& p_;
};

// hooks.cancelled() -> throw Cancelled; progress/snapshot only when set.
class Reporter {
 public:
  explicit Reporter(const Hooks& h) : h_(h) {}
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
};

}  // namespace tts::sim::detail
