// Rows of interface fluxes, compiled three times: for the baseline x86-64 ISA, for AVX2 and for
// AVX-512 (chosen at run time), without fused multiply-adds in any, so that every build of the loop
// rounds the same way: the x and y sweeps of a diagonal-symmetric state stay bitwise mirrored
// whichever lanes, or scalar remainder, an interface falls in (measured: with FMA they do not).
//
// This file is compiled with -fno-math-errno (sqrt without the errno branch), -fno-trapping-math
// (arithmetic evaluated for every lane, then selected) and -ffp-contract=off (AVX-512F carries FMA
// instructions of its own); CMakeLists.txt and binding.gyp set them. Without the first two the loops
// do not vectorise at all; with them a step is about 3x faster on AVX2 and 5x on AVX-512. `GCC ivdep`
// rather than `omp simd`: under `omp simd` the locals of the body become per-lane arrays, whose
// stores GCC 12 cannot vectorise.
#include "solvers/euler/euler_flux.hpp"

namespace tts::sim::euler::kernel {

namespace {

template <bool kCharacteristic>
inline __attribute__((always_inline)) void states_row(const Line& line, double* const L[4], double* const R[4]) {
  const int n = line.normal;
  const double* c0 = line.cell[0];
  const double* cn = line.cell[n];
  const double* ct = line.cell[3 - n];
  const double* c3 = line.cell[3];
  double *l0 = L[0], *ln = L[n], *lt = L[3 - n], *l3 = L[3];
  double *r0 = R[0], *rn = R[n], *rt = R[3 - n], *r3 = R[3];
  const int64_t s = line.stride;
#pragma GCC ivdep
  for (int64_t m = 0; m < line.count; ++m) {
    double q[4][6];
    for (int k = 0; k < 6; ++k) {
      const int64_t o = m + (k - 2) * s;
      q[0][k] = c0[o];
      q[1][k] = cn[o];
      q[2][k] = ct[o];
      q[3][k] = c3[o];
    }
    double a[4], b[4];
    safe_face_states<kCharacteristic>(q, a, b);
    l0[m] = a[0];
    ln[m] = a[1];
    lt[m] = a[2];
    l3[m] = a[3];
    r0[m] = b[0];
    rn[m] = b[1];
    rt[m] = b[2];
    r3[m] = b[3];
  }
}

inline __attribute__((always_inline)) void hllc_row(const double* const L[4], const double* const R[4], int n,
                                                    int64_t count, double* const F[4]) {
  const double *l0 = L[0], *ln = L[n], *lt = L[3 - n], *l3 = L[3];
  const double *r0 = R[0], *rn = R[n], *rt = R[3 - n], *r3 = R[3];
  double *f0 = F[0], *fn = F[n], *ft = F[3 - n], *f3 = F[3];
#pragma GCC ivdep
  for (int64_t m = 0; m < count; ++m) {
    double f[4];
    hllc(l0[m], ln[m], lt[m], l3[m], r0[m], rn[m], rt[m], r3[m], f);
    f0[m] = f[0];
    fn[m] = f[1];
    ft[m] = f[2];
    f3[m] = f[3];
  }
}

// The same loops compiled for one ISA each.
#define TTS_EULER_ROWS(suffix, attr)                                                                \
  attr void states_##suffix(const Line& line, bool ch, double* const L[4], double* const R[4]) {    \
    if (ch) {                                                                                       \
      states_row<true>(line, L, R);                                                                 \
    } else {                                                                                        \
      states_row<false>(line, L, R);                                                                \
    }                                                                                               \
  }                                                                                                 \
  attr void hllc_##suffix(const double* const L[4], const double* const R[4], int n, int64_t count, \
                          double* const F[4]) {                                                     \
    hllc_row(L, R, n, count, F);                                                                    \
  }

TTS_EULER_ROWS(base, )
#if defined(__x86_64__) && defined(__GNUC__)
TTS_EULER_ROWS(avx2, __attribute__((target("avx2"))))
TTS_EULER_ROWS(avx512, __attribute__((target("avx512f,avx512dq,avx512vl,prefer-vector-width=512"))))
enum class Isa { Base, Avx2, Avx512 };
Isa isa() {
  static const Isa best =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")
          ? Isa::Avx512
      : __builtin_cpu_supports("avx2") ? Isa::Avx2
                                       : Isa::Base;
  return best;
}
#else
enum class Isa { Base, Avx2, Avx512 };
Isa isa() { return Isa::Base; }
#define states_avx2 states_base
#define hllc_avx2 hllc_base
#define states_avx512 states_base
#define hllc_avx512 hllc_base
#endif
#undef TTS_EULER_ROWS

}  // namespace

void line_states(const Line& line, bool characteristic, double* const L[4], double* const R[4]) {
  switch (isa()) {
    case Isa::Avx512: return states_avx512(line, characteristic, L, R);
    case Isa::Avx2: return states_avx2(line, characteristic, L, R);
    case Isa::Base: return states_base(line, characteristic, L, R);
  }
}

void line_hllc(const double* const L[4], const double* const R[4], int normal, int64_t count, double* const F[4]) {
  switch (isa()) {
    case Isa::Avx512: return hllc_avx512(L, R, normal, count, F);
    case Isa::Avx2: return hllc_avx2(L, R, normal, count, F);
    case Isa::Base: return hllc_base(L, R, normal, count, F);
  }
}

}  // namespace tts::sim::euler::kernel
