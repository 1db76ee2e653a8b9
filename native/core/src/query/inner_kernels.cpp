// Train-against-train inner products: the loop kernels and the one dispatch (see inner_kernels.hpp).
#include "ttstore/internal/inner_kernels.hpp"

#include "ttstore/internal/tt_interfaces.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TTS_X86 1
#endif

#include <algorithm>
#include <array>
#include <cstring>

namespace tts::detail {
namespace {

// Plain loops for any ranks: T = M C_i (ra0 x rb1), then N += Q_i^T T (ra1 x rb1).
template <class TC>
double inner_loops(const PreparedTrain& q, const TC* c, const Operand& co) {
  const Operand& qo = *q.src;
  const auto& modes = qo.modes();
  const auto& qr = qo.ranks();
  const auto& cr = co.ranks();
  const int64_t R = std::max(qo.max_rank(), co.max_rank());
  thread_local std::vector<double> M, N, T;
  M.assign(static_cast<std::size_t>(R * R), 0.0);
  N.resize(static_cast<std::size_t>(R * R));
  T.resize(static_cast<std::size_t>(R * R));
  M[0] = 1.0;
  int64_t ra0 = 1, rb0 = 1;
  for (int k = 0; k < qo.d(); ++k) {
    const int64_t n = modes[k], ra1 = qr[k + 1], rb1 = cr[k + 1];
    const double* A = q.cores.data() + qo.offsets()[k];
    const TC* B = c + co.offsets()[k];
    std::fill(N.begin(), N.begin() + ra1 * rb1, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t x = 0; x < ra0; ++x) {
        double* t = T.data() + x * rb1;
        std::fill(t, t + rb1, 0.0);
        for (int64_t z = 0; z < rb0; ++z) {
          const double m = M[x * rb0 + z];
          const TC* b = B + (z * n + i) * rb1;
          for (int64_t y = 0; y < rb1; ++y) t[y] += m * static_cast<double>(b[y]);
        }
      }
      for (int64_t x = 0; x < ra0; ++x) {
        const double* a = A + (x * n + i) * ra1;
        const double* t = T.data() + x * rb1;
        for (int64_t w = 0; w < ra1; ++w) {
          const double av = a[w];
          double* nr = N.data() + w * rb1;
          for (int64_t y = 0; y < rb1; ++y) nr[y] += av * t[y];
        }
      }
    }
    std::swap(M, N);
    ra0 = ra1;
    rb0 = rb1;
  }
  return M[0];
}

#ifdef TTS_X86

// One row of 8 candidate values (lanes >= rb1 zero) as float64.
__attribute__((target("avx512f,avx512vl"))) inline __m512d row512(const float* p, __mmask8 m) {
  return _mm512_maskz_cvtps_pd(m, _mm256_maskz_loadu_ps(m, p));
}
__attribute__((target("avx512f,avx512vl"))) inline __m512d row512(const double* p, __mmask8 m) {
  return _mm512_maskz_loadu_pd(m, p);
}

// Ranks <= 8, AVX-512. The state X holds the partial contraction after site k as rows over one
// side's index (the "row side", the train of smaller rank) and 8 lanes over the other's (the "lane
// side"), in memory (rows of 8 doubles). A site is two small products, each with fixed-size loops
// over the row side's next rank (RS1, a template parameter, so every accumulator is a register):
//   U_i[s1] = sum_s0 S_i[s0][s1] X[s0]          (lanes: the lane side's index at site k)
//   X'[s1]  = sum_i sum_l0 U_i[s1][l0] L_i[l0]   (L_i[l0]: a row of the lane side's core)
// that is 2 n RS1 (rS0 + rL0) multiply-adds of 8 lanes; lanes past the lane side's rank stay zero.
// Each step waits on the one before (a chain of short dependent sums), so C = 2 candidates of the
// same ranks go through together: their chains interleave and the FMA units stay busy.
#define TTS_AVX512 __attribute__((target("avx512f,avx512vl")))

TTS_AVX512 inline __m512d bcast512(const double* p) { return _mm512_set1_pd(*p); }
TTS_AVX512 inline __m512d bcast512(const float* p) { return _mm512_set1_pd(static_cast<double>(*p)); }

// One side of C contractions at one site. S's element (s0, i, s1) sits at S[(s0 n + i) s_stride + s1],
// L's row (l0, i) at L + (l0 n + i) l_stride.
template <class TS, class TL, int C>
struct SiteArgs {
  double* X[C];
  const TS* S[C];
  const TL* L[C];
  int64_t s_stride, rs0, l_stride, rl0, n;
  __mmask8 lmask;
};

// Mode indices i .. i + P - 1 of a site for every candidate: N = sum_i U_i^T L_i, started from zero
// (first) or from Ns, written to Xs (last) or Ns.
template <int RS1, int P, int C, class TS, class TL>
TTS_AVX512 inline void site_modes(const SiteArgs<TS, TL, C>& a, int64_t i, bool first, bool last,
                                  double (&Ns)[C][RS1][8]) {
  alignas(64) double Us[C][P][RS1][8];
  for (int c = 0; c < C; ++c) {
    __m512d U[P][RS1];
    for (int p = 0; p < P; ++p)
      for (int s = 0; s < RS1; ++s) U[p][s] = _mm512_setzero_pd();
    for (int64_t s0 = 0; s0 < a.rs0; ++s0) {
      const __m512d x = _mm512_load_pd(a.X[c] + s0 * 8);
      for (int p = 0; p < P; ++p) {
        const TS* srow = a.S[c] + (s0 * a.n + i + p) * a.s_stride;
        for (int s = 0; s < RS1; ++s) U[p][s] = _mm512_fmadd_pd(bcast512(srow + s), x, U[p][s]);
      }
    }
    for (int p = 0; p < P; ++p)
      for (int s = 0; s < RS1; ++s) _mm512_store_pd(Us[c][p][s], U[p][s]);
  }
  // Few rows: the sums over i split in two for more independent chains; chosen as for a pair
  // whatever C is, so a candidate's sums run in the same order alone or paired (a top-K scored in
  // chunks gives the bits of one pass).
  constexpr int NP = (P == 2 && 2 * RS1 <= 8) ? 2 : 1;
  __m512d N[C][NP][RS1];
  for (int c = 0; c < C; ++c)
    for (int s = 0; s < RS1; ++s) {
      N[c][0][s] = first ? _mm512_setzero_pd() : _mm512_load_pd(Ns[c][s]);
      if (NP == 2) N[c][NP - 1][s] = _mm512_setzero_pd();
    }
  for (int64_t l0 = 0; l0 < a.rl0; ++l0) {
    for (int p = 0; p < P; ++p) {
      for (int c = 0; c < C; ++c) {
        const __m512d row = row512(a.L[c] + (l0 * a.n + i + p) * a.l_stride, a.lmask);
        for (int s = 0; s < RS1; ++s) {
          N[c][p % NP][s] = _mm512_fmadd_pd(_mm512_set1_pd(Us[c][p][s][l0]), row, N[c][p % NP][s]);
        }
      }
    }
  }
  for (int c = 0; c < C; ++c)
    for (int s = 0; s < RS1; ++s) {
      const __m512d v = NP == 2 ? _mm512_add_pd(N[c][0][s], N[c][NP - 1][s]) : N[c][0][s];
      _mm512_store_pd(last ? a.X[c] + s * 8 : Ns[c][s], v);
    }
}

// One site: every X (rs0 rows) becomes X' (RS1 rows) in place.
template <int RS1, int C, class TS, class TL>
TTS_AVX512 void site_step(const SiteArgs<TS, TL, C>& a) {
  alignas(64) double Ns[C][RS1][8];
  int64_t i = 0;
  for (; i + 1 < a.n; i += 2) site_modes<RS1, 2, C>(a, i, i == 0, i + 2 == a.n, Ns);
  if (i < a.n) site_modes<RS1, 1, C>(a, i, i == 0, true, Ns);
}

template <int C, class TS, class TL>
using SiteStep = void (*)(const SiteArgs<TS, TL, C>&);

template <int C, class TS, class TL>
constexpr SiteStep<C, TS, TL> kSiteSteps[8] = {
    site_step<1, C, TS, TL>, site_step<2, C, TS, TL>, site_step<3, C, TS, TL>, site_step<4, C, TS, TL>,
    site_step<5, C, TS, TL>, site_step<6, C, TS, TL>, site_step<7, C, TS, TL>, site_step<8, C, TS, TL>};

// <q, c_j> for C candidates of equal ranks (so the same steps fit all). The query is the row side
// unless the candidates' ranks are smaller (then fewer rows, fuller lanes).
template <int C, class TC>
TTS_AVX512 void inner_pad8_avx512(const PreparedTrain& q, const TC* const* c, const Operand& co, double* out) {
  const Operand& qo = *q.src;
  const auto& modes = qo.modes();
  const auto& qr = qo.ranks();
  const auto& cr = co.ranks();
  const bool q_rows = qo.max_rank() <= co.max_rank();
  alignas(64) double Xs[C][64];  // site 0 reads row 0 only (r_0 = 1)
  for (int j = 0; j < C; ++j) _mm512_store_pd(Xs[j], _mm512_set_pd(0, 0, 0, 0, 0, 0, 0, 1.0));
  for (int k = 0; k < qo.d(); ++k) {
    const int64_t n = modes[k], rq0 = qr[k], rq1 = qr[k + 1], rc0 = cr[k], rc1 = cr[k + 1];
    const double* A = q.padded.data() + q.padded_offsets[k];
    const int64_t off = co.offsets()[k];
    if (q_rows) {
      SiteArgs<double, TC, C> a{{}, {}, {}, 8, rq0, rc1, rc0, n, static_cast<__mmask8>((1u << rc1) - 1u)};
      for (int j = 0; j < C; ++j) {
        a.X[j] = Xs[j];
        a.S[j] = A;
        a.L[j] = c[j] + off;
      }
      kSiteSteps<C, double, TC>[rq1 - 1](a);
    } else {
      SiteArgs<TC, double, C> a{{}, {}, {}, rc1, rc0, 8, rq0, n, static_cast<__mmask8>(0xff)};
      for (int j = 0; j < C; ++j) {
        a.X[j] = Xs[j];
        a.S[j] = c[j] + off;
        a.L[j] = A;
      }
      kSiteSteps<C, TC, double>[rc1 - 1](a);
    }
  }
  for (int j = 0; j < C; ++j) out[j] = Xs[j][0];
}

// The same with AVX2 + FMA. A row of X is up to 8 lanes held as one or two quads of 4 (W0 quads
// for the lane side's rank at the site's left bond, W1 at its right bond), so ranks <= 4 cost one
// quad, not a padded 8. Per mode index a site is the same two products as above:
//   U[s1] = sum_s0 S_i[s0][s1] X[s0]  (RS1 accumulators per quad, stored: the next product
//                                       broadcasts their lanes)
//   N[s1] += sum_l0 U[s1][l0] L_i[l0]  (RS1 accumulators per quad of the result)
// with C candidates of equal ranks interleaved, so that there are enough independent sums to
// keep both FMA pipes busy when RS1 is small (16 registers: quads run one after the other when
// C RS1 would not fit). Lanes at or past the lane side's rank hold whatever the loads bring:
// a lane of N depends only on the same lane of L, and U's lanes past the rank are never read.
#define TTS_AVX2 __attribute__((target("avx2,fma")))

TTS_AVX2 inline __m256d bcast256(const double* p) { return _mm256_broadcast_sd(p); }
TTS_AVX2 inline __m256d bcast256(const float* p) { return _mm256_set1_pd(static_cast<double>(*p)); }
// Lanes below the lane side's rank, per quad of a row: 64-bit masks for float64 rows, 32-bit for float32.
struct QuadMasks {
  __m256i m64[2];
  __m128i m32[2];
};
TTS_AVX2 inline __m256d quad(const double* p, const QuadMasks& m, int w) { return _mm256_maskload_pd(p, m.m64[w]); }
TTS_AVX2 inline __m256d quad(const float* p, const QuadMasks& m, int w) {
  return _mm256_cvtps_pd(_mm_maskload_ps(p, m.m32[w]));
}

template <class TS, class TL, int C>
struct SiteArgs2 {
  double* X[C];  // rows of 8 lanes
  const TS* S[C];
  const TL* L[C];
  int64_t s_stride, rs0, l_stride, rl0, n;
  QuadMasks lmask;
};

// Mode indices i .. i + P - 1 of a site: U for each (candidate, left quad, index) into Us, then N
// (from zero, or from Ns) += the P indices' products for each (candidate, right quad), written to
// X (last) or Ns. Accumulators are grouped so that a pass holds at most 12 registers.
template <int RS1, int W0, int W1, int P, int C, class TS, class TL>
TTS_AVX2 inline void site_modes_avx2(const SiteArgs2<TS, TL, C>& a, int64_t i, bool first, bool last,
                                     double (&Ns)[C][RS1][8]) {
  constexpr int kU = C * W0 * P;  // (c, w, p) combinations of U
  constexpr int kUg = RS1 * kU <= 12 ? kU : (12 / RS1 > 0 ? 12 / RS1 : 1);
  alignas(32) double Us[C][P][RS1][8];
  for (int g0 = 0; g0 < kU; g0 += kUg) {
    constexpr int G = kUg;
    __m256d U[G][RS1];
    for (int g = 0; g < G; ++g)
      for (int s = 0; s < RS1; ++s) U[g][s] = _mm256_setzero_pd();
    for (int64_t s0 = 0; s0 < a.rs0; ++s0) {
      for (int g = 0; g < G && g0 + g < kU; ++g) {
        const int cw = (g0 + g) / P, p = (g0 + g) % P, c = cw / W0, w = cw % W0;
        const __m256d x = _mm256_load_pd(a.X[c] + s0 * 8 + 4 * w);
        const TS* srow = a.S[c] + (s0 * a.n + i + p) * a.s_stride;
        for (int s = 0; s < RS1; ++s) U[g][s] = _mm256_fmadd_pd(bcast256(srow + s), x, U[g][s]);
      }
    }
    for (int g = 0; g < G && g0 + g < kU; ++g) {
      const int cw = (g0 + g) / P, p = (g0 + g) % P, c = cw / W0, w = cw % W0;
      for (int s = 0; s < RS1; ++s) _mm256_store_pd(Us[c][p][s] + 4 * w, U[g][s]);
    }
  }
  constexpr int kN = C * W1;  // (c, w) combinations of N
  constexpr int kNg = RS1 * kN <= 12 ? kN : (12 / RS1 > 0 ? 12 / RS1 : 1);
  // Few accumulators: the sum over the P indices split in two, for more independent chains; chosen
  // as for a pair whatever C is (as in site_modes), so a candidate's bits do not depend on pairing.
  constexpr int kPairNg = 2 * RS1 * W1 <= 12 ? 2 * W1 : (12 / RS1 > 0 ? 12 / RS1 : 1);
  constexpr int NP = (P == 2 && 2 * RS1 * kPairNg <= 12) ? 2 : 1;
  for (int g0 = 0; g0 < kN; g0 += kNg) {
    constexpr int G = kNg;
    __m256d N[NP][G][RS1];
    for (int q = 0; q < NP; ++q)
      for (int g = 0; g < G; ++g)
        for (int s = 0; s < RS1; ++s) N[q][g][s] = _mm256_setzero_pd();
    if (!first) {
      for (int g = 0; g < G && g0 + g < kN; ++g) {
        const int c = (g0 + g) / W1, w = (g0 + g) % W1;
        for (int s = 0; s < RS1; ++s) N[0][g][s] = _mm256_load_pd(Ns[c][s] + 4 * w);
      }
    }
    for (int64_t l0 = 0; l0 < a.rl0; ++l0) {
      for (int p = 0; p < P; ++p) {
        for (int g = 0; g < G && g0 + g < kN; ++g) {
          const int c = (g0 + g) / W1, w = (g0 + g) % W1;
          const __m256d row = quad(a.L[c] + (l0 * a.n + i + p) * a.l_stride + 4 * w, a.lmask, w);
          for (int s = 0; s < RS1; ++s) {
            N[p % NP][g][s] = _mm256_fmadd_pd(_mm256_broadcast_sd(&Us[c][p][s][l0]), row, N[p % NP][g][s]);
          }
        }
      }
    }
    for (int g = 0; g < G && g0 + g < kN; ++g) {
      const int c = (g0 + g) / W1, w = (g0 + g) % W1;
      for (int s = 0; s < RS1; ++s) {
        const __m256d v = NP == 2 ? _mm256_add_pd(N[0][g][s], N[NP - 1][g][s]) : N[0][g][s];
        _mm256_store_pd((last ? a.X[c] + s * 8 : Ns[c][s]) + 4 * w, v);
      }
    }
  }
}

// One site: every X (rs0 rows) becomes X' (RS1 rows) in place.
template <int RS1, int W0, int W1, int C, class TS, class TL>
TTS_AVX2 void site_step_avx2(const SiteArgs2<TS, TL, C>& a) {
  alignas(32) double Ns[C][RS1][8];
  int64_t i = 0;
  for (; i + 1 < a.n; i += 2) site_modes_avx2<RS1, W0, W1, 2, C>(a, i, i == 0, i + 2 == a.n, Ns);
  if (i < a.n) site_modes_avx2<RS1, W0, W1, 1, C>(a, i, i == 0, true, Ns);
}

template <int C, class TS, class TL>
using SiteStep2 = void (*)(const SiteArgs2<TS, TL, C>&);

template <int C, class TS, class TL, int RS1>
constexpr std::array<SiteStep2<C, TS, TL>, 4> site_steps_avx2_of() {
  return {site_step_avx2<RS1, 1, 1, C, TS, TL>, site_step_avx2<RS1, 1, 2, C, TS, TL>,
          site_step_avx2<RS1, 2, 1, C, TS, TL>, site_step_avx2<RS1, 2, 2, C, TS, TL>};
}

// [RS1 - 1][(W0 - 1) * 2 + (W1 - 1)]
template <int C, class TS, class TL>
constexpr std::array<std::array<SiteStep2<C, TS, TL>, 4>, 8> kSiteStepsAvx2 = {
    site_steps_avx2_of<C, TS, TL, 1>(), site_steps_avx2_of<C, TS, TL, 2>(), site_steps_avx2_of<C, TS, TL, 3>(),
    site_steps_avx2_of<C, TS, TL, 4>(), site_steps_avx2_of<C, TS, TL, 5>(), site_steps_avx2_of<C, TS, TL, 6>(),
    site_steps_avx2_of<C, TS, TL, 7>(), site_steps_avx2_of<C, TS, TL, 8>()};

TTS_AVX2 inline QuadMasks lane_masks(int64_t r) {
  QuadMasks m;
  for (int w = 0; w < 2; ++w) {
    m.m64[w] = _mm256_cmpgt_epi64(_mm256_set1_epi64x(r - 4 * w), _mm256_setr_epi64x(0, 1, 2, 3));
    m.m32[w] = _mm_cmpgt_epi32(_mm_set1_epi32(static_cast<int>(r - 4 * w)), _mm_setr_epi32(0, 1, 2, 3));
  }
  return m;
}

// <q, c_j> for C candidates of equal ranks, as inner_pad8_avx512.
template <int C, class TC>
TTS_AVX2 void inner_pad8_avx2(const PreparedTrain& q, const TC* const* c, const Operand& co, double* out) {
  const Operand& qo = *q.src;
  const auto& modes = qo.modes();
  const auto& qr = qo.ranks();
  const auto& cr = co.ranks();
  const bool q_rows = qo.max_rank() <= co.max_rank();
  alignas(32) double Xs[C][64];
  for (int j = 0; j < C; ++j) {
    std::fill(Xs[j], Xs[j] + 64, 0.0);
    Xs[j][0] = 1.0;
  }
  for (int k = 0; k < qo.d(); ++k) {
    const int64_t n = modes[k], rq0 = qr[k], rq1 = qr[k + 1], rc0 = cr[k], rc1 = cr[k + 1];
    const double* A = q.padded.data() + q.padded_offsets[k];
    const int64_t off = co.offsets()[k];
    if (q_rows) {
      SiteArgs2<double, TC, C> a{{}, {}, {}, 8, rq0, rc1, rc0, n, lane_masks(rc1)};
      for (int j = 0; j < C; ++j) {
        a.X[j] = Xs[j];
        a.S[j] = A;
        a.L[j] = c[j] + off;
      }
      kSiteStepsAvx2<C, double, TC>[rq1 - 1][(rc0 > 4) * 2 + (rc1 > 4)](a);
    } else {
      SiteArgs2<TC, double, C> a{{}, {}, {}, rc1, rc0, 8, rq0, n, lane_masks(rq1)};
      for (int j = 0; j < C; ++j) {
        a.X[j] = Xs[j];
        a.S[j] = c[j] + off;
        a.L[j] = A;
      }
      kSiteStepsAvx2<C, TC, double>[rc1 - 1][(rq0 > 4) * 2 + (rq1 > 4)](a);
    }
  }
  for (int j = 0; j < C; ++j) out[j] = Xs[j][0];
}

#endif  // TTS_X86

template <class TC>
double inner_pad8(const PreparedTrain& q, const TC* c, const Operand& co, Pad8Kernel k) {
#ifdef TTS_X86
  if (k == Pad8Kernel::Avx512) {
    double out;
    inner_pad8_avx512<1>(q, &c, co, &out);
    return out;
  }
  if (k == Pad8Kernel::Avx2) {
    double out;
    inner_pad8_avx2<1>(q, &c, co, &out);
    return out;
  }
#endif
  return inner_loops(q, c, co);
}

}  // namespace

