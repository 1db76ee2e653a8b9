// Selections read from the cores: each value is a product of one core slice per mode, and values
// whose leading digits agree share that product. A sweep from the first core keeps one row vector per
// distinct digit prefix (a trie level), so a region pays about its size times r^2 and a point d r^2.
// Coarse levels contract an axis's finest bits with [1/2, 1/2] (block averages) before the sweep.
#include "ttstore/selection.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ttstore/internal/dtype_io.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/selection_plan.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/internal/tt_checks.hpp"
#include "ttstore/limits.hpp"

namespace tts {

int64_t AxisSlice::count() const {
  if (step > 0) return stop > start ? (stop - start + step - 1) / step : 0;
  if (step < 0) return start > stop ? (start - stop - step - 1) / (-step) : 0;
  return 0;
}

namespace {

int power_of_two_factor(int64_t n) {
  int b = 0;
  while (n > 0 && (n & 1) == 0) {
    n >>= 1;
    ++b;
  }
  return b;
}

std::vector<int> levels_of(const std::vector<int64_t>& shape, const Selection& s) {
  const std::size_t na = shape.size();
  if (s.level.empty()) return std::vector<int>(na, 0);
  if (s.level.size() != na) {
    throw InvalidArgument("level has " + std::to_string(s.level.size()) + " entries for " + std::to_string(na) +
                          " axes");
  }
  for (std::size_t a = 0; a < na; ++a) {
    const int bits = power_of_two_factor(shape[a]);
    if (s.level[a] < 0 || s.level[a] > bits) {
      throw InvalidArgument("axis " + std::to_string(a) + " (size " + std::to_string(shape[a]) + ") can be coarsened " +
                            std::to_string(bits) + " level" + (bits == 1 ? "" : "s") + " at most, not " +
                            std::to_string(s.level[a]));
    }
  }
  return s.level;
}

double product(const std::vector<int64_t>& v) {
  double p = 1;
  for (int64_t x : v) p *= static_cast<double>(x);
  return p;
}

// How each mode's digit is read from a query: digit = (coord[source] / div) % radix; source < 0: the
// digit is always 0 (a mode of size 1, or one averaged away).
struct ModeDigit {
  int source = -1;
  int64_t div = 1, radix = 1;
};

// The sweep's plan for one layout and level. A layout of the engine's own (row_major or interleaved
// over the shape's digits) reads coarse axis coordinates and averages in the cores; a row_major train
// over a caller's split reads the fine cell's C-order offset, and a level there averages fine cells.
struct Plan {
  std::vector<ModeDigit> digits;
  std::vector<bool> averaged;  // mode k contracted with [1/2, 1/2]
  int coords = 0;              // coordinates a query carries
  bool flat = false;           // the one coordinate is the fine C-order offset
  int expand_bits = 0;         // flat with a level: log2 of the fine cells each value averages
  std::vector<int> level;      // per axis
  std::vector<int64_t> shape;  // the fine grid
};

Plan make_plan(const QttLayout& layout, const Selection& s) {
  Plan P;
  P.shape = layout.shape;
  P.level = levels_of(layout.shape, s);
  const int na = static_cast<int>(P.shape.size());
  const int d = static_cast<int>(layout.modes.size());
  P.digits.assign(d, ModeDigit{});
  P.averaged.assign(d, false);
  const bool own =
      layout.kind == LayoutKind::Interleaved || layout.modes == make_layout(layout.shape, layout.kind).modes;
  if (!own) {
    P.flat = true;
    P.coords = 1;
    for (int a = 0; a < na; ++a) P.expand_bits += P.level[a];
    for (int k = 0; k < d; ++k) {
      if (layout.modes[k] > 1) P.digits[k] = ModeDigit{0, layout.weights[k], layout.modes[k]};
    }
    return P;
  }
  P.coords = na;
  std::vector<int64_t> cstride(na, 1);
  for (int a = na - 2; a >= 0; --a) cstride[a] = cstride[a + 1] * P.shape[a + 1];
  for (int k = 0; k < d; ++k) {
    const int64_t n = layout.modes[k], w = layout.weights[k];
    if (n == 1) continue;
    int a = na - 1;
    while (a > 0 && (P.shape[a] == 1 || w >= cstride[a] * P.shape[a])) --a;
    const int64_t place = w / cstride[a];  // one unit of this digit, in cells of axis a
    if (place < (int64_t{1} << P.level[a])) {
      P.averaged[k] = true;
    } else {
      P.digits[k] = ModeDigit{a, place >> P.level[a], n};
    }
  }
  return P;
}

// The train with the averaging done: averaged modes have size 1, their cores G[:, 0, :] / 2 + G[:, 1, :] / 2.
TensorTrain averaged_train(const Plan& P, const TensorTrain& tt) {
  TensorTrain t;
  t.modes = tt.modes;
  for (int k = 0; k < tt.d(); ++k) {
    if (P.averaged[k]) t.modes[k] = 1;
  }
  t.ranks = tt.ranks;
  t.cores.resize(tt.cores.size());
  for (int k = 0; k < tt.d(); ++k) {
    if (!P.averaged[k]) {
      t.cores[k] = tt.cores[k];
      continue;
    }
    const int64_t r0 = tt.ranks[k], r1 = tt.ranks[k + 1];
    std::vector<double>& c = t.cores[k];
    c.assign(static_cast<std::size_t>(r0 * r1), 0.0);
    for (int64_t a = 0; a < r0; ++a) {
      for (int64_t b = 0; b < r1; ++b)
        c[a * r1 + b] = 0.5 * (tt.cores[k][(a * 2) * r1 + b] + tt.cores[k][(a * 2 + 1) * r1 + b]);
    }
  }
  return t;
}

// C (m x r1, rows ldc apart) = A (m x r0, rows lda apart) times B (r0 x r1, rows ldb apart). Plain
// loops for the small ranks most trains have (a BLAS call per few rows costs more than its work).
void rows_times(int64_t m, int64_t r0, int64_t r1, const double* A, int64_t lda, const double* B, int64_t ldb,
                double* C, int64_t ldc) {
  if (r0 * r1 > 256) {
    detail::gemm_in_pieces(CblasNoTrans, m, r1, r0, A, lda, B, ldb, C, ldc);
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    const double* a = A + i * lda;
    double* c = C + i * ldc;
    for (int64_t b = 0; b < r1; ++b) c[b] = 0;
    for (int64_t x = 0; x < r0; ++x) {
      const double ax = a[x];
      const double* g = B + x * ldb;
      for (int64_t b = 0; b < r1; ++b) c[b] += ax * g[b];
    }
  }
}

// The distinct values of key[0, m) (each below `range`) in increasing order into `uniq`, and each
// key's rank among them into `cls`: through a table when the range is small, else by sorting.
void classify(const std::vector<int64_t>& key, int64_t m, int64_t range, std::vector<int64_t>& table,
              std::vector<int64_t>& uniq, int64_t* cls) {
  uniq.clear();
  if (range <= 4 * m + 4096) {
    table.assign(static_cast<std::size_t>(range), -1);
    for (int64_t p = 0; p < m; ++p) table[key[p]] = 0;
    for (int64_t x = 0; x < range; ++x) {
      if (table[x] == 0) {
        table[x] = static_cast<int64_t>(uniq.size());
        uniq.push_back(x);
      }
    }
    for (int64_t p = 0; p < m; ++p) cls[p] = table[key[p]];
    return;
  }
  uniq.assign(key.begin(), key.begin() + m);
  std::sort(uniq.begin(), uniq.end());
  uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (m > 65536)
  for (int64_t p = 0; p < m; ++p) cls[p] = std::lower_bound(uniq.begin(), uniq.end(), key[p]) - uniq.begin();
}

int64_t tile_queries(const std::vector<int64_t>& ranks) {
  const int64_t rmax = *std::max_element(ranks.begin(), ranks.end());
  return std::max<int64_t>(1, kSelectionStateValues / rmax);
}

// The sweep from the right over modes [p, d) for m items whose digit at mode k is digit_of(k, i):
// R gets one row (r_p wide) per distinct suffix of digits, rcls[i] the row of item i.
template <class DigitOf>
void sweep_right(const TensorTrain& t, const Plan& P, int p, int64_t m, const DigitOf& digit_of, std::vector<double>& R,
                 std::vector<int64_t>& rcls) {
  std::vector<double> next;
  std::vector<int64_t> key(static_cast<std::size_t>(m)), table, uniq;
  R.assign(1, 1.0);
  rcls.assign(static_cast<std::size_t>(m), 0);
  int64_t nr = 1;
  for (int k = t.d() - 1; k >= p; --k) {
    const int64_t r0 = t.ranks[k], n = t.modes[k], r1 = t.ranks[k + 1];
    const double* G = t.cores[k].data();
    const bool fixed = P.digits[k].source < 0 || n == 1;
    if (!fixed) {
      for (int64_t i = 0; i < m; ++i) key[i] = digit_of(k, i) * nr + rcls[i];
      classify(key, m, n * nr, table, uniq, rcls.data());
    }
    const int64_t nn = fixed ? nr : static_cast<int64_t>(uniq.size());
    next.resize(static_cast<std::size_t>(nn * r0));
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (nn * r0 * r1 > 1048576)
    for (int64_t x = 0; x < nn; ++x) {  // next[x, a] = sum_b G[a, digit, b] R[parent, b]
      const int64_t parent = fixed ? x : uniq[x] % nr, digit = fixed ? 0 : uniq[x] / nr;
      const double* rv = R.data() + parent * r1;
      for (int64_t a = 0; a < r0; ++a) {
        const double* g = G + (a * n + digit) * r1;
        double acc = 0;
        for (int64_t b = 0; b < r1; ++b) acc += g[b] * rv[b];
        next[x * r0 + a] = acc;
      }
    }
    R.swap(next);
    nr = nn;
  }
}

double dot_at(const double* a, const double* b, int64_t n) {
  double acc = 0;
  for (int64_t x = 0; x < n; ++x) acc += a[x] * b[x];
  return acc;
}

// Where a sweep over nq queries meets from both sides, and the multiply-adds it then costs: the bond
// that minimises the rows both sweeps compute (at most nq distinct prefixes or suffixes a mode, and at
// most the digits' combinations) plus one dot product a query there.
struct Meeting {
  int bond = 0;
  double work = 0;
};
Meeting meeting_bond(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks, const Plan& P, double nq) {
  const int d = static_cast<int>(modes.size());
  std::vector<double> left(d + 1, 0), right(d + 1, 0);
  double prefixes = 1, suffixes = 1;
  for (int k = 0; k < d; ++k) {
    if (P.digits[k].source >= 0) prefixes = std::min(nq, prefixes * static_cast<double>(modes[k]));
    left[k + 1] = left[k] + prefixes * static_cast<double>(ranks[k] * ranks[k + 1]);
  }
  for (int k = d - 1; k >= 0; --k) {
    if (P.digits[k].source >= 0) suffixes = std::min(nq, suffixes * static_cast<double>(modes[k]));
    right[k] = right[k + 1] + suffixes * static_cast<double>(ranks[k] * ranks[k + 1]);
  }
  Meeting best{d, std::numeric_limits<double>::infinity()};
  for (int p = 0; p <= d; ++p) {
    const double work = left[p] + right[p] + nq * static_cast<double>(ranks[p]);
    if (work < best.work) best = Meeting{p, work};
  }
  return best;
}

// A box's split: modes [p, d) read no axis but `last` (its finest digits); last = -1 (and p = d) when
// no mode reads an axis at all.
struct BoxSplit {
  int last = -1, p = 0;
};
BoxSplit box_split(const std::vector<int64_t>& modes, const Plan& P) {
  const int d = static_cast<int>(modes.size());
  BoxSplit b{-1, d};
  for (int k = d - 1; k >= 0; --k) {
    const int src = modes[k] > 1 ? P.digits[k].source : -1;
    if (src >= 0 && b.last >= 0 && src != b.last) break;
    if (src >= 0) b.last = src;
    b.p = k;
  }
  if (b.last < 0) b.p = d;
  return b;
}

// The values of `nq` queries (coords each, row after row) on the train `t` (averaging already in its
// cores). From the left, one row vector per distinct digit prefix (each mode's new prefixes grouped by
// digit, so that a digit's rows are one GEMM with that digit's slice of the core); from the right, one
// per distinct suffix; each value is the dot product of its two at the bond where they meet.
void evaluate_queries(const TensorTrain& t, const Plan& P, const int64_t* q, int64_t nq, double* values) {
  const int C = P.coords;
  std::vector<int64_t> cls(static_cast<std::size_t>(nq), 0), key(static_cast<std::size_t>(nq));
  std::vector<double> S{1.0}, next, gathered;
  std::vector<int64_t> table, uniq;
  int64_t ns = 1;
  const int bond = meeting_bond(t.modes, t.ranks, P, static_cast<double>(nq)).bond;
  for (int k = 0; k < bond; ++k) {
    const int64_t r0 = t.ranks[k], n = t.modes[k], r1 = t.ranks[k + 1];
    const double* G = t.cores[k].data();
    const ModeDigit md = P.digits[k];
    if (md.source < 0 || n == 1) {
      next.resize(static_cast<std::size_t>(ns * r1));
      rows_times(ns, r0, r1, S.data(), r0, G, n * r1, next.data(), r1);
      S.swap(next);
      continue;
    }
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (nq > 65536)
    for (int64_t p = 0; p < nq; ++p) key[p] = ((q[p * C + md.source] / md.div) % md.radix) * ns + cls[p];
    // The distinct (digit, prefix) pairs in order, grouped by digit.
    classify(key, nq, n * ns, table, uniq, cls.data());
    const int64_t nn = static_cast<int64_t>(uniq.size());
    next.resize(static_cast<std::size_t>(nn * r1));
    if (r0 * r1 <= 256) {  // small ranks: each new prefix's row from its parent's, in order
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (nn > 65536)
      for (int64_t x = 0; x < nn; ++x) {
        rows_times(1, r0, r1, S.data() + (uniq[x] % ns) * r0, r0, G + (uniq[x] / ns) * r1, n * r1, next.data() + x * r1,
                   r1);
      }
      S.swap(next);
      ns = nn;
      continue;
    }
    for (int64_t first = 0; first < nn;) {
      const int64_t digit = uniq[first] / ns;
      int64_t last = first;
      while (last < nn && uniq[last] / ns == digit) ++last;
      const int64_t cnt = last - first;
      const double* rows = S.data();
      if (cnt != ns) {  // not every prefix goes on with this digit: gather those that do
        gathered.resize(static_cast<std::size_t>(cnt * r0));
        for (int64_t i = 0; i < cnt; ++i) {
          const double* src = S.data() + (uniq[first + i] % ns) * r0;
          std::copy(src, src + r0, gathered.data() + i * r0);
        }
        rows = gathered.data();
      }
      rows_times(cnt, r0, r1, rows, r0, G + digit * r1, n * r1, next.data() + first * r1, r1);
      first = last;
    }
    S.swap(next);
    ns = nn;
  }
  std::vector<double> R;
  std::vector<int64_t> rcls;
  sweep_right(
      t, P, bond, nq,
      [&](int k, int64_t i) {
        const ModeDigit& md = P.digits[k];
        return (q[i * C + md.source] / md.div) % md.radix;
      },
      R, rcls);
  const int64_t rp = t.ranks[bond];
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (nq > 65536)
  for (int64_t i = 0; i < nq; ++i) values[i] = dot_at(S.data() + cls[i] * rp, R.data() + rcls[i] * rp, rp);
}

void store_values(const double* v, int64_t n, const MutableArrayView& out, int64_t first) {
  const std::size_t sz = dtype_size(out.dtype);
  unsigned char* dst = static_cast<unsigned char*>(out.data) + static_cast<std::size_t>(first) * sz;
  detail::dispatch(out.dtype, [&](auto e) {
    using E = decltype(e);
    for (int64_t i = 0; i < n; ++i) E::store(dst + static_cast<std::size_t>(i) * sz, v[i]);
    return 0;
  });
}

// The values of a box (one list of coarse indices per axis; C order over the lists) on the train `t`
// of an own layout. A box is a product, so its distinct digit prefixes are too: each axis keeps the
// classes of its indices (equal digits so far), and the row vectors form a tensor over the axes'
// classes; a mode of axis a refines a's classes only. The trailing modes that read one axis alone
// (its finest digits, in either layout) are swept from the right instead, one vector per distinct
// suffix, so each value ends as one dot product of the two sides at their bond, as reconstruct's
// left and right interfaces do.
void evaluate_box(const TensorTrain& t, const Plan& P, const std::vector<std::vector<int64_t>>& box, double* values) {
  const int na = static_cast<int>(box.size());
  const BoxSplit split = box_split(t.modes, P);
  const int last = split.last, p = split.p;
  std::vector<std::vector<int64_t>> cls(na);
  std::vector<int64_t> count(na, 1);
  for (int a = 0; a < na; ++a) cls[a].assign(box[a].size(), 0);
  std::vector<double> S{1.0}, next;
  std::vector<int64_t> key, table, uniq;
  for (int k = 0; k < p; ++k) {
    const int64_t r0 = t.ranks[k], n = t.modes[k], r1 = t.ranks[k + 1];
    const double* G = t.cores[k].data();
    const ModeDigit md = P.digits[k];
    int64_t states = 1;
    for (int64_t c : count) states *= c;
    if (md.source < 0 || n == 1) {
      next.resize(static_cast<std::size_t>(states * r1));
      rows_times(states, r0, r1, S.data(), r0, G, n * r1, next.data(), r1);
      S.swap(next);
      continue;
    }
    const int a = md.source;
    const int64_t m = static_cast<int64_t>(box[a].size()), c_old = count[a];
    key.resize(static_cast<std::size_t>(m));
    for (int64_t i = 0; i < m; ++i) key[i] = ((box[a][i] / md.div) % md.radix) * c_old + cls[a][i];
    classify(key, m, n * c_old, table, uniq, cls[a].data());
    const int64_t c_new = static_cast<int64_t>(uniq.size());
    int64_t outer = 1, inner = 1;
    for (int b = 0; b < a; ++b) outer *= count[b];
    for (int b = a + 1; b < na; ++b) inner *= count[b];
    // new[o, j, i, :] = old[o, parent(j), i, :] G[:, digit(j), :], written in order.
    next.resize(static_cast<std::size_t>(outer * c_new * inner * r1));
#pragma omp parallel for num_threads(detail::threads()) \
    schedule(static) if (r0 * r1 <= 256 && outer * c_new * inner > 65536)
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < c_new; ++j) {
        const int64_t parent = uniq[j] % c_old, digit = uniq[j] / c_old;
        rows_times(inner, r0, r1, S.data() + (o * c_old + parent) * inner * r0, r0, G + digit * r1, n * r1,
                   next.data() + (o * c_new + j) * inner * r1, r1);
      }
    }
    S.swap(next);
    count[a] = c_new;
  }
  // The right sweep over modes [p, d): one row per distinct suffix of `last`'s digits.
  const int64_t rp = t.ranks[p];
  std::vector<double> R;
  std::vector<int64_t> rcls;
  sweep_right(
      t, P, p, last >= 0 ? static_cast<int64_t>(box[last].size()) : 0,
      [&](int k, int64_t i) { return (box[last][i] / P.digits[k].div) % P.digits[k].radix; }, R, rcls);
  // Each value: its left state (the classes of its indices) against its right suffix, at bond p.
  std::vector<int64_t> stride(na, 1);
  for (int a = na - 2; a >= 0; --a) stride[a] = stride[a + 1] * count[a + 1];
  const int64_t lastn = na > 0 ? static_cast<int64_t>(box[na - 1].size()) : 1;
  int64_t rows = 1;
  for (int a = 0; a + 1 < na; ++a) rows *= static_cast<int64_t>(box[a].size());
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (rows * lastn > 65536)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t rest = row, base = 0, rrow = 0;
    for (int a = na - 2; a >= 0; --a) {
      const int64_t m = static_cast<int64_t>(box[a].size()), i = rest % m;
      rest /= m;
      base += cls[a][i] * stride[a];
      if (a == last) rrow = rcls[i];
    }
    for (int64_t i = 0; i < lastn; ++i) {
      const int64_t off = base + (na > 0 ? cls[na - 1][i] : 0);
      const int64_t rc = last >= 0 && last == na - 1 ? rcls[i] : rrow;
      values[row * lastn + i] = dot_at(S.data() + off * rp, R.data() + rc * rp, rp);
    }
  }
}

