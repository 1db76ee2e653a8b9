#include "solvers/poisson/poisson_cg.hpp"

#include <omp.h>

#include <array>
#include <vector>

#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/threads.hpp"

namespace tts::sim::detail {

namespace {

// The row kernels, compiled for the base instruction set and, on x86-64 with GCC, for AVX2 + FMA
// (chosen once at run time).
namespace base {
#include "solvers/poisson/poisson_cg_rows.inc"
}
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TTS_CG_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "solvers/poisson/poisson_cg_rows.inc"
}
#pragma GCC pop_options
#endif

struct Rows {
  void (*matvec_dot)(const double*, const double*, const double*, double, int64_t, double*);
  double (*residual)(const double*, const double*, const double*, const double*, double, int64_t, double*);
  void (*direction)(const double*, double, const double*, int64_t, double*);
  double (*update)(double, const double*, const double*, const double*, double, double*, bool, const double*, double*,
                   int64_t);
  void (*dot2)(const double*, const double*, int64_t, double*);
};

#define TTS_CG_ROWS(isa) \
  Rows { isa::matvec_dot_row, isa::residual_row, isa::direction_row, isa::update_row, isa::dot2_span }

const Rows& rows() {
#if TTS_CG_AVX2
  static const Rows best =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? TTS_CG_ROWS(avx2) : TTS_CG_ROWS(base);
#else
  static const Rows best = TTS_CG_ROWS(base);
#endif
  return best;
}

#undef TTS_CG_ROWS

// Below this many points a pass stays on one thread.
constexpr int64_t kParallel = int64_t{1} << 14;

// One thread's partial sums, a cache line each so that threads do not share lines.
struct alignas(64) Partial {
  double v[2];
};

// Thread t's share [lo, hi) of `count` rows (or elements).
inline void share(int64_t count, int t, int nt, int64_t& lo, int64_t& hi) {
  lo = count * t / nt;
  hi = count * (t + 1) / nt;
}

// Sum of part[0..nt).v[k] in thread order (the same on every thread).
inline double total(const Partial* part, int nt, int k) {
  double s = 0;
  for (int t = 0; t < nt; ++t) s += part[t].v[k];
  return s;
}

// Sums f(i, out) (two values a row) over rows [0, rows) piece by piece, with a poll between pieces:
// the team shares each piece's rows, partials are summed in thread order and pieces in order, so the
// result does not depend on timing (and with one piece is the sum one parallel region makes).
template <typename RowSum>
std::array<double, 2> sum_rows(int64_t rows, int64_t row_points, RowSum f) {
  const int T = tts::detail::threads();
  std::vector<Partial> part(static_cast<std::size_t>(T));
  std::array<double, 2> sum{0.0, 0.0};
  tts::detail::in_pieces(rows, tts::detail::rows_per_piece(row_points, tts::detail::kPiecePoints),
                         [&](int64_t first, int64_t end) {
#pragma omp parallel num_threads(T) if ((end - first) * row_points >= kParallel)
                           {
                             const int t = omp_get_thread_num(), nt = omp_get_num_threads();
                             int64_t lo, hi;
                             share(end - first, t, nt, lo, hi);
                             double s0 = 0, s1 = 0;
                             for (int64_t i = first + lo; i < first + hi; ++i) {
                               double d[2] = {0.0, 0.0};
                               f(i, d);
                               s0 += d[0];
                               s1 += d[1];
                             }
                             part[t].v[0] = s0;
                             part[t].v[1] = s1;
#pragma omp barrier
                             if (t == 0) {
                               sum[0] += total(part.data(), nt, 0);
                               sum[1] += total(part.data(), nt, 1);
                             }
                           }
                         });
  return sum;
}

// cg_step on a grid of more than one piece: the passes of the fused step one after another, each in
// pieces with polls between, so that a cancel or a pause lands within tens of milliseconds of one
// (one fused step over 16384² is seconds). The true residual takes a pass of its own here.
CgStepResult step_in_pieces(const Stencil5& A, const CgStep& s) {
  const Rows& R = rows();
  const int64_t n = A.n;
  const double sc = 1.0 / (A.h * A.h);
  auto above = [&](const double* v, int64_t i) { return i > 0 ? v + (i - 1) * n : A.zero; };
  auto below = [&](const double* v, int64_t i) { return i + 1 < n ? v + (i + 1) * n : A.zero; };
  const double* p = s.p;
  if (s.z != nullptr) {
    const int T = tts::detail::threads();
    tts::detail::in_pieces(n, tts::detail::rows_per_piece(n, tts::detail::kPiecePoints), [&](int64_t lo, int64_t hi) {
#pragma omp parallel for num_threads(T) schedule(static)
      for (int64_t i = lo; i < hi; ++i) R.direction(s.z + i * n, s.beta, s.p + i * n, n, s.p_out + i * n);
    });
    p = s.p_out;
  }
  const std::array<double, 2> pqpp =
      sum_rows(n, n, [&](int64_t i, double* d) { R.matvec_dot(above(p, i), p + i * n, below(p, i), sc, n, d); });
  CgStepResult res;
  res.pq = pqpp[0];
  res.pp = pqpp[1];
  res.rz = s.rz < 0 ? res.pp : s.rz;
  if (!(res.pq > 0)) return res;
  res.alpha = res.rz / res.pq;
  res.rr = sum_rows(n, n, [&](int64_t i, double* d) {
    const int64_t o = i * n;
    d[0] = R.update(res.alpha, above(p, i), p + o, below(p, i), sc, s.x + o, s.x_zero, s.r_in + o,
                    s.b != nullptr ? nullptr : s.r_out + o, n);
  })[0];
  if (s.b != nullptr) {
    res.true_rr = sum_rows(n, n, [&](int64_t i, double* d) {
      d[0] = R.residual(above(s.x, i), s.x + i * n, below(s.x, i), s.b + i * n, sc, n, nullptr);
    })[0];
  }
  return res;
}

}  // namespace

