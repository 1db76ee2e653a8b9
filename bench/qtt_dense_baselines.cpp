// Dense baselines for bench:qtt (compiled by bench/qtt.ts; FFTW 3 from Debian's libfftw3-dev):
//   ns <n> <steps>        pseudo-spectral 2-D Navier-Stokes (vorticity form, 2/3 dealiasing,
//                         SSP-RK3), Taylor-Green on [0, 2π)², Re 1000; prints seconds per step
//   cg <n> <nu_dt>        one implicit diffusion step (I - ν dt Δ_h) u = u0 on the periodic n³ grid
//                         by conjugate gradients to relative residual 1e-8; prints seconds and
//                         iterations
// Output: one JSON object per run on stdout.
#include <fftw3.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static int ns(int n, int steps) {
  const double pi = 3.14159265358979323846, re = 1000, h = 2 * pi / n;
  const double dt = 0.5 * std::fmin(1.7 * h, 2.5 * h * h * re / 8);
  const int nc = n / 2 + 1;
  fftw_plan_with_nthreads(omp_get_max_threads());
  double* r = fftw_alloc_real(static_cast<size_t>(n) * n);
  fftw_complex* c = fftw_alloc_complex(static_cast<size_t>(n) * nc);
  fftw_plan fwd = fftw_plan_dft_r2c_2d(n, n, r, c, FFTW_MEASURE);
  fftw_plan inv = fftw_plan_dft_c2r_2d(n, n, c, r, FFTW_MEASURE);
  std::vector<double> kx(n), w0(static_cast<size_t>(n) * nc * 2), w(w0.size()), rhs(w0.size()), tmp(w0.size());
  for (int i = 0; i < n; ++i) kx[i] = i <= n / 2 ? i : i - n;
  // ω = 2 sin x sin y (Taylor-Green u = sin x cos y, v = -cos x sin y)
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) r[i * n + j] = 2 * std::sin(i * h) * std::sin(j * h);
  fftw_execute(fwd);
  std::memcpy(w.data(), c, w.size() * sizeof(double));
  std::vector<double> u(static_cast<size_t>(n) * n), v(u.size()), wx(u.size()), wy(u.size());
  auto field = [&](const std::vector<double>& hat, int which, std::vector<double>& out) {
    // which: 0 u = ψ_y, 1 v = -ψ_x, 2 ω_x, 3 ω_y; ψ = ω / |k|²
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < nc; ++j) {
        const size_t q = (static_cast<size_t>(i) * nc + j) * 2;
        const double k2 = kx[i] * kx[i] + static_cast<double>(j) * j;
        const double a = hat[q], b = hat[q + 1];
        double f = 0, kk = 0;
        if (which == 0) f = k2 > 0 ? 1 / k2 : 0, kk = j;
        if (which == 1) f = k2 > 0 ? -1 / k2 : 0, kk = kx[i];
        if (which == 2) f = 1, kk = kx[i];
        if (which == 3) f = 1, kk = j;
        const bool keep = std::fabs(kx[i]) < n / 3.0 && j < n / 3.0;  // 2/3 rule
        c[q / 2][0] = keep ? -kk * f * b / (static_cast<double>(n) * n) : 0;
        c[q / 2][1] = keep ? kk * f * a / (static_cast<double>(n) * n) : 0;
      }
    fftw_execute(inv);
    std::memcpy(out.data(), r, out.size() * sizeof(double));
  };
  auto tendency = [&](const std::vector<double>& hat, std::vector<double>& out) {
    field(hat, 0, u);
    field(hat, 1, v);
    field(hat, 2, wx);
    field(hat, 3, wy);
    for (size_t p = 0; p < u.size(); ++p) r[p] = -(u[p] * wx[p] + v[p] * wy[p]);
    fftw_execute(fwd);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < nc; ++j) {
        const size_t q = (static_cast<size_t>(i) * nc + j);
        const double k2 = kx[i] * kx[i] + static_cast<double>(j) * j;
        out[2 * q] = c[q][0] - k2 / re * hat[2 * q];
        out[2 * q + 1] = c[q][1] - k2 / re * hat[2 * q + 1];
      }
  };
  const double t0 = now();
  for (int s = 0; s < steps; ++s) {
    w0 = w;
    tendency(w, rhs);
    for (size_t p = 0; p < w.size(); ++p) w[p] = w0[p] + dt * rhs[p];
    tendency(w, rhs);
    for (size_t p = 0; p < w.size(); ++p) w[p] = 0.75 * w0[p] + 0.25 * (w[p] + dt * rhs[p]);
    tendency(w, rhs);
    for (size_t p = 0; p < w.size(); ++p) w[p] = w0[p] / 3 + 2.0 / 3 * (w[p] + dt * rhs[p]);
  }
  const double per = (now() - t0) / steps;
  std::printf("{\"kind\":\"ns\",\"n\":%d,\"steps\":%d,\"seconds_per_step\":%.6f,\"threads\":%d}\n", n, steps, per,
              omp_get_max_threads());
  fftw_destroy_plan(fwd);
  fftw_destroy_plan(inv);
  fftw_free(r);
  fftw_free(c);
  return 0;
}