// A region of an own layout in boxes of at most tile_queries values: the leading axes one index at a
// time and one axis in chunks, so that each box is a contiguous run of the output.
void reconstruct_region(const TensorTrain& t, const Plan& P, const Selection& s, const std::vector<int64_t>& out_shape,
                        const MutableArrayView& out) {
  const int na = static_cast<int>(out_shape.size());
  const int64_t budget = tile_queries(t.ranks);
  int split = na;  // axes [split, na) whole in every box
  int64_t tail = 1;
  while (split > 0 && tail * out_shape[split - 1] <= budget) tail *= out_shape[--split];
  const int64_t chunk = split > 0 ? std::max<int64_t>(1, budget / tail) : 1;
  const int64_t lead_axis = split > 0 ? split - 1 : -1;
  auto index_of = [&](int a, int64_t i) { return s.region[a].start + i * s.region[a].step; };
  std::vector<std::vector<int64_t>> box(na);
  for (int a = split; a < na; ++a) {
    for (int64_t i = 0; i < out_shape[a]; ++i) box[a].push_back(index_of(a, i));
  }
  int64_t heads = 1;  // index combinations of the axes before lead_axis
  for (int a = 0; a < lead_axis; ++a) heads *= out_shape[a];
  const int64_t lead_n = lead_axis >= 0 ? out_shape[lead_axis] : 1;
  std::vector<double> v;
  int64_t written = 0;
  for (int64_t h = 0; h < heads; ++h) {
    int64_t rest = h;
    for (int a = static_cast<int>(lead_axis) - 1; a >= 0; --a) {
      box[a].assign(1, index_of(a, rest % out_shape[a]));
      rest /= out_shape[a];
    }
    for (int64_t c0 = 0; c0 < lead_n; c0 += chunk) {
      if (lead_axis >= 0) {
        box[lead_axis].clear();
        for (int64_t i = c0; i < std::min(lead_n, c0 + chunk); ++i) box[lead_axis].push_back(index_of(lead_axis, i));
      }
      int64_t n = 1;
      for (const auto& l : box) n *= static_cast<int64_t>(l.size());
      v.resize(static_cast<std::size_t>(n));
      evaluate_box(t, P, box, v.data());
      store_values(v.data(), n, out, written);
      written += n;
    }
  }
}

