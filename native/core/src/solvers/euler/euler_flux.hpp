// Private: the numerical flux of euler_2d at one cell interface, written once for both directions in
// the interface's own frame: (ρ, m_n, m_t, E) with n the normal and t the tangential momentum. Given
// the six cells around the interface (three each side), WENO5 reconstructs the two face states and
// HLLC turns them into a flux. Everything is straight-line arithmetic (selects, no branches) so that
// a loop over a row of interfaces vectorises, and so that the x and y sweeps of a state symmetric
// about the diagonal produce bitwise mirrored fluxes.
#pragma once

#include <cmath>
#include <cstdint>

namespace tts::sim::euler::kernel {

inline constexpr double kG = 1.4;
inline constexpr double kG1 = kG - 1.0;

#define TTS_INLINE inline __attribute__((always_inline))

// max and min as selects: std::fmax and std::fmin are library calls on the baseline ISA (their NaN
// rules have no instruction there), and a call in the loop body stops it from vectorising.
TTS_INLINE double max_of(double a, double b) { return a > b ? a : b; }
TTS_INLINE double min_of(double a, double b) { return a < b ? a : b; }

// WENO5 value at the right face of cell c from cells a..e (Jiang & Shu 1996 smoothness indicators)
// with WENO-Z weights (Borges, Carmona, Costa & Don 2008, p = 1): fifth order also at smooth
// extrema, where the classic weights drop to third. α_k = d_k (1 + τ5 / (β_k + ε)), here scaled by
// Π_j (β_j + ε) so that one division remains.
TTS_INLINE double weno5(double a, double b, double c, double d, double e) {
  constexpr double eps = 1e-40;
  const double s0 = a - 2 * b + c, t0 = a - 4 * b + 3 * c;
  const double s1 = b - 2 * c + d, t1 = b - d;
  const double s2 = c - 2 * d + e, t2 = 3 * c - 4 * d + e;
  const double b0 = (13.0 / 12.0) * s0 * s0 + 0.25 * t0 * t0 + eps;
  const double b1 = (13.0 / 12.0) * s1 * s1 + 0.25 * t1 * t1 + eps;
  const double b2 = (13.0 / 12.0) * s2 * s2 + 0.25 * t2 * t2 + eps;
  const double tau = std::fabs(b0 - b2);
  const double a0 = 0.1 * (b0 + tau) * b1 * b2;
  const double a1 = 0.6 * (b1 + tau) * b0 * b2;
  const double a2 = 0.3 * (b2 + tau) * b0 * b1;
  const double q0 = 2 * a - 7 * b + 11 * c;
  const double q1 = -b + 5 * c + 2 * d;
  const double q2 = 2 * c + 5 * d - e;
  return (a0 * q0 + a1 * q1 + a2 * q2) / (6.0 * (a0 + a1 + a2));
}

TTS_INLINE double pressure(double r, double mn, double mt, double E) {
  return kG1 * (E - 0.5 * (mn * mn + mt * mt) / r);
}

// HLLC (Toro, Spruce & Speares 1994) with Einfeldt's wave speed bounds from the Roe average of
// the two face states. Inputs conserved, output the flux of (ρ, m_n, m_t, E).
TTS_INLINE void hllc(double rl, double nl, double tl, double El, double rr, double nr, double tr, double Er,
                     double F[4]) {
  const double ul = nl / rl, vl = tl / rl, ur = nr / rr, vr = tr / rr;
  const double pl = pressure(rl, nl, tl, El), pr = pressure(rr, nr, tr, Er);
  const double cl = std::sqrt(kG * pl / rl), cr = std::sqrt(kG * pr / rr);
  const double sl_ = std::sqrt(rl), sr_ = std::sqrt(rr), w = 1.0 / (sl_ + sr_);
  const double u = (sl_ * ul + sr_ * ur) * w, v = (sl_ * vl + sr_ * vr) * w;
  const double H = (sl_ * (El + pl) / rl + sr_ * (Er + pr) / rr) * w;
  const double c = std::sqrt(max_of(kG1 * (H - 0.5 * (u * u + v * v)), 1e-300));
  const double SL = min_of(ul - cl, u - c), SR = max_of(ur + cr, u + c);
  const double ml = rl * (SL - ul), mr = rr * (SR - ur);
  const double Sm = (pr - pl + nl * (SL - ul) - nr * (SR - ur)) / (ml - mr);
  // Star flux of the side the contact leaves behind: F*_K = F_K + S_K (U*_K - U_K).
  const bool left = Sm >= 0;
  const double r = left ? rl : rr, un = left ? ul : ur, vt = left ? vl : vr, p = left ? pl : pr;
  const double E = left ? El : Er, S = left ? SL : SR, m = left ? ml : mr;
  const double k = m / (S - Sm);
  const double us0 = k, us1 = k * Sm, us2 = k * vt, us3 = k * (E / r + (Sm - un) * (Sm + p / m));
  const double f0 = r * un, f1 = r * un * un + p, f2 = r * un * vt, f3 = un * (E + p);
  const double s0 = f0 + S * (us0 - r), s1 = f1 + S * (us1 - r * un), s2 = f2 + S * (us2 - r * vt),
               s3 = f3 + S * (us3 - E);
  // Supersonic either way: the upwind side's own flux.
  const bool all_left = SL >= 0, all_right = SR <= 0;
  const double fl0 = nl, fl1 = nl * ul + pl, fl2 = nl * vl, fl3 = ul * (El + pl);
  const double fr0 = nr, fr1 = nr * ur + pr, fr2 = nr * vr, fr3 = ur * (Er + pr);
  F[0] = all_left ? fl0 : all_right ? fr0 : s0;
  F[1] = all_left ? fl1 : all_right ? fr1 : s1;
  F[2] = all_left ? fl2 : all_right ? fr2 : s2;
  F[3] = all_left ? fl3 : all_right ? fr3 : s3;
}

// Face states from the six cells q[component][k] (k = 0..5, the interface between k = 2 and 3).
// Characteristic: project onto the left eigenvectors of the Roe average of cells 2 and 3,
// reconstruct each wave amplitude, map back with the right eigenvectors.
template <bool kCharacteristic>
TTS_INLINE void face_states(const double q[4][6], double L[4], double R[4]) {
  if constexpr (!kCharacteristic) {
    for (int c = 0; c < 4; ++c) {
      L[c] = weno5(q[c][0], q[c][1], q[c][2], q[c][3], q[c][4]);
      R[c] = weno5(q[c][5], q[c][4], q[c][3], q[c][2], q[c][1]);
    }
  } else {
    const double r2 = q[0][2], r3 = q[0][3];
    const double s2 = std::sqrt(r2), s3 = std::sqrt(r3), w = 1.0 / (s2 + s3);
    const double un = (q[1][2] / s2 + q[1][3] / s3) * w;
    const double ut = (q[2][2] / s2 + q[2][3] / s3) * w;
    const double p2 = pressure(r2, q[1][2], q[2][2], q[3][2]), p3 = pressure(r3, q[1][3], q[2][3], q[3][3]);
    const double H = ((q[3][2] + p2) / s2 + (q[3][3] + p3) / s3) * w;
    const double q2 = un * un + ut * ut;
    const double c = std::sqrt(max_of(kG1 * (H - 0.5 * q2), 1e-300)), ic = 1.0 / c;
    const double b1 = kG1 * ic * ic, b2 = 0.5 * b1 * q2;
    // Left eigenvectors (rows); row 2 (shear) is [-ut, 0, 1, 0].
    const double l00 = 0.5 * (b2 + un * ic), l01 = -0.5 * (b1 * un + ic), l02 = -0.5 * b1 * ut, l03 = 0.5 * b1;
    const double l10 = 1.0 - b2, l11 = b1 * un, l12 = b1 * ut, l13 = -b1;
    const double l30 = 0.5 * (b2 - un * ic), l31 = -0.5 * (b1 * un - ic);
    double w0[6], w1[6], w2[6], w3[6];
    for (int k = 0; k < 6; ++k) {
      const double r = q[0][k], mn = q[1][k], mt = q[2][k], E = q[3][k];
      w0[k] = l00 * r + l01 * mn + l02 * mt + l03 * E;
      w1[k] = l10 * r + l11 * mn + l12 * mt + l13 * E;
      w2[k] = mt - ut * r;
      w3[k] = l30 * r + l31 * mn + l02 * mt + l03 * E;
    }
    double a[4], b[4];
    a[0] = weno5(w0[0], w0[1], w0[2], w0[3], w0[4]);
    b[0] = weno5(w0[5], w0[4], w0[3], w0[2], w0[1]);
    a[1] = weno5(w1[0], w1[1], w1[2], w1[3], w1[4]);
    b[1] = weno5(w1[5], w1[4], w1[3], w1[2], w1[1]);
    a[2] = weno5(w2[0], w2[1], w2[2], w2[3], w2[4]);
    b[2] = weno5(w2[5], w2[4], w2[3], w2[2], w2[1]);
    a[3] = weno5(w3[0], w3[1], w3[2], w3[3], w3[4]);
    b[3] = weno5(w3[5], w3[4], w3[3], w3[2], w3[1]);
    // Right eigenvectors (columns): [1, un-c, ut, H-un c], [1, un, ut, q²/2], [0, 0, 1, ut], [1, un+c, ut, H+un c].
    const double h0 = H - un * c, h3 = H + un * c, k1 = 0.5 * q2;
    auto back = [&](const double* x, double* U) {
      const double r = x[0] + x[1] + x[3];
      U[0] = r;
      U[1] = un * r + c * (x[3] - x[0]);
      U[2] = ut * r + x[2];
      U[3] = h0 * x[0] + k1 * x[1] + ut * x[2] + h3 * x[3];
    };
    back(a, L);
    back(b, R);
  }
}

// Face states at one interface, falling back to the first-order states (cells 2 and 3) when a
// reconstructed state has a non-positive density or pressure.
template <bool kCharacteristic>
TTS_INLINE void safe_face_states(const double q[4][6], double L[4], double R[4]) {
  face_states<kCharacteristic>(q, L, R);
  const bool ok = L[0] > 0 && R[0] > 0 && pressure(L[0], L[1], L[2], L[3]) > 0 && pressure(R[0], R[1], R[2], R[3]) > 0;
  for (int c = 0; c < 4; ++c) {
    L[c] = ok ? L[c] : q[c][2];
    R[c] = ok ? R[c] : q[c][3];
  }
}

#undef TTS_INLINE

// A row of `count` interfaces: interface m's stencil cell k of component c sits at
// cell[c][m + (k - 2) * stride] (cell[c] points at the cell before interface 0 in the normal
// direction); `normal` is 1 when the normal momentum is component 1 (x), 2 when it is 2 (y).
// Arrays of the results are in the grid's components (ρ, ρu, ρv, E), one entry per interface.
struct Line {
  const double* cell[4];
  int64_t stride;
  int64_t count;
  int normal;
};
// WENO5 face states (face averages: the reconstruction is one-dimensional) of a row of interfaces.
void line_states(const Line& line, bool characteristic, double* const L[4], double* const R[4]);
// HLLC fluxes of `count` pairs of face states.
void line_hllc(const double* const L[4], const double* const R[4], int normal, int64_t count, double* const F[4]);

}  // namespace tts::sim::euler::kernel
