#include "sim_params.hpp"

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

}  // namespace

ParamReader::ParamReader(std::string solver, const Params& p, const std::vector<std::string>& known)
    : solver_(std::move(solver)), p_(p) {
  for (const auto& kv : p_) {
    if (std::find(known.begin(), known.end(), kv.first) == known.end()) {
      throw InvalidArgument("unknown param '" + kv.first + "' for " + solver_ + " (known: " + join(known) + ")");
    }
  }
}

const Param* ParamReader::find(const std::string& name) const {
  auto it = p_.find(name);
  return it == p_.end() ? nullptr : &it->second;
}

bool ParamReader::has(const std::string& name) const { return find(name) != nullptr; }

void ParamReader::fail(const std::string& name, const std::string& what, const Param* got) const {
  std::string msg = "param " + name + " of " + solver_ + " must be " + what;
  msg += got ? ", got " + describe(*got) : " (it is required)";
  throw InvalidArgument(msg);
}

int64_t ParamReader::integer(const std::string& name, int64_t lo, int64_t hi, std::optional<int64_t> def) const {
  const std::string what = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  const Param* v = find(name);
  if (!v) {
    if (!def) fail(name, what, nullptr);
    return *def;
  }
  const double* d = std::get_if<double>(v);
  if (!d || !std::isfinite(*d) || std::trunc(*d) != *d || *d < static_cast<double>(lo) ||
      *d > static_cast<double>(hi)) {
    fail(name, what, v);
  }
  return static_cast<int64_t>(*d);
}

double ParamReader::number(const std::string& name, double lo, double hi, bool lo_open, std::optional<double> def) const {
  std::ostringstream os;
  os << "a number with " << lo << (lo_open ? " < " : " <= ") << name << " <= " << hi;
  const Param* v = find(name);
  if (!v) {
    if (!def) fail(name, os.str(), nullptr);
    return *def;
  }
  const double* d = std::get_if<double>(v);
  if (!d || !std::isfinite(*d) || *d > hi || (lo_open ? *d <= lo : *d < lo)) fail(name, os.str(), v);
  return *d;
}

std::string ParamReader::choice(const std::string& name, const std::vector<std::string>& choices) const {
  const Param* v = find(name);
  if (!v) return choices.front();
  const std::string* s = std::get_if<std::string>(v);
  if (!s || std::find(choices.begin(), choices.end(), *s) == choices.end()) fail(name, "one of " + join(choices), v);
  return *s;
}

}  // namespace tts::sim::detail