// The queries of outputs [o0, o1): the coarse coordinates of each selected value (its fine C-order
// offset with a caller's split, once per fine cell it averages).
void make_queries(const Plan& P, const Selection& s, const std::vector<int64_t>& out_shape, int64_t o0, int64_t o1,
                  std::vector<int64_t>& q) {
  const int na = static_cast<int>(P.shape.size());
  const int64_t expand = int64_t{1} << P.expand_bits;
  q.assign(static_cast<std::size_t>((o1 - o0) * expand * P.coords), 0);
  std::vector<int64_t> c(na), fine(na);
  for (int64_t o = o0; o < o1; ++o) {
    if (s.by_points) {
      for (int a = 0; a < na; ++a) c[a] = s.points[o * na + a];
    } else {
      int64_t rest = o;
      for (int a = na - 1; a >= 0; --a) {
        const int64_t i = rest % out_shape[a];
        rest /= out_shape[a];
        c[a] = s.region[a].start + i * s.region[a].step;
      }
    }
    int64_t* dst = q.data() + (o - o0) * expand * P.coords;
    if (!P.flat) {
      std::copy(c.begin(), c.end(), dst);
      continue;
    }
    for (int64_t t = 0; t < expand; ++t) {  // the block's cells, axis by axis from the last
      int64_t rest = t, off = 0;
      for (int a = na - 1; a >= 0; --a) {
        const int64_t side = int64_t{1} << P.level[a];
        fine[a] = c[a] * side + rest % side;
        rest /= side;
      }
      for (int a = 0; a < na; ++a) off = off * P.shape[a] + fine[a];
      dst[t] = off;
    }
  }
}

