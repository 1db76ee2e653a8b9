// A row_major train over other mode sizes (resplit), and what a train costs from its header
// (train_work). Both walk the same plan, so the cost checked before a put is the cost paid later.
#include <algorithm>
#include <cmath>
#include <string>

#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/tt_checks.hpp"
#include "ttstore/internal/tt_interfaces.hpp"
#include "ttstore/limits.hpp"
#include "ttstore/tt.hpp"

namespace tts {
namespace {

// Larger sizes than this cannot be held or indexed; the plan refuses them before any arithmetic.
constexpr double kMaxSize = 9007199254740992.0;  // 2^53

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

double product(const std::vector<int64_t>& v) {
  double p = 1;
  for (int64_t x : v) p *= static_cast<double>(x);
  return p;
}

int64_t checked(double size, const char* what) {
  if (size > kMaxSize) throw InvalidArgument(std::string("resplit: ") + what + " is too large");
  return static_cast<int64_t>(size);
}

// The plan, left to right. A "carry" core [r, b, rc] spans the input modes merged since the last
// target boundary; each target mode e is then taken off its front:
//   - while e does not divide b, the next input core is merged in (b grows, rc becomes its rank);
//   - b == e: the carry is the target core;
//   - else the carry is split after e: an identity on the smaller side of the (r e) x (b/e rc)
//     unfolding, so the values are only copied.
// The visitor sees every step with its sizes; walk returns the output ranks.
template <class Visitor>
std::vector<int64_t> walk(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                          const std::vector<int64_t>& target, Visitor& v) {
  const int d = static_cast<int>(modes.size()), K = static_cast<int>(target.size());
  if (d < 1 || K < 1) throw InvalidArgument("resplit needs at least one mode on each side");
  if (static_cast<int>(ranks.size()) != d + 1 || ranks.front() != 1 || ranks.back() != 1) {
    throw InvalidArgument("ranks " + list_text(ranks) + " do not chain " + std::to_string(d) + " modes");
  }
  for (int64_t n : modes) {
    if (n < 1) throw InvalidArgument("modes " + list_text(modes) + " must be >= 1");
  }
  for (int64_t n : target) {
    if (n < 1) throw InvalidArgument("target modes " + list_text(target) + " must be >= 1");
  }
  for (int64_t r : ranks) {
    if (r < 1) throw InvalidArgument("ranks " + list_text(ranks) + " must be >= 1");
  }
  if (product(modes) != product(target) || product(modes) > kMaxSize) {
    throw InvalidArgument("modes " + list_text(modes) + " and " + list_text(target) +
                          " do not describe the same number of elements");
  }
  std::vector<int64_t> out{1};
  int j = 1;
  int64_t r = 1, b = modes[0], rc = ranks[1];
  v.start(0, r, b, rc);
  auto merge = [&]() {
    v.merge(j, r, b, rc, modes[j], ranks[j + 1]);
    b *= modes[j];
    rc = ranks[j + 1];
    ++j;
  };
  for (int k = 0; k < K; ++k) {
    const int64_t e = target[k];
    if (k == K - 1) {
      while (j < d) merge();
    } else {
      while (b % e != 0) merge();
    }
    if (b == e) {
      v.emit(r, b, rc);
      out.push_back(rc);
      if (k == K - 1) break;
      r = rc;
      if (j < d) {
        b = modes[j];
        rc = ranks[j + 1];
        v.start(j, r, b, rc);
        ++j;
      } else {
        b = 1;  // the remaining target modes are all 1: identities carry the bond to the end
        v.start_identity(r);
      }
      continue;
    }
    const int64_t rest = b / e;
    const double left = static_cast<double>(r) * static_cast<double>(e);
    const double right = static_cast<double>(rest) * static_cast<double>(rc);
    if (left <= right) {
      v.split_identity_left(r, e, rest, rc);
      r = checked(left, "a bond");
    } else {
      v.split_identity_right(r, e, rest, rc);
      r = checked(right, "a bond");
    }
    out.push_back(r);
    b = rest;
  }
  return out;
}

double reconstruction_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks) {
  const int d = static_cast<int>(modes.size());
  const int p = detail::choose_split(modes, ranks);
  double w = 0, rows = 1, cols = 1;
  for (int k = 0; k < p; ++k) {
    w += rows * static_cast<double>(ranks[k]) * static_cast<double>(modes[k]) * static_cast<double>(ranks[k + 1]);
    rows *= static_cast<double>(modes[k]);
  }
  for (int k = d - 1; k >= p; --k) {
    w += static_cast<double>(ranks[k]) * static_cast<double>(modes[k]) * static_cast<double>(ranks[k + 1]) * cols;
    cols *= static_cast<double>(modes[k]);
  }
  return w + rows * cols * static_cast<double>(ranks[p]);
}

// Counts the plan's work and the values it writes.
struct CostVisitor {
  double work = 0, elements = 0;
  static double sz(int64_t a, int64_t b, int64_t c) {
    return static_cast<double>(a) * static_cast<double>(b) * static_cast<double>(c);
  }
  void start(int, int64_t, int64_t, int64_t) {}
  void start_identity(int64_t r) { work += sz(r, 1, r); }
  void merge(int, int64_t r, int64_t b, int64_t s, int64_t n, int64_t r2) {
    work += sz(r, b, s) * static_cast<double>(n) * static_cast<double>(r2);
  }
  void emit(int64_t r, int64_t b, int64_t rc) {
    elements += sz(r, b, rc);
    work += sz(r, b, rc);
  }
  void split_identity_left(int64_t r, int64_t e, int64_t, int64_t) {
    const double n = sz(r, e, 1) * sz(r, e, 1);
    elements += n;
    work += n;
  }
  void split_identity_right(int64_t r, int64_t e, int64_t rest, int64_t rc) {
    const double n = sz(r, e, rest) * static_cast<double>(rc);
    elements += n;
    work += n + sz(rest, rc, 1) * sz(rest, rc, 1);
  }
};

// Carries out the plan on the values.
struct BuildVisitor {
  const TensorTrain& in;
  std::vector<std::vector<double>> cores;
  std::vector<double> carry;
  bool merged = false;