PreparedTrain prepare_train(const Operand& q) {
  if (!q.is_train()) throw InvalidArgument("prepare_train: the query is not a train");
  PreparedTrain p;
  p.src = &q;
  const int64_t total = q.offsets().back();
  p.cores.resize(static_cast<std::size_t>(total));
  if (q.f32()) {
    std::copy(q.f32_data(), q.f32_data() + total, p.cores.begin());
  } else {
    std::copy(q.f64_data(), q.f64_data() + total, p.cores.begin());
  }
  p.pad8 = q.max_rank() <= 8;
  if (p.pad8) {
    const auto& r = q.ranks();
    p.padded_offsets.resize(q.modes().size() + 1, 0);
    for (int k = 0; k < q.d(); ++k) p.padded_offsets[k + 1] = p.padded_offsets[k] + r[k] * q.modes()[k] * 8;
    p.padded.assign(static_cast<std::size_t>(p.padded_offsets.back()), 0.0);
    for (int k = 0; k < q.d(); ++k) {
      const int64_t rows = r[k] * q.modes()[k], r1 = r[k + 1];
      const double* src = p.cores.data() + q.offsets()[k];
      double* dst = p.padded.data() + p.padded_offsets[k];
      for (int64_t row = 0; row < rows; ++row) std::copy(src + row * r1, src + row * r1 + r1, dst + row * 8);
    }
  }
  return p;
}