static int cg(int n, double nu_dt) {
  const double h = 1.0 / n, a = nu_dt / (h * h), pi = 3.14159265358979323846;
  const size_t N = static_cast<size_t>(n) * n * n;
  std::vector<double> b(N), x(N, 0.0), r(N), p(N), q(N);
#pragma omp parallel for
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        b[(static_cast<size_t>(i) * n + j) * n + k] = std::exp(-((i * h - 0.5) * (i * h - 0.5) + (j * h - 0.5) * (j * h - 0.5) + (k * h - 0.5) * (k * h - 0.5)) / 0.02) + std::sin(2 * pi * i * h);
  auto apply = [&](const std::vector<double>& in, std::vector<double>& out) {
#pragma omp parallel for
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k) {
          const size_t o = (static_cast<size_t>(i) * n + j) * n + k;
          const int ip = (i + 1) % n, im = (i + n - 1) % n, jp = (j + 1) % n, jm = (j + n - 1) % n;
          const int kp = (k + 1) % n, km = (k + n - 1) % n;
          const double s = in[(static_cast<size_t>(ip) * n + j) * n + k] + in[(static_cast<size_t>(im) * n + j) * n + k] +
                           in[(static_cast<size_t>(i) * n + jp) * n + k] + in[(static_cast<size_t>(i) * n + jm) * n + k] +
                           in[(static_cast<size_t>(i) * n + j) * n + kp] + in[(static_cast<size_t>(i) * n + j) * n + km];
          out[o] = (1 + 6 * a) * in[o] - a * s;
        }
  };
  auto dot = [&](const std::vector<double>& u, const std::vector<double>& v) {
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (size_t i = 0; i < N; ++i) s += u[i] * v[i];
    return s;
  };
  const double t0 = now();
  r = b;
  p = r;
  double rr = dot(r, r);
  const double bb = rr;
  int it = 0;
  while (rr > 1e-16 * bb && it < 10000) {
    apply(p, q);
    const double alpha = rr / dot(p, q);
#pragma omp parallel for
    for (size_t i = 0; i < N; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr1 = dot(r, r);
#pragma omp parallel for
    for (size_t i = 0; i < N; ++i) p[i] = r[i] + rr1 / rr * p[i];
    rr = rr1;
    ++it;
  }
  std::printf("{\"kind\":\"cg\",\"n\":%d,\"seconds\":%.6f,\"iterations\":%d,\"threads\":%d}\n", n, now() - t0, it,
              omp_get_max_threads());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  fftw_init_threads();
  if (std::strcmp(argv[1], "ns") == 0) return ns(std::atoi(argv[2]), std::atoi(argv[3]));
  if (std::strcmp(argv[1], "cg") == 0) return cg(std::atoi(argv[2]), std::atof(argv[3]));
  return 2;
}
