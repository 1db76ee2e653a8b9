// The left and right interfaces of a tensor train (tt_interfaces.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/tt_interfaces.hpp"

namespace tts::detail {

int choose_split(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks) {
  const int d = static_cast<int>(modes.size());
  double N = 1;
  for (int64_t n : modes) N *= static_cast<double>(n);
  int best = 0;
  double best_cost = std::numeric_limits<double>::infinity(), nl = 1;
  for (int p = 0; p <= d; ++p) {
    const double rp = static_cast<double>(ranks[p]);
    const double nr = N / nl;
    // Interface memory, with a mild preference for balanced halves (short rows waste the GEMM).
    const double cost = (nl + nr) * rp + std::fabs(std::log2(nl) - std::log2(nr));
    if (cost < best_cost) {
      best_cost = cost;
      best = p;
    }
    if (p < d) nl *= static_cast<double>(modes[p]);
  }
  return best;
}

int contraction_start(const std::vector<int64_t>& modes, const std::vector<int64_t>& ra,
                      const std::vector<int64_t>& rb) {
  const int d = static_cast<int>(modes.size());
  double P = 1;
  for (int k = 1; k <= d; ++k) {
    P *= static_cast<double>(modes[k - 1]);
    if (P >= static_cast<double>(std::min(ra[k], rb[k]))) return k;
  }
  return d;
}

double contraction_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ra,
                        const std::vector<int64_t>& rb) {
  const int d = static_cast<int>(modes.size());
  int k0 = contraction_start(modes, ra, rb);
  auto f = [](int64_t x) { return static_cast<double>(x); };
  double w = 0, P = 1;
  if (k0 > 1) {
    for (int k = 0; k < k0; ++k) {
      w += P * f(modes[k]) * (f(ra[k]) * f(ra[k + 1]) + f(rb[k]) * f(rb[k + 1]));
      P *= f(modes[k]);
    }
    w += P * f(ra[k0]) * f(rb[k0]);
  } else {
    k0 = 0;  // from the first core on (an interface of one core is the core itself)
  }
  for (int k = k0; k < d; ++k) w += f(modes[k]) * f(ra[k]) * f(rb[k + 1]) * (f(rb[k]) + f(ra[k + 1]));
  return w;
}

// Rows: (n_1..n_p) in mode order, columns r_p.
std::vector<double> left_interface(const TensorTrain& tt, int p) {
  std::vector<double> L{1.0};
  int64_t rows = 1;
  for (int k = 0; k < p; ++k) {
    const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
    std::vector<double> next(static_cast<std::size_t>(rows * n * r1));
    // (rows x r0) * (r0 x n*r1) = rows x (n*r1) = (rows*n) x r1 in row-major mode order.
    gemm_in_pieces(CblasNoTrans, rows, n * r1, r0, L.data(), r0, tt.cores[k].data(), n * r1, next.data(), n * r1);
    L.swap(next);
    rows *= n;
  }
  return L;
}

// r_p x (n_{p+1}..n_d), columns in mode order.
std::vector<double> right_interface(const TensorTrain& tt, int p) {
  const int d = tt.d();
  std::vector<double> R{1.0};
  int64_t cols = 1;
  for (int k = d - 1; k >= p; --k) {
    const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
    std::vector<double> next(static_cast<std::size_t>(r0 * n * cols));
    // (r0*n x r1) * (r1 x cols) = r0 x (n*cols).
    gemm_in_pieces(CblasNoTrans, r0 * n, cols, r1, tt.cores[k].data(), r1, R.data(), cols, next.data(), cols);
    R.swap(next);
    cols *= n;
  }
  return R;
}

}  // namespace tts::detail