void check_out(const MutableArrayView& out, const std::vector<int64_t>& out_shape) {
  const double n = product(out_shape);
  if (!out.data && n > 0) throw InvalidArgument("a selection needs an output");
  if (static_cast<double>(out.numel) != n) {
    throw InvalidArgument("output has " + std::to_string(out.numel) + " elements, the selection " +
                          std::to_string(static_cast<int64_t>(n)));
  }
}

}  // namespace

std::vector<int64_t> coarse_shape(const std::vector<int64_t>& shape, const Selection& s) {
  const std::vector<int> level = levels_of(shape, s);
  std::vector<int64_t> c = shape;
  for (std::size_t a = 0; a < c.size(); ++a) c[a] >>= level[a];
  return c;
}

std::vector<int64_t> selection_shape(const std::vector<int64_t>& shape, const Selection& s) {
  const std::vector<int64_t> coarse = coarse_shape(shape, s);
  const std::size_t na = coarse.size();
  if (s.by_points) {
    if (na == 0) throw InvalidArgument("a 0-d array has no points to select");
    if (s.points.size() % na != 0) {
      throw InvalidArgument("points must have " + std::to_string(na) + " indices each");
    }
    const std::size_t n = s.points.size() / na;
    for (std::size_t p = 0; p < n; ++p) {
      for (std::size_t a = 0; a < na; ++a) {
        const int64_t i = s.points[p * na + a];
        if (i < 0 || i >= coarse[a]) {
          throw InvalidArgument("point " + std::to_string(p) + ": index " + std::to_string(i) +
                                " is out of range for axis " + std::to_string(a) + " of size " +
                                std::to_string(coarse[a]));
        }
      }
    }
    return {static_cast<int64_t>(n)};
  }
  if (s.region.size() != na) {
    throw InvalidArgument("region has " + std::to_string(s.region.size()) + " slices for " + std::to_string(na) +
                          " axes");
  }
  std::vector<int64_t> out(na);
  for (std::size_t a = 0; a < na; ++a) {
    const AxisSlice& r = s.region[a];
    if (r.step == 0) throw InvalidArgument("axis " + std::to_string(a) + ": slice step cannot be zero");
    const int64_t n = r.count();
    const int64_t last = r.start + (n - 1) * r.step;
    if (n > 0 && (r.start < 0 || r.start >= coarse[a] || last < 0 || last >= coarse[a])) {
      throw InvalidArgument("axis " + std::to_string(a) + ": slice [" + std::to_string(r.start) + ", " +
                            std::to_string(r.stop) + ", " + std::to_string(r.step) + "] leaves the axis of size " +
                            std::to_string(coarse[a]));
    }
    out[a] = n;
  }
  return out;
}

