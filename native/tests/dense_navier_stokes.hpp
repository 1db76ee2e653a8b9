// The dense reference for navier_stokes_2d: the same discretisation on plain arrays. Central
// differences for (u·D)u, the 5-point Laplacian, SSP-RK3, and after every stage the exact discrete
// projection u - D p with D·D p = D·u, done in Fourier space (D_x is diagonal there, with symbol
// i sin(k h) / h) by a radix-2 FFT. Differences from the QTT solver then measure its truncation, not
// a difference of schemes. Arrays are [x, y] in C order, x_i = i h on [0, 2π).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace dense_ns {

using cplx = std::complex<double>;

// In-place radix-2 FFT of n = 2^k values spaced `stride` apart (sign -1 forward, +1 inverse, unscaled).
inline void fft(cplx* a, int64_t n, int64_t stride, int sign, std::vector<cplx>& buf) {
  buf.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) buf[i] = a[i * stride];
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(buf[i], buf[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const double ang = sign * 2 * 3.14159265358979323846 / static_cast<double>(len);
    const cplx wl(std::cos(ang), std::sin(ang));
    for (int64_t i = 0; i < n; i += len) {
      cplx w(1, 0);
      for (int64_t k = 0; k < len / 2; ++k) {
        const cplx x = buf[i + k], y = buf[i + k + len / 2] * w;
        buf[i + k] = x + y;
        buf[i + k + len / 2] = x - y;
        w *= wl;
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) a[i * stride] = buf[i];
}

inline void fft2(std::vector<cplx>& a, int64_t n, int sign) {
  std::vector<cplx> buf;
  for (int64_t i = 0; i < n; ++i) fft(&a[i * n], n, 1, sign, buf);
  for (int64_t j = 0; j < n; ++j) fft(&a[j], n, n, sign, buf);
}

struct Solver {
  int64_t n;
  double h, nu;
  std::vector<double> sx;  // sin(k h) / h per wave index

  Solver(int64_t side, double reynolds) : n(side), h(2 * 3.14159265358979323846 / side), nu(1 / reynolds) {
    sx.resize(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) sx[k] = std::sin(2 * 3.14159265358979323846 * k / n) / h;
  }
  int64_t at(int64_t i, int64_t j) const { return ((i + n) % n) * n + (j + n) % n; }

  double dx(const std::vector<double>& f, int64_t i, int64_t j) const {
    return (f[at(i + 1, j)] - f[at(i - 1, j)]) / (2 * h);
  }
  double dy(const std::vector<double>& f, int64_t i, int64_t j) const {
    return (f[at(i, j + 1)] - f[at(i, j - 1)]) / (2 * h);
  }
  double lap(const std::vector<double>& f, int64_t i, int64_t j) const {
    return (f[at(i + 1, j)] + f[at(i - 1, j)] + f[at(i, j + 1)] + f[at(i, j - 1)] - 4 * f[at(i, j)]) / (h * h);
  }

  // (u, v) minus D p with D·D p = D·u: in Fourier space, û -= s_x (s·û) / |s|² where s ≠ 0.
  void project(std::vector<double>& u, std::vector<double>& v) const {
    std::vector<cplx> z(static_cast<std::size_t>(n * n));
    for (int64_t t = 0; t < n * n; ++t) z[t] = cplx(u[t], v[t]);
    fft2(z, n, -1);
    std::vector<cplx> out(z.size());
    for (int64_t a = 0; a < n; ++a) {
      for (int64_t b = 0; b < n; ++b) {
        const cplx zk = z[a * n + b], zm = std::conj(z[((n - a) % n) * n + (n - b) % n]);
        cplx uh = 0.5 * (zk + zm), vh = cplx(0, -0.5) * (zk - zm);
        const double s2 = sx[a] * sx[a] + sx[b] * sx[b];
        if (s2 > 1e-12) {
          const cplx sig = sx[a] * uh + sx[b] * vh;
          uh -= sx[a] * sig / s2;
          vh -= sx[b] * sig / s2;
        }
        out[a * n + b] = uh + cplx(0, 1) * vh;
      }
    }
    fft2(out, n, +1);
    const double scale = 1.0 / static_cast<double>(n * n);
    for (int64_t t = 0; t < n * n; ++t) {
      u[t] = out[t].real() * scale;
      v[t] = out[t].imag() * scale;
    }
  }

  // out = a0 w0 + a1 w1 + b F(w1-or-w0) for both components, F = -(u·D)u + ν Δ_h u.
  void stage(double a0, const std::vector<double>& u0, const std::vector<double>& v0, double a1,
             const std::vector<double>& u1, const std::vector<double>& v1, double b, std::vector<double>& uo,
             std::vector<double>& vo) const {
    uo.assign(u0.size(), 0.0);
    vo.assign(v0.size(), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t t = i * n + j;
        const double fu = -(u1[t] * dx(u1, i, j) + v1[t] * dy(u1, i, j)) + nu * lap(u1, i, j);
        const double fv = -(u1[t] * dx(v1, i, j) + v1[t] * dy(v1, i, j)) + nu * lap(v1, i, j);
        uo[t] = a0 * u0[t] + a1 * u1[t] + b * fu;
        vo[t] = a0 * v0[t] + a1 * v1[t] + b * fv;
      }
    }
    project(uo, vo);
  }

  // One SSP-RK3 step, projected after each stage (as the QTT solver).
  void step(std::vector<double>& u, std::vector<double>& v, double dt) const {
    std::vector<double> u1, v1, u2, v2;
    stage(0.0, u, v, 1.0, u, v, dt, u1, v1);
    stage(0.75, u, v, 0.25, u1, v1, 0.25 * dt, u2, v2);
    stage(1.0 / 3, u, v, 2.0 / 3, u2, v2, 2.0 / 3 * dt, u1, v1);
    u.swap(u1);
    v.swap(v1);
  }

  std::vector<double> vorticity(const std::vector<double>& u, const std::vector<double>& v) const {
    std::vector<double> w(u.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) w[i * n + j] = dx(v, i, j) - dy(u, i, j);
    return w;
  }
};

}  // namespace dense_ns
