// The left and right interfaces of a tensor train (tt_interfaces.hpp).
#include <cmath>
#include <limits>

#include "linalg.hpp"
#include "tt_interfaces.hpp"

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

// Rows: (n_1..n_p) in mode order, columns r_p.
std::vector<double> left_interface(const TensorTrain& tt, int p) {
  std::vector<double> L{1.0};
  int64_t rows = 1;
  for (int k = 0; k < p; ++k) {
    const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
    std::vector<double> next(static_cast<std::size_t>(rows * n * r1));
    // (rows x r0) * (r0 x n*r1) = rows x (n*r1) = (rows*n) x r1 in row-major mode order.
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n * r1, r0, 1.0, L.data(), r0,
                tt.cores[k].data(), n * r1, 0.0, next.data(), n * r1);
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
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r0 * n, cols, r1, 1.0, tt.cores[k].data(),
                r1, R.data(), cols, 0.0, next.data(), cols);
    R.swap(next);
    cols *= n;
  }
  return R;
}

}  // namespace tts::detail
