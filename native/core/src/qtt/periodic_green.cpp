// The kernel of the pseudo-inverse of the periodic discrete Laplacian, built in QTT without a dense
// grid: 1/λ = ∫ exp(s - e^s λ) ds over the real line, and the trapezoidal rule in s converges
// geometrically (the integrand is analytic in the strip |Im s| < π/2), so with step η the relative
// error is about 2 exp(-π²/η) uniformly in λ once the range covers [λ_min, λ_max]. Each node is
// exp(-t L) with t = e^s, and exp(-t L) = ⊗_axes exp(-t L_1): its kernel is a product of 1-D heat
// kernels, a separable field. The sum over the nodes is rounded as it goes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ttstore/internal/poll_point.hpp"
#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

namespace {

constexpr double kPi = 3.14159265358979323846;

}  // namespace

Mps periodic_green(const Grid& g, double h, int stride, double tol) {
  if (stride != 1 && stride != 2) throw InvalidArgument("periodic_green: stride must be 1 or 2");
  if (!(h > 0)) throw InvalidArgument("periodic_green: h must be positive");
  if (!(tol > 0 && tol < 1)) throw InvalidArgument("periodic_green: tol must be in (0, 1)");
  const int64_t n = g.side();
  const double sh = stride * h;
  // 1-D eigenvalues of -L_1 (the 3-point second difference on spacing stride h) for mode k.
  std::vector<double> mu(static_cast<std::size_t>(n));
  double mu_max = 0, mu_min = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double sn = std::sin(kPi * static_cast<double>(stride * k) / static_cast<double>(n));
    mu[k] = 4 * sn * sn / (sh * sh);
    mu_max = std::max(mu_max, mu[k]);
  }
  for (double m : mu) {
    if (m > 1e-12 * mu_max && (mu_min == 0 || m < mu_min)) mu_min = m;
  }
  if (mu_min == 0) throw InvalidArgument("periodic_green: the grid is too small");
  const double eps = 0.1 * tol;
  const double eta = kPi * kPi / std::log(2 / eps);
  const double s_lo = std::log(eps / (g.dims * mu_max)), s_hi = std::log(std::log(1 / eps) / mu_min);

  std::vector<double> cos_table(static_cast<std::size_t>(n));
  for (int64_t q = 0; q < n; ++q) cos_table[q] = std::cos(2 * kPi * static_cast<double>(q) / static_cast<double>(n));
  // K_t(m) = (1/n) Σ_k exp(-t μ_k) cos(2π k m / n), symmetric in m and in k.
  auto heat_kernel = [&](double t) {
    std::vector<double> e(static_cast<std::size_t>(n / 2 + 1)), K(static_cast<std::size_t>(n));
    for (int64_t k = 0; k <= n / 2; ++k) e[k] = std::exp(-t * mu[k]);
    for (int64_t m = 0; m <= n / 2; ++m) {
      double v = e[0] + ((m % 2) ? -e[n / 2] : e[n / 2]);
      for (int64_t k = 1; k < n / 2; ++k) v += 2 * e[k] * cos_table[(k * m) % n];
      K[m] = v / static_cast<double>(n);
      if (m > 0) K[n - m] = K[m];
    }
    return K;
  };

  SvdOptions o;
  o.tol = 0.1 * tol;
  // The null space (the modes with λ = 0: constants, and for stride 2 the parity classes) gets
  // weight Σ w from every node; it is taken out once, as W times the separable null-space kernel
  // (1/n) Σ_{μ_k = 0} e^{ikm} on each axis. The largest t come first, where that part dominates,
  // so the running sum stays of the size of the answer.
  std::vector<double> null_1d(static_cast<std::size_t>(n));
  for (int64_t m = 0; m < n; ++m) {
    null_1d[m] = (stride == 1 ? 1.0 : (m % 2 ? 0.0 : 2.0)) / static_cast<double>(n);
  }
  const int nodes = static_cast<int>(std::ceil((s_hi - s_lo) / eta));
  double weight_sum = 0;
  for (int q = 0; q <= nodes; ++q) weight_sum += eta * std::exp(s_hi - q * eta);
  Mps acc = separable(g, std::vector<std::vector<double>>(static_cast<std::size_t>(g.dims), null_1d), 1e-15);
  acc = combine({-weight_sum}, {&acc}, o);
  for (int q = 0; q <= nodes; ++q) {
    detail::poll_point();
    const double t = std::exp(s_hi - q * eta);
    const std::vector<double> K = heat_kernel(t);
    const Mps term = separable(g, std::vector<std::vector<double>>(static_cast<std::size_t>(g.dims), K), 0.1 * o.tol);
    acc = combine({1.0, eta * t}, {&acc, &term}, o);
  }
  return acc;
}

}  // namespace tts::qtt