Pad8Kernel best_pad8_kernel() {
  static const Pad8Kernel best = [] {
    if (pad8_kernel_supported(Pad8Kernel::Avx512)) return Pad8Kernel::Avx512;
    if (pad8_kernel_supported(Pad8Kernel::Avx2)) return Pad8Kernel::Avx2;
    return Pad8Kernel::Loops;
  }();
  return best;
}

bool pad8_kernel_supported(Pad8Kernel k) {
#ifdef TTS_X86
  if (k == Pad8Kernel::Avx512) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  if (k == Pad8Kernel::Avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return k == Pad8Kernel::Loops;
}

const char* pad8_kernel_name(Pad8Kernel k) {
  switch (k) {
    case Pad8Kernel::Avx512: return "avx512";
    case Pad8Kernel::Avx2: return "avx2";
    case Pad8Kernel::Loops: break;
  }
  return "loops";
}

double inner_trains_with(const PreparedTrain& q, const Operand& c, Pad8Kernel k) {
  if (!pad8_kernel_supported(k)) k = Pad8Kernel::Loops;
  const bool small = q.pad8 && c.max_rank() <= 8;
  if (c.f32()) return small ? inner_pad8(q, c.f32_data(), c, k) : inner_loops(q, c.f32_data(), c);
  return small ? inner_pad8(q, c.f64_data(), c, k) : inner_loops(q, c.f64_data(), c);
}

double inner_trains(const PreparedTrain& q, const Operand& c) { return inner_trains_with(q, c, best_pad8_kernel()); }

double contract(const Operand& a, const Operand& b) {
  if (std::max(a.max_rank(), b.max_rank()) <= kPairLoopMaxRank) return inner_trains(prepare_train(a), b);
  const TensorTrain ta = a.to_train();
  return &a == &b ? contract_blas(ta, ta) : contract_blas(ta, b.to_train());
}

double contract(const TensorTrain& a, const TensorTrain& b) {
  if (std::max(a.max_rank(), b.max_rank()) > kPairLoopMaxRank) return contract_blas(a, b);
  const Operand oa = operand_of(a);
  return &a == &b ? contract(oa, oa) : contract(oa, operand_of(b));
}

void inner_trains_2(const PreparedTrain& q, const Operand& a, const Operand& b, double* out) {
  inner_trains_2_with(q, a, b, out, best_pad8_kernel());
}

void inner_trains_2_with(const PreparedTrain& q, const Operand& a, const Operand& b, double* out, Pad8Kernel k) {
  if (!pad8_kernel_supported(k)) k = Pad8Kernel::Loops;
#ifdef TTS_X86
  if (q.pad8 && a.max_rank() <= 8 && k != Pad8Kernel::Loops && a.f32() == b.f32() && a.ranks() == b.ranks()) {
    if (a.f32()) {
      const float* c[2] = {a.f32_data(), b.f32_data()};
      k == Pad8Kernel::Avx512 ? inner_pad8_avx512<2>(q, c, a, out) : inner_pad8_avx2<2>(q, c, a, out);
    } else {
      const double* c[2] = {a.f64_data(), b.f64_data()};
      k == Pad8Kernel::Avx512 ? inner_pad8_avx512<2>(q, c, a, out) : inner_pad8_avx2<2>(q, c, a, out);
    }
    return;
  }
#endif
  out[0] = inner_trains_with(q, a, k);
  out[1] = inner_trains_with(q, b, k);
}

void prefetch_cores(const Operand& c) {
  __builtin_prefetch(c.modes().data(), 0, 3);
  __builtin_prefetch(c.ranks().data(), 0, 3);
  __builtin_prefetch(c.offsets().data(), 0, 3);
  const char* p = c.f32() ? reinterpret_cast<const char*>(c.f32_data()) : reinterpret_cast<const char*>(c.f64_data());
  const int64_t bytes = std::min<int64_t>(c.elements() * (c.f32() ? 4 : 8), 32 * 1024);
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 3);
}

}  // namespace tts::detail
