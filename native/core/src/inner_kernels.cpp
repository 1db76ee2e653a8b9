// Train-against-train inner products for query batches (see inner_kernels.hpp).
#include "inner_kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TTS_X86 1
#endif

#include <algorithm>
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

// Ranks <= 8: M's rows are one register each; columns >= rb (and rows >= ra) stay exactly zero.
// R (2, 4 or 8) bounds the query's ranks, so the row loops run R times, not 8.
template <int R, class TC>
__attribute__((target("avx512f,avx512vl"))) double inner_pad8_avx512(const PreparedTrain& q, const TC* c,
                                                                        const Operand& co) {
  const Operand& qo = *q.src;
  const auto& modes = qo.modes();
  const auto& qr = qo.ranks();
  const auto& cr = co.ranks();
  alignas(64) double Ms[64] = {1.0};
  int64_t ra0 = 1, rb0 = 1;
  for (int k = 0; k < qo.d(); ++k) {
    const int64_t n = modes[k], rb1 = cr[k + 1];
    const double* A = q.padded.data() + q.padded_offsets[k];
    const TC* B = c + co.offsets()[k];
    const __mmask8 mask = static_cast<__mmask8>((1u << rb1) - 1u);
    __m512d N[R];
    for (int w = 0; w < R; ++w) N[w] = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; ++i) {
      __m512d T[R];
      for (int x = 0; x < R; ++x) T[x] = _mm512_setzero_pd();
      for (int64_t z = 0; z < rb0; ++z) {
        const __m512d b = row512(B + (z * n + i) * rb1, mask);
        for (int x = 0; x < R; ++x) T[x] = _mm512_fmadd_pd(_mm512_set1_pd(Ms[x * 8 + z]), b, T[x]);
      }
      for (int64_t x = 0; x < ra0; ++x) {
        const double* a = A + (x * n + i) * 8;
        for (int w = 0; w < R; ++w) N[w] = _mm512_fmadd_pd(_mm512_set1_pd(a[w]), T[x], N[w]);
      }
    }
    for (int w = 0; w < R; ++w) _mm512_store_pd(Ms + w * 8, N[w]);
    ra0 = qr[k + 1];
    rb0 = rb1;
  }
  return Ms[0];
}

// The same contraction transposed, for a candidate of lower rank than the query: M^T's rows (one
// per candidate index, RC of them) are registers over the query index, so the lanes are filled by the
// larger side and the loops run over the smaller one: per mode index rb0 RC + ra0 RC multiply-adds
// instead of RQ rb0 + ra0 RQ.
template <int RC, class TC>
__attribute__((target("avx512f,avx512vl"))) double inner_pad8_avx512_t(const PreparedTrain& q, const TC* c,
                                                                          const Operand& co) {
  const Operand& qo = *q.src;
  const auto& modes = qo.modes();
  const auto& qr = qo.ranks();
  const auto& cr = co.ranks();
  alignas(64) double b[8] = {0};   // one candidate row as float64
  alignas(64) double Ts[RC * 8];   // T^T, spilled for scalar broadcasts
  __m512d MT[RC];
  MT[0] = _mm512_set_pd(0, 0, 0, 0, 0, 0, 0, 1.0);
  for (int y = 1; y < RC; ++y) MT[y] = _mm512_setzero_pd();
  int64_t ra0 = 1, rb0 = 1;
  for (int k = 0; k < qo.d(); ++k) {
    const int64_t n = modes[k], rb1 = cr[k + 1];
    const double* A = q.padded.data() + q.padded_offsets[k];
    const TC* B = c + co.offsets()[k];
    const __mmask8 mask = static_cast<__mmask8>((1u << rb1) - 1u);
    __m512d NT[RC];
    for (int y = 0; y < RC; ++y) NT[y] = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; ++i) {
      __m512d T[RC];
      for (int y = 0; y < RC; ++y) T[y] = _mm512_setzero_pd();
      for (int64_t z = 0; z < rb0; ++z) {
        _mm512_store_pd(b, row512(B + (z * n + i) * rb1, mask));
        for (int y = 0; y < RC; ++y) T[y] = _mm512_fmadd_pd(_mm512_set1_pd(b[y]), MT[z], T[y]);
      }
      for (int y = 0; y < RC; ++y) _mm512_store_pd(Ts + y * 8, T[y]);
      for (int64_t x = 0; x < ra0; ++x) {
        const __m512d a = _mm512_loadu_pd(A + (x * n + i) * 8);
        for (int y = 0; y < RC; ++y) NT[y] = _mm512_fmadd_pd(_mm512_set1_pd(Ts[y * 8 + x]), a, NT[y]);
      }
    }
    for (int y = 0; y < RC; ++y) MT[y] = NT[y];
    ra0 = qr[k + 1];
    rb0 = rb1;
  }
  alignas(64) double out[8];
  _mm512_store_pd(out, MT[0]);
  return out[0];
}

