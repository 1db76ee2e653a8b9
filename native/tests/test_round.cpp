// round() recompresses inflated trains back to their minimal ranks; orthogonalisation sweeps leave
// orthonormal cores and an unchanged tensor.
#include <cmath>
#include <random>

#include "check.hpp"
#include "tt_testing.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/small_la.hpp"
#include "ttstore/internal/tt_sum.hpp"

using namespace tts;

TEST(round_recovers_minimal_ranks) {
  // a sine field (QTT rank 2) compressed, then doubled by a + a: ranks 4 -> round -> 2
  const int64_t n = 1 << 12;
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = std::sin(0.01 * i + 0.5);
  const QttLayout L = make_layout({n}, LayoutKind::RowMajor);
  const TensorTrain a = qtt_svd(ttt::view(x), L, SvdOptions{1e-12, 0});
  CHECK_EQ(a.max_rank(), int64_t{2});
  const TensorTrain s = detail::linear_combination({1.0, 1.0}, {&a, &a});
  CHECK_EQ(s.max_rank(), int64_t{4});
  const TensorTrain r = round(s, SvdOptions{1e-10, 0});
  CHECK_EQ(r.max_rank(), int64_t{2});
  CHECK(!r.f32);
  r.validate();
  const auto ys = ttt::dense_mode_order(s), yr = ttt::dense_mode_order(r);
  CHECK(ttt::diff_norm(ys, yr) <= 1e-10 * ttt::norm2(ys));
}

TEST(round_meets_tolerance_and_cap_on_random_trains) {
  const TensorTrain t = ttt::random_tt({2, 3, 2, 2, 2, 3, 2}, {1, 2, 6, 7, 8, 6, 2, 1}, 4);
  const auto y = ttt::dense_mode_order(t);
  for (double tol : {0.3, 0.1, 1e-2}) {
    const TensorTrain r = round(t, SvdOptions{tol, 0});
    const auto yr = ttt::dense_mode_order(r);
    CHECK_MSG(ttt::diff_norm(y, yr) <= tol * ttt::norm2(y) * (1 + 1e-12), "tol " + check::num(tol));
  }
  const TensorTrain c = round(t, SvdOptions{1e-12, 3});
  CHECK(c.max_rank() <= 3);
  const TensorTrain z = round(t, SvdOptions{0.0, 0});  // lossless: same tensor
  CHECK(ttt::diff_norm(y, ttt::dense_mode_order(z)) <= 1e-12 * ttt::norm2(y));
}

// For each core k in [k0, k1): unfolding^T unfolding = I (left) or unfolding unfolding^T = I (right).
static double orthogonality_defect(const TensorTrain& t, int k, bool left) {
  const int64_t r0 = t.ranks[k], n = t.modes[k], r1 = t.ranks[k + 1];
  const auto& G = t.cores[k];
  double worst = 0;
  if (left) {
    for (int64_t a = 0; a < r1; ++a)
      for (int64_t b = 0; b < r1; ++b) {
        double s = 0;
        for (int64_t row = 0; row < r0 * n; ++row) s += G[row * r1 + a] * G[row * r1 + b];
        worst = std::max(worst, std::fabs(s - (a == b)));
      }
  } else {
    for (int64_t a = 0; a < r0; ++a)
      for (int64_t b = 0; b < r0; ++b) {
        double s = 0;
        for (int64_t col = 0; col < n * r1; ++col) s += G[a * n * r1 + col] * G[b * n * r1 + col];
        worst = std::max(worst, std::fabs(s - (a == b)));
      }
  }
  return worst;
}

TEST(orthogonalization_sweeps) {
  const TensorTrain t = ttt::random_tt({2, 3, 2, 4, 2, 2}, {1, 2, 6, 5, 7, 2, 1}, 9);
  const auto y = ttt::dense_mode_order(t);
  TensorTrain l = t;
  orthogonalize_left(l);
  l.validate();
  for (int k = 0; k + 1 < l.d(); ++k)
    CHECK_MSG(orthogonality_defect(l, k, true) < 1e-12, "left core " + std::to_string(k));
  CHECK(ttt::diff_norm(y, ttt::dense_mode_order(l)) <= 1e-12 * ttt::norm2(y));
  CHECK_REL(ttt::norm2(l.cores.back()), ttt::norm2(y), 1e-12);
  CHECK(l.ranks[1] <= 2);  // a 1 x 2 x 2 core cannot carry more than rank 2
  TensorTrain r = t;
  orthogonalize_right(r);
  r.validate();
  for (int k = 1; k < r.d(); ++k)
    CHECK_MSG(orthogonality_defect(r, k, false) < 1e-12, "right core " + std::to_string(k));
  CHECK(ttt::diff_norm(y, ttt::dense_mode_order(r)) <= 1e-12 * ttt::norm2(y));
  CHECK_REL(ttt::norm2(r.cores.front()), ttt::norm2(y), 1e-12);
}

TEST(to_f32_rounds_values) {
  const TensorTrain t = ttt::random_tt({2, 2, 2}, {1, 2, 2, 1}, 1);
  const TensorTrain f = to_f32(t);
  CHECK(f.f32);
  CHECK_EQ(f.stored_bytes() * 2, t.stored_bytes());
  f.validate();
  for (int k = 0; k < 3; ++k)
    for (std::size_t i = 0; i < t.cores[k].size(); ++i)
      CHECK(f.cores[k][i] == static_cast<double>(static_cast<float>(t.cores[k][i])));
}

