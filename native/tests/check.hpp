// Minimal test harness for the core's ctest executables: checks print what failed and where, and
// main() returns the failure count (non-zero fails the test).
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace check {

inline int& failures() {
  static int n = 0;
  return n;
}

inline void fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what.c_str());
  ++failures();
}

inline std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// "<what>: <a> vs <b> (<bound_name> <bound>)", the failure of a comparison within a bound.
inline void fail_bound(const char* file, int line, const char* what, double a, double b, const char* bound_name,
                       double bound) {
  fail(file, line, std::string(what) + ": " + num(a) + " vs " + num(b) + " (" + bound_name + " " + num(bound) + ")");
}

struct Case {
  const char* name;
  std::function<void()> fn;
};
inline std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}
struct Register {
  Register(const char* name, std::function<void()> fn) { cases().push_back({name, std::move(fn)}); }
};

// Runs every TEST (or those whose name contains argv[1]); returns non-zero when any check failed.
inline int run_all(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  for (const auto& c : cases()) {
    if (!filter.empty() && std::string(c.name).find(filter) == std::string::npos) continue;
    const int before = failures();
    const auto t0 = std::chrono::steady_clock::now();
    try {
      c.fn();
    } catch (const std::exception& e) {
      fail(__FILE__, __LINE__, std::string("uncaught exception in ") + c.name + ": " + e.what());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s %s (%.3f s)\n", failures() == before ? "ok  " : "FAIL", c.name, s);
  }
  std::printf("%d failure(s)\n", failures());
  return failures() ? 1 : 0;
}

}  // namespace check

#define TTS_CAT2(a, b) a##b
#define TTS_CAT(a, b) TTS_CAT2(a, b)
#define TEST(name)                                         \
  static void name();                                      \
  static check::Register TTS_CAT(reg_, name)(#name, name); \
  static void name()

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) check::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define CHECK_MSG(cond, msg)                                                                \
  do {                                                                                      \
    if (!(cond)) check::fail(__FILE__, __LINE__, std::string("CHECK(" #cond ") ") + (msg)); \
  } while (0)

#define CHECK_EQ(a, b)                                                                                  \
  do {                                                                                                  \
    const auto va_ = (a);                                                                               \
    const auto vb_ = (b);                                                                               \
    if (!(va_ == vb_))                                                                                  \
      check::fail(__FILE__, __LINE__,                                                                   \
                  std::string(#a " == " #b ": ") + std::to_string(va_) + " vs " + std::to_string(vb_)); \
  } while (0)

// |a - b| <= tol (absolute)
#define CHECK_NEAR(a, b, tol)                                                                                   \
  do {                                                                                                          \
    const double va_ = (a), vb_ = (b), t_ = (tol);                                                              \
    if (!(std::fabs(va_ - vb_) <= t_)) check::fail_bound(__FILE__, __LINE__, #a " ~ " #b, va_, vb_, "tol", t_); \
  } while (0)

// |a - b| <= rel * max(|a|, |b|)
#define CHECK_REL(a, b, rel)                                                       \
  do {                                                                             \
    const double va_ = (a), vb_ = (b), r_ = (rel);                                 \
    if (!(std::fabs(va_ - vb_) <= r_ * std::fmax(std::fabs(va_), std::fabs(vb_)))) \
      check::fail_bound(__FILE__, __LINE__, #a " ~rel " #b, va_, vb_, "rel", r_);  \
  } while (0)

// expr throws E; when `needle` is non-empty the message must contain it.
#define CHECK_THROWS(E, expr, needle)                                                          \
  do {                                                                                         \
    bool thrown_ = false;                                                                      \
    try {                                                                                      \
      (void)(expr);                                                                            \
    } catch (const E& e_) {                                                                    \
      thrown_ = true;                                                                          \
      const std::string msg_ = e_.what(), nd_ = (needle);                                      \
      if (!nd_.empty() && msg_.find(nd_) == std::string::npos)                                 \
        check::fail(__FILE__, __LINE__, "message '" + msg_ + "' lacks '" + nd_ + "'");         \
    } catch (const std::exception& e_) {                                                       \
      check::fail(__FILE__, __LINE__, std::string(#expr " threw another type: ") + e_.what()); \
      thrown_ = true;                                                                          \
    }                                                                                          \
    if (!thrown_) check::fail(__FILE__, __LINE__, #expr " did not throw " #E);                 \
  } while (0)

#define TEST_MAIN() \
  int main(int argc, char** argv) { return check::run_all(argc, argv); }