double selection_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks, const QttLayout& layout,
                      const Selection& s) {
  if (modes != layout.modes || ranks.size() != modes.size() + 1) {
    throw InvalidArgument("the train's modes and ranks do not match its layout");
  }
  const Plan P = make_plan(layout, s);
  const std::vector<int64_t> out_shape = selection_shape(layout.shape, s);
  const double values = product(out_shape);
  const double nq = values * std::ldexp(1.0, P.expand_bits);
  const int d = static_cast<int>(modes.size());
  double work = 0;
  for (int k = 0; k < d; ++k) {
    if (P.averaged[k]) work += 2.0 * static_cast<double>(ranks[k] * ranks[k + 1]);
  }
  if (nq == 0) return work;
  const double tile = std::min(nq, static_cast<double>(tile_queries(ranks)));
  const double tiles = std::ceil(nq / tile);
  work += tiles * tile * static_cast<double>(d);  // reading each query's digits
  if (s.by_points || P.flat) return work + tiles * meeting_bond(modes, ranks, P, tile).work;
  // A region: from the left, at most the product over axes of the distinct leading digits each axis
  // has by then (and the tile's values); from the right, at most the last axis's selected indices.
  const BoxSplit split = box_split(modes, P);
  const int na = static_cast<int>(layout.shape.size());
  std::vector<double> seen(static_cast<std::size_t>(std::max(na, 1)), 1.0);
  for (int k = 0; k < split.p; ++k) {
    const ModeDigit md = P.digits[k];
    if (md.source >= 0) seen[md.source] *= static_cast<double>(md.radix);
    double bound = 1;
    for (int a = 0; a < na; ++a) bound *= std::min(seen[a], static_cast<double>(out_shape[a]));
    const double prefixes = std::min(tile, bound);
    work += tiles * prefixes * static_cast<double>(ranks[k] * ranks[k + 1]);
  }
  double suffixes = 1;
  for (int k = d - 1; k >= split.p; --k) {
    if (P.digits[k].source >= 0) suffixes *= static_cast<double>(P.digits[k].radix);
    const double rows = std::min(suffixes, static_cast<double>(out_shape[split.last]));
    work += tiles * rows * static_cast<double>(ranks[k] * ranks[k + 1]);
  }
  return work + nq * static_cast<double>(ranks[split.p]);
}