  void start(int j, int64_t, int64_t, int64_t) { carry = in.cores[j]; }
  void start_identity(int64_t r) {
    carry.assign(static_cast<std::size_t>(checked(static_cast<double>(r) * static_cast<double>(r), "an identity")),
                 0.0);
    for (int64_t a = 0; a < r; ++a) carry[static_cast<std::size_t>(a * r + a)] = 1.0;
  }
  void merge(int j, int64_t r, int64_t b, int64_t s, int64_t n, int64_t r2) {
    // (r b) x s times s x (n r2) is the carry [r, b n, r2] in row-major order.
    const int64_t rows = checked(static_cast<double>(r) * static_cast<double>(b), "a merged core");
    const int64_t cols = checked(static_cast<double>(n) * static_cast<double>(r2), "a merged core");
    std::vector<double> next(
        static_cast<std::size_t>(checked(static_cast<double>(rows) * static_cast<double>(cols), "a merged core")));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, s, 1.0, carry.data(), s, in.cores[j].data(),
                cols, 0.0, next.data(), cols);
    carry.swap(next);
    merged = true;
  }
  void emit(int64_t, int64_t, int64_t) { cores.push_back(std::move(carry)); }
  // Core [r, e, r e] with element (a, i, a e + i) = 1; the carry's values, unchanged in memory, are
  // then the core [r e, b / e, rc].
  void split_identity_left(int64_t r, int64_t e, int64_t, int64_t) {
    const int64_t s = r * e;
    std::vector<double> id(
        static_cast<std::size_t>(checked(static_cast<double>(s) * static_cast<double>(s), "an identity")), 0.0);
    for (int64_t a = 0; a < r; ++a) {
      for (int64_t i = 0; i < e; ++i) id[static_cast<std::size_t>((a * e + i) * s + a * e + i)] = 1.0;
    }
    cores.push_back(std::move(id));
  }
  // The carry's values are the core [r, e, (b / e) rc]; the new carry [(b / e) rc, b / e, rc] has
  // element ((t rc + c), t, c) = 1.
  void split_identity_right(int64_t, int64_t, int64_t rest, int64_t rc) {
    cores.push_back(std::move(carry));
    const int64_t s = rest * rc;
    carry.assign(static_cast<std::size_t>(checked(
                     static_cast<double>(s) * static_cast<double>(rest) * static_cast<double>(rc), "an identity")),
                 0.0);
    for (int64_t t = 0; t < rest; ++t) {
      for (int64_t c = 0; c < rc; ++c) carry[static_cast<std::size_t>(((t * rc + c) * rest + t) * rc + c)] = 1.0;
    }
  }
};

}  // namespace

TensorTrain resplit(const TensorTrain& tt, const std::vector<int64_t>& modes) {
  detail::check_structure(tt, "tensor train");
  if (tt.modes == modes) return tt;
  BuildVisitor v{tt, {}, {}, false};
  TensorTrain out;
  out.ranks = walk(tt.modes, tt.ranks, modes, v);
  out.modes = modes;
  out.cores = std::move(v.cores);
  out.f32 = tt.f32 && !v.merged;  // copies and identities are float32 values when the input's are
  return out;
}

double TrainWork::max() const { return std::max({contraction, reconstruction, resplit}); }

bool TrainWork::within_limits() const {
  return contraction <= kMaxTrainWork && resplit <= kMaxTrainWork &&
         reconstruction <= std::max(kMaxTrainWork, kMaxRebuildWorkPerValue * numel);
}

TrainWork train_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                     const std::vector<int64_t>& target) {
  CostVisitor v;
  const std::vector<int64_t> out = walk(modes, ranks, target, v);
  TrainWork w;
  w.contraction = detail::contraction_work(modes, ranks, ranks);
  w.reconstruction = reconstruction_work(modes, ranks);
  w.resplit = modes == target ? 0.0 : v.work + detail::contraction_work(target, out, out);
  w.resplit_elements = modes == target ? 0.0 : v.elements;
  w.numel = product(modes);
  return w;
}

}  // namespace tts
