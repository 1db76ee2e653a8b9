// The BLAS contraction of two trains (the large-rank half of detail::contract, inner_kernels.hpp) and
// the distance between trains. dot, norm and dot_batch go through the query's contraction
// (query/score_batch.cpp), so that a stored norm and a query's scores come from the same sums.
#include <algorithm>
#include <cmath>

#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/tt_checks.hpp"
#include "ttstore/internal/tt_interfaces.hpp"
#include "ttstore/internal/tt_sum.hpp"
#include "ttstore/internal/unfolding.hpp"
#include "ttstore/tt.hpp"

namespace tts {
namespace {

// distance() orthogonalises the difference train up to this rank (its QR costs grow as the cube of
// the summed ranks); above it, three contractions.
constexpr int64_t kDifferenceMaxRank = 512;

}  // namespace

double distance(const TensorTrain& a, const TensorTrain& b) {
  detail::check_structure(a, "first tensor train");
  detail::check_structure(b, "second tensor train");
  detail::check_same_modes(a, b, "distance");
  // ||a||^2 + ||b||^2 - 2<a,b> loses everything below sqrt(eps) ||a|| when a ~ b. Orthogonalising
  // the difference train moves the cancellation into one small core, where it is exact to eps.
  if (a.max_rank() + b.max_rank() <= kDifferenceMaxRank) {
    TensorTrain c = detail::linear_combination({1.0, -1.0}, {&a, &b});
    orthogonalize_left(c);
    double s = 0;
    for (double v : c.cores.back()) s += v * v;
    return std::sqrt(s);
  }
  // (Ranks past kDifferenceMaxRank are past the loop kernels' too: detail::contract would take BLAS.)
  const double aa = detail::contract_blas(a, a), bb = detail::contract_blas(b, b), ab = detail::contract_blas(a, b);
  return std::sqrt(std::max(aa + bb - 2 * ab, 0.0));
}

namespace detail {

// Over the left interfaces while ranks exceed what the first modes hold (detail::contraction_start),
// then M_k = sum_i A_k[:, i, :]^T M_{k-1} B_k[:, i, :], two GEMMs per core.
double contract_blas(const TensorTrain& a, const TensorTrain& b) {
  const int k0 = contraction_start(a.modes, a.ranks, b.ranks);
  std::vector<double> M{1.0}, T, next;
  if (k0 > 1) {
    const std::vector<double> La = detail::left_interface(a, k0);
    const std::vector<double> Lb = &a == &b ? La : detail::left_interface(b, k0);
    const int64_t rows = static_cast<int64_t>(La.size()) / a.ranks[k0];
    M.resize(static_cast<std::size_t>(a.ranks[k0] * b.ranks[k0]));
    detail::gemm_in_pieces(CblasTrans, a.ranks[k0], b.ranks[k0], rows, La.data(), a.ranks[k0], Lb.data(), b.ranks[k0],
                           M.data(), b.ranks[k0]);
  }
  for (int k = k0 > 1 ? k0 : 0; k < a.d(); ++k) {
    const int64_t ra0 = a.ranks[k], ra1 = a.ranks[k + 1], rb0 = b.ranks[k], rb1 = b.ranks[k + 1];
    const int64_t n = a.modes[k];
    // T = M (ra0 x rb0) * B_k (rb0 x n*rb1), read as (ra0*n) x rb1.
    // (In pieces: a contraction of large ranks never holds the BLAS threads for long, gemm_in_pieces.)
    T.resize(static_cast<std::size_t>(ra0 * n * rb1));
    detail::gemm_in_pieces(CblasNoTrans, ra0, n * rb1, rb0, M.data(), rb0, b.cores[k].data(), n * rb1, T.data(),
                           n * rb1);
    // M' = A_k^T ((ra0*n) x ra1)^T * T ((ra0*n) x rb1).
    next.resize(static_cast<std::size_t>(ra1 * rb1));
    detail::gemm_in_pieces(CblasTrans, ra1, rb1, ra0 * n, a.cores[k].data(), ra1, T.data(), rb1, next.data(), rb1);
    M.swap(next);
  }
  return M[0];
}

double distance_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ra,
                     const std::vector<int64_t>& rb) {
  const int d = static_cast<int>(modes.size());
  if (*std::max_element(ra.begin(), ra.end()) + *std::max_element(rb.begin(), rb.end()) > kDifferenceMaxRank) {
    return contraction_work(modes, ra, ra) + contraction_work(modes, rb, rb) + contraction_work(modes, ra, rb);
  }
  // linear_combination() writes the cores of ranks s = ra + rb; orthogonalize_left takes, per core, a QR of
  // (s_k n_k) x s_k+1 and its Q (about 2 s_k n_k s_k+1^2), then multiplies R into the next core.
  std::vector<double> s(static_cast<std::size_t>(d + 1), 1.0);
  for (int k = 1; k < d; ++k) s[k] = static_cast<double>(ra[k] + rb[k]);
  double w = 0;
  for (int k = 0; k < d; ++k) {
    const double n = static_cast<double>(modes[k]);
    w += s[k] * n * s[k + 1] * (1 + 2 * s[k + 1]);
    if (k + 1 < d) w += s[k + 1] * s[k + 1] * static_cast<double>(modes[k + 1]) * s[k + 2];
  }
  return w;
}

}  // namespace detail

}  // namespace tts
