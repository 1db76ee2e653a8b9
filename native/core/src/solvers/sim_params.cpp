#include "solvers/sim_params.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tts::sim::detail {

namespace {

std::string describe(const Param& v) {
  if (const double* d = std::get_if<double>(&v)) {
    std::ostringstream os;
    os.precision(17);
    os << *d;
    return os.str();
  }
  if (const std::string* s = std::get_if<std::string>(&v)) return "'" + *s + "'";
  return std::get<bool>(v) ? "true" : "false";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string names(const std::vector<ParamSpec>& table) {
  std::vector<std::string> n;
  for (const ParamSpec& s : table) n.push_back(s.name);
  return join(n);
}

ParamSpec row(std::string name, ParamSpec::Type type, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = type;
  s.doc = std::move(doc);
  return s;
}

}  // namespace

ParamSpec integer_param(std::string name, double lo, double hi, std::optional<double> fallback, std::string doc) {
  ParamSpec s = row(std::move(name), ParamSpec::Type::Integer, std::move(doc));
  s.min = lo;
  s.max = hi;
  s.fallback = fallback;
  return s;
}

ParamSpec required_integer(std::string name, double lo, double hi, std::string doc) {
  ParamSpec s = integer_param(std::move(name), lo, hi, std::nullopt, std::move(doc));
  s.required = true;
  return s;
}

ParamSpec number_param(std::string name, double lo, bool lo_open, double hi, bool hi_open,
                       std::optional<double> fallback, std::string doc) {
  ParamSpec s = row(std::move(name), ParamSpec::Type::Number, std::move(doc));
  s.min = lo;
  s.min_open = lo_open;
  s.max = hi;
  s.max_open = hi_open;
  s.fallback = fallback;
  return s;
}

ParamSpec required_number(std::string name, double lo, bool lo_open, double hi, bool hi_open, std::string doc) {
  ParamSpec s = number_param(std::move(name), lo, lo_open, hi, hi_open, std::nullopt, std::move(doc));
  s.required = true;
  return s;
}

ParamSpec choice_param(std::string name, std::vector<std::string> choices, std::string doc) {
  ParamSpec s = row(std::move(name), ParamSpec::Type::Choice, std::move(doc));
  s.choices = std::move(choices);
  return s;
}

void add_common_params(std::vector<ParamSpec>& table) {
  table.push_back(
      integer_param("seed", 0, static_cast<double>(kMaxExactInteger), 0.0, "Seed of the random parts of the set-up."));
  table.push_back(integer_param("snapshot_every", 1, static_cast<double>(kMaxSteps), std::nullopt,
                                "Also store every field each this many steps ({prefix}/{field}/step_{n}); at least "
                                "steps / " +
                                    std::to_string(kMaxSnapshots) + " (at most " + std::to_string(kMaxSnapshots) +
                                    " snapshots a run)."));
}

ParamReader::ParamReader(std::string solver, const Params& p, const std::vector<ParamSpec>& table)
    : solver_(std::move(solver)), p_(p), table_(table) {
  for (const auto& kv : p_) {
    if (std::none_of(table_.begin(), table_.end(), [&](const ParamSpec& s) { return s.name == kv.first; })) {
      throw InvalidArgument("unknown param '" + kv.first + "' for " + solver_ + " (known: " + names(table_) + ")");
    }
  }
}

const Param* ParamReader::find(const std::string& name) const {
  auto it = p_.find(name);
  return it == p_.end() ? nullptr : &it->second;
}

const ParamSpec& ParamReader::spec(const std::string& name, ParamSpec::Type type) const {
  for (const ParamSpec& s : table_) {
    if (s.name == name && s.type == type) return s;
  }
  throw std::logic_error(solver_ + " reads param " + name + ", which its table lacks or types otherwise");
}

bool ParamReader::has(const std::string& name) const { return find(name) != nullptr; }

void ParamReader::fail(const std::string& name, const std::string& what, const Param* got) const {
  std::string msg = "param " + name + " of " + solver_ + " must be " + what;
  msg += got ? ", got " + describe(*got) : " (it is required)";
  throw InvalidArgument(msg);
}

void ParamReader::fail(const std::string& name, const std::string& what) const { fail(name, what, find(name)); }

int64_t ParamReader::integer(const std::string& name, std::optional<int64_t> def) const {
  const ParamSpec& s = spec(name, ParamSpec::Type::Integer);
  std::ostringstream what;
  what.precision(17);
  what << "an integer in " << s.min << ".." << s.max;
  const Param* v = find(name);
  if (!v) {
    if (s.fallback) return static_cast<int64_t>(*s.fallback);
    if (!def) fail(name, what.str(), nullptr);
    return *def;
  }
  const double* d = std::get_if<double>(v);
  if (!d || !std::isfinite(*d) || std::trunc(*d) != *d || *d < s.min || *d > s.max) fail(name, what.str(), v);
  return static_cast<int64_t>(*d);
}

double ParamReader::number(const std::string& name, std::optional<double> def) const {
  const ParamSpec& s = spec(name, ParamSpec::Type::Number);
  std::ostringstream what;
  what << "a number with " << s.min << (s.min_open ? " < " : " <= ") << name << (s.max_open ? " < " : " <= ") << s.max;
  const Param* v = find(name);
  if (!v) {
    if (s.fallback) return *s.fallback;
    if (!def) fail(name, what.str(), nullptr);
    return *def;
  }
  const double* d = std::get_if<double>(v);
  if (!d || !std::isfinite(*d) || (s.min_open ? *d <= s.min : *d < s.min) || (s.max_open ? *d >= s.max : *d > s.max)) {
    fail(name, what.str(), v);
  }
  return *d;
}

std::string ParamReader::choice(const std::string& name) const {
  const ParamSpec& s = spec(name, ParamSpec::Type::Choice);
  const Param* v = find(name);
  if (!v) return s.choices.front();
  const std::string* str = std::get_if<std::string>(v);
  if (!str || std::find(s.choices.begin(), s.choices.end(), *str) == s.choices.end()) {
    fail(name, "one of " + join(s.choices), v);
  }
  return *str;
}

std::optional<std::string> ParamReader::list(const std::string& name) const {
  (void)spec(name, ParamSpec::Type::List);
  const Param* v = find(name);
  if (!v) return std::nullopt;
  const std::string* str = std::get_if<std::string>(v);
  if (!str) fail(name, "a list (JSON text)", v);
  return *str;
}

int64_t ParamReader::snapshot_every(int64_t steps, const std::string& what) const {
  const int64_t every = has("snapshot_every") ? integer("snapshot_every") : 0;
  const int64_t least = (steps + kMaxSnapshots - 1) / kMaxSnapshots;
  if (every > 0 && every < least) {
    fail("snapshot_every", "at least " + std::to_string(least) + " for " + what + " " + std::to_string(steps) +
                               " (at most " + std::to_string(kMaxSnapshots) + " snapshots a run)");
  }
  return every;
}

}  // namespace tts::sim::detail