double dense_selection_work(const std::vector<int64_t>& shape, const Selection& s) {
  const std::vector<int> level = levels_of(shape, s);
  double cells = 1;
  for (int l : level) cells *= std::ldexp(1.0, l);
  return product(selection_shape(shape, s)) * cells;
}

namespace detail {

SelectionPlan plan_selection(const TensorTrain& tt, const QttLayout& layout, const Selection& s) {
  check_structure(tt, "tensor train");
  if (tt.modes != layout.modes) throw InvalidArgument("the tensor train's modes do not match the layout's");
  const Plan P = make_plan(layout, s);
  SelectionPlan out;
  out.out_shape = selection_shape(layout.shape, s);
  out.train = averaged_train(P, tt);
  for (const ModeDigit& md : P.digits) {
    out.source.push_back(md.source);
    out.div.push_back(md.div);
    out.radix.push_back(md.radix);
  }
  out.flat = P.flat;
  out.expand_bits = P.expand_bits;
  out.level = P.level;
  out.shape = P.shape;
  return out;
}

}  // namespace detail

void reconstruct_selection(const TensorTrain& tt, const QttLayout& layout, const Selection& s,
                           const MutableArrayView& out) {
  detail::check_structure(tt, "tensor train");
  if (tt.modes != layout.modes) throw InvalidArgument("the tensor train's modes do not match the layout's");
  const Plan P = make_plan(layout, s);
  const std::vector<int64_t> out_shape = selection_shape(layout.shape, s);
  check_out(out, out_shape);
  const int64_t total = out.numel;
  if (total == 0) return;
  const TensorTrain t = averaged_train(P, tt);
  if (!s.by_points && !P.flat) {
    reconstruct_region(t, P, s, out_shape, out);
    return;
  }
  const int64_t expand = int64_t{1} << P.expand_bits;
  const int64_t per_tile = std::max<int64_t>(1, tile_queries(t.ranks) / expand);
  std::vector<int64_t> q;
  std::vector<double> v, mean;
  for (int64_t o0 = 0; o0 < total; o0 += per_tile) {
    const int64_t o1 = std::min(total, o0 + per_tile);
    make_queries(P, s, out_shape, o0, o1, q);
    v.resize(static_cast<std::size_t>((o1 - o0) * expand));
    evaluate_queries(t, P, q.data(), static_cast<int64_t>(v.size()), v.data());
    if (expand > 1) {
      mean.assign(static_cast<std::size_t>(o1 - o0), 0.0);
      for (int64_t o = 0; o < o1 - o0; ++o) {
        double sum = 0;
        for (int64_t c = 0; c < expand; ++c) sum += v[o * expand + c];
        mean[o] = sum / static_cast<double>(expand);
      }
      v.swap(mean);
    }
    store_values(v.data(), o1 - o0, out, o0);
  }
}