// The same with AVX2 + FMA: each row is two 4-lane halves, and the halves are independent (a column
// of the result depends only on the same column of the candidate), so they run one after the other
// and the second is skipped while rb1 <= 4.
__attribute__((target("avx2,fma"))) inline __m256d half_row(const float* p, __m256i m8, int h) {
  const __m256 v = _mm256_maskload_ps(p, m8);
  return _mm256_cvtps_pd(h == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
}
__attribute__((target("avx2,fma"))) inline __m256d half_row(const double* p, __m256i m4, int h) {
  return _mm256_maskload_pd(p + 4 * h, m4);
}

template <int R, class TC>
__attribute__((target("avx2,fma"))) double inner_pad8_avx2(const PreparedTrain& q, const TC* c,
                                                            const Operand& co) {
  const Operand& qo = *q.src;
  const auto& modes = qo.modes();
  const auto& qr = qo.ranks();
  const auto& cr = co.ranks();
  alignas(32) double Ms[64] = {1.0};
  alignas(32) double Ns[64];
  int64_t ra0 = 1, rb0 = 1;
  const __m256i lanes8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int k = 0; k < qo.d(); ++k) {
    const int64_t n = modes[k], rb1 = cr[k + 1];
    const double* A = q.padded.data() + q.padded_offsets[k];
    const TC* B = c + co.offsets()[k];
    const int halves = rb1 > 4 ? 2 : 1;
    std::fill(Ns, Ns + 64, 0.0);
    for (int h = 0; h < halves; ++h) {
      // float32 rows: one 8-lane mask; float64 rows: a 4-lane mask for this half.
      __m256i m;
      if constexpr (sizeof(TC) == 4) {
        m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rb1)), lanes8);
      } else {
        m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(rb1 - 4 * h), _mm256_setr_epi64x(0, 1, 2, 3));
      }
      __m256d N[R];
      for (int w = 0; w < R; ++w) N[w] = _mm256_setzero_pd();
      for (int64_t i = 0; i < n; ++i) {
        __m256d T[R];
        for (int x = 0; x < R; ++x) T[x] = _mm256_setzero_pd();
        for (int64_t z = 0; z < rb0; ++z) {
          const __m256d b = half_row(B + (z * n + i) * rb1, m, h);
          for (int x = 0; x < R; ++x) T[x] = _mm256_fmadd_pd(_mm256_broadcast_sd(Ms + x * 8 + z), b, T[x]);
        }
        for (int64_t x = 0; x < ra0; ++x) {
          const double* a = A + (x * n + i) * 8;
          for (int w = 0; w < R; ++w) N[w] = _mm256_fmadd_pd(_mm256_broadcast_sd(a + w), T[x], N[w]);
        }
      }
      for (int w = 0; w < R; ++w) _mm256_store_pd(Ns + w * 8 + 4 * h, N[w]);
    }
    std::memcpy(Ms, Ns, sizeof Ms);
    ra0 = qr[k + 1];
    rb0 = rb1;
  }
  return Ms[0];
}

#endif  // TTS_X86

#ifdef TTS_X86
template <int R, class TC>
double inner_pad8_simd(const PreparedTrain& q, const TC* c, const Operand& co, Pad8Kernel k) {
  return k == Pad8Kernel::Avx512 ? inner_pad8_avx512<R>(q, c, co) : inner_pad8_avx2<R>(q, c, co);
}
#endif

template <class TC>
double inner_pad8(const PreparedTrain& q, const TC* c, const Operand& co, Pad8Kernel k) {
#ifdef TTS_X86
  if (k == Pad8Kernel::Avx512 && co.max_rank() < q.src->max_rank()) {
    const int64_t rc = co.max_rank();
    if (rc <= 2) return inner_pad8_avx512_t<2>(q, c, co);
    if (rc <= 4) return inner_pad8_avx512_t<4>(q, c, co);
    return inner_pad8_avx512_t<8>(q, c, co);
  }
  if (k != Pad8Kernel::Loops) {
    const int64_t rq = q.src->max_rank();
    if (rq <= 2) return inner_pad8_simd<2>(q, c, co, k);
    if (rq <= 4) return inner_pad8_simd<4>(q, c, co, k);
    return inner_pad8_simd<8>(q, c, co, k);
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

double inner_trains(const PreparedTrain& q, const Operand& c) {
  return inner_trains_with(q, c, best_pad8_kernel());
}

void prefetch_cores(const Operand& c) {
  __builtin_prefetch(c.ranks().data(), 0, 3);
  __builtin_prefetch(c.offsets().data(), 0, 3);
  const char* p = c.f32() ? reinterpret_cast<const char*>(c.f32_data()) : reinterpret_cast<const char*>(c.f64_data());
  const int64_t bytes = std::min<int64_t>(c.elements() * (c.f32() ? 4 : 8), 32 * 1024);
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 3);
}

}  // namespace tts::detail