// sym_eig_small (small Gram matrices, without BLAS) against dsyevd: the same eigenvalues (to rounding
// of the largest), orthonormal vectors with G V = V diag(w), on Gram matrices of every size it takes,
// of full rank, of low rank (repeated zero eigenvalues) and spread over twelve orders of magnitude.
TEST(sym_eig_small_matches_dsyevd) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g;
  for (int64_t m = 1; m <= detail::kSmallEigRows; ++m) {
    for (int64_t rank : {m, std::max<int64_t>(1, m / 3)}) {
      const int64_t K = 2 * m + 3;
      std::vector<double> C(static_cast<std::size_t>(m * K), 0.0), G(static_cast<std::size_t>(m * m), 0.0);
      for (int64_t l = 0; l < rank; ++l) {
        std::vector<double> u(static_cast<std::size_t>(m)), v(static_cast<std::size_t>(K));
        for (double& x : u) x = g(rng);
        for (double& x : v) x = g(rng) * std::pow(10.0, -6.0 * static_cast<double>(l) / static_cast<double>(m));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t c = 0; c < K; ++c) C[i * K + c] += u[i] * v[c];
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j)
          for (int64_t c = 0; c < K; ++c) G[i * m + j] += C[i * K + c] * C[j * K + c];
      std::vector<double> V = G, w, L = G, wl(static_cast<std::size_t>(m));
      detail::sym_eig_small(m, V, w);
      CHECK(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', m, L.data(), m, wl.data()) == 0);
      const double top = std::max(std::fabs(wl[m - 1]), 1e-300);
      for (int64_t i = 0; i < m; ++i) {
        CHECK_NEAR(w[i], wl[i], 1e-13 * top);
        if (i > 0) CHECK(w[i] >= w[i - 1]);
      }
      double orth = 0, resid = 0;
      for (int64_t a = 0; a < m; ++a) {
        for (int64_t b = 0; b < m; ++b) {
          double d = 0;
          for (int64_t j = 0; j < m; ++j) d += V[j * m + a] * V[j * m + b];
          orth = std::max(orth, std::fabs(d - (a == b ? 1.0 : 0.0)));
        }
        for (int64_t i = 0; i < m; ++i) {
          double gv = 0;
          for (int64_t j = 0; j < m; ++j) gv += G[i * m + j] * V[j * m + a];
          resid = std::max(resid, std::fabs(gv - w[a] * V[i * m + a]));
        }
      }
      CHECK(orth < 1e-13);
      CHECK(resid < 1e-13 * top);
    }
  }
}

// svd_rows_left (the zip-up's split of wide matrices, by QR of M^T) against the full thin SVD: the
// same singular values, orthonormal U, and M = U U^T M, on wide, square and tall matrices with
// singular values spread over ten orders of magnitude.
TEST(svd_rows_left_matches_the_thin_svd) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g;
  for (auto [p, q] : {std::pair<int64_t, int64_t>{12, 900}, {40, 81}, {30, 30}, {50, 20}}) {
    const int64_t k = std::min(p, q);
    // M = A diag(10^-(10 i / k)) B with random A (p x k) and B (k x q)
    std::vector<double> A(static_cast<std::size_t>(p * k)), B(static_cast<std::size_t>(k * q)),
        M(static_cast<std::size_t>(p * q), 0.0);
    for (double& v : A) v = g(rng);
    for (double& v : B) v = g(rng);
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t c = 0; c < q; ++c) M[i * q + c] += A[i * k + j] * std::pow(10.0, -10.0 * j / k) * B[j * q + c];
    std::vector<double> U, s, U2, s2, Vt;
    detail::svd_rows_left(p, q, M.data(), U, s);
    detail::svd_rows(p, q, M.data(), U2, s2, Vt);
    CHECK_EQ(static_cast<int64_t>(s.size()), k);
    for (int64_t i = 0; i < k; ++i) CHECK_NEAR(s[i], s2[i], 1e-12 * s2[0]);
    double orth = 0, recon = 0, norm = 0;
    for (int64_t a = 0; a < k; ++a)
      for (int64_t b = 0; b < k; ++b) {
        double d = 0;
        for (int64_t i = 0; i < p; ++i) d += U[i * k + a] * U[i * k + b];
        orth = std::max(orth, std::abs(d - (a == b ? 1.0 : 0.0)));
      }
    for (int64_t c = 0; c < q; ++c) {
      std::vector<double> t(static_cast<std::size_t>(k), 0.0);  // U^T M[:, c]
      for (int64_t a = 0; a < k; ++a)
        for (int64_t i = 0; i < p; ++i) t[a] += U[i * k + a] * M[i * q + c];
      for (int64_t i = 0; i < p; ++i) {
        double r = 0;
        for (int64_t a = 0; a < k; ++a) r += U[i * k + a] * t[a];
        recon = std::max(recon, std::abs(r - M[i * q + c]));
        norm = std::max(norm, std::abs(M[i * q + c]));
      }
    }
    CHECK(orth < 1e-12);
    CHECK(recon < 1e-12 * norm);
  }
}

TEST_MAIN()