CgStepResult cg_step(const Stencil5& A, const CgStep& s) {
  if (tts::detail::rows_per_piece(A.n, tts::detail::kPiecePoints) < A.n) return step_in_pieces(A, s);
  const Rows& R = rows();
  const int64_t n = A.n;
  const double sc = 1.0 / (A.h * A.h);
  const int T = tts::detail::threads();
  std::vector<Partial> part(3 * static_cast<std::size_t>(T));
  CgStepResult res;
  auto above = [&](const double* v, int64_t i) { return i > 0 ? v + (i - 1) * n : A.zero; };
  auto below = [&](const double* v, int64_t i) { return i + 1 < n ? v + (i + 1) * n : A.zero; };
#pragma omp parallel num_threads(T) if (n * n >= kParallel)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t lo, hi;
    share(n, t, nt, lo, hi);
    const double* p = s.p;
    if (s.z != nullptr) {
      for (int64_t i = lo; i < hi; ++i) R.direction(s.z + i * n, s.beta, s.p + i * n, n, s.p_out + i * n);
      p = s.p_out;
#pragma omp barrier
    }
    double pq = 0, pp = 0;
    for (int64_t i = lo; i < hi; ++i) {
      double d[2];
      R.matvec_dot(above(p, i), p + i * n, below(p, i), sc, n, d);
      pq += d[0];
      pp += d[1];
    }
    part[t].v[0] = pq;
    part[t].v[1] = pp;
#pragma omp barrier
    pq = total(part.data(), nt, 0);
    pp = total(part.data(), nt, 1);
    const double rz = s.rz < 0 ? pp : s.rz;
    double rr = 0, trr = -1;
    if (pq > 0) {
      const double alpha = rz / pq;
      double r2 = 0, t2 = 0;
      // The true residual of row i - 1 once row i of x is updated; the first and last rows of
      // this thread's share need the neighbours' rows, so they wait for the barrier.
      auto true_row = [&](int64_t i) {
        const double* xi = s.x + i * n;
        return R.residual(above(s.x, i), xi, below(s.x, i), s.b + i * n, sc, n, nullptr);
      };
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t o = i * n;
        r2 += R.update(alpha, above(p, i), p + o, below(p, i), sc, s.x + o, s.x_zero, s.r_in + o,
                       s.b != nullptr ? nullptr : s.r_out + o, n);
        if (s.b != nullptr && i - 1 > lo) t2 += true_row(i - 1);
      }
      part[T + t].v[0] = r2;
#pragma omp barrier
      if (s.b != nullptr) {
        if (hi > lo) t2 += true_row(lo);
        if (hi - 1 > lo) t2 += true_row(hi - 1);
        part[2 * T + t].v[0] = t2;
#pragma omp barrier
        trr = total(part.data() + 2 * T, nt, 0);
      }
      rr = total(part.data() + T, nt, 0);
    }
    if (t == 0) res = CgStepResult{pq, pp, rz, rr, trr, pq > 0 ? rz / pq : 0.0};
  }
  return res;
}

namespace {

// r = b - sc A' x with A' the 5-point stencil in units of 1/h²; returns ||r||².
double scaled_residual(const Stencil5& A, double sc, const double* b, const double* x, double* r) {
  const Rows& R = rows();
  const int64_t n = A.n;
  return sum_rows(n, n, [&](int64_t i, double* d) {
    const double* xi = x + i * n;
    d[0] = R.residual(i > 0 ? xi - n : A.zero, xi, i + 1 < n ? xi + n : A.zero, b + i * n, sc, n,
                      r != nullptr ? r + i * n : nullptr);
  })[0];
}

}  // namespace

double residual(const Stencil5& A, const double* b, const double* x, double* r) {
  return scaled_residual(A, 1.0 / (A.h * A.h), b, x, r);
}

void finish_step(const Stencil5& A, const CgStep& s, const CgStepResult& res) {
  (void)scaled_residual(A, res.alpha * (1.0 / (A.h * A.h)), s.r_in, s.z != nullptr ? s.p_out : s.p, s.r_out);
}

void dot2(const double* r, const double* z, int64_t N, double* rz, double* rr) {
  const Rows& R = rows();
  const int T = tts::detail::threads();
  std::vector<Partial> part(static_cast<std::size_t>(T));
  *rz = 0;
  *rr = 0;
  tts::detail::in_pieces(N, tts::detail::kPiecePoints, [&](int64_t first, int64_t end) {
#pragma omp parallel num_threads(T) if (end - first >= kParallel)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t lo, hi;
      share(end - first, t, nt, lo, hi);
      R.dot2(r + first + lo, z + first + lo, hi - lo, part[t].v);
#pragma omp barrier
      if (t == 0) {
        *rz += total(part.data(), nt, 0);
        *rr += total(part.data(), nt, 1);
      }
    }
  });
}

}  // namespace tts::sim::detail