void select_dense(const ArrayView& a, const std::vector<int64_t>& shape, const Selection& s,
                  const MutableArrayView& out) {
  const std::vector<int> level = levels_of(shape, s);
  const std::vector<int64_t> out_shape = selection_shape(shape, s);
  check_out(out, out_shape);
  if (static_cast<double>(a.numel) != product(shape) || (!a.data && a.numel > 0)) {
    throw InvalidArgument("the array does not have the shape's " +
                          std::to_string(static_cast<int64_t>(product(shape))) + " elements");
  }
  const int na = static_cast<int>(shape.size());
  int bits = 0;
  for (int l : level) bits += l;
  const int64_t cells = int64_t{1} << bits;
  const std::size_t isz = dtype_size(a.dtype), osz = dtype_size(out.dtype);
  const unsigned char* src = static_cast<const unsigned char*>(a.data);
  unsigned char* dst = static_cast<unsigned char*>(out.data);
  detail::dispatch(a.dtype, [&](auto ein) {
    using In = decltype(ein);
    detail::dispatch(out.dtype, [&](auto eout) {
      using Out = decltype(eout);
#pragma omp parallel for num_threads(detail::threads()) schedule(static) if (out.numel * cells > 65536)
      for (int64_t o = 0; o < out.numel; ++o) {
        std::vector<int64_t> c(static_cast<std::size_t>(na));
        if (s.by_points) {
          for (int j = 0; j < na; ++j) c[j] = s.points[o * na + j];
        } else {
          int64_t rest = o;
          for (int j = na - 1; j >= 0; --j) {
            c[j] = s.region[j].start + (rest % out_shape[j]) * s.region[j].step;
            rest /= out_shape[j];
          }
        }
        double sum = 0;
        for (int64_t t = 0; t < cells; ++t) {
          int64_t rest = t, off = 0, mult = 1;
          for (int j = na - 1; j >= 0; --j) {
            const int64_t side = int64_t{1} << level[j];
            off += (c[j] * side + rest % side) * mult;
            rest /= side;
            mult *= shape[j];
          }
          sum += In::load(src + static_cast<std::size_t>(off) * isz);
        }
        Out::store(dst + static_cast<std::size_t>(o) * osz, sum / static_cast<double>(cells));
      }
      return 0;
    });
    return 0;
  });
}

}  // namespace tts
