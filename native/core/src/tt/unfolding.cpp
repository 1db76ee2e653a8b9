// One step of the left-to-right TT-SVD: left singular vectors of a wide unfolding without an SVD
// of the wide matrix, then the in-place projection U_r^T C.
#include "ttstore/internal/unfolding.hpp"

#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/small_la.hpp"
#include "ttstore/internal/threads.hpp"

namespace tts::detail {
// G = C C^T (upper triangle, row-major m x m).
std::vector<double> gram(const double* C, int64_t m, int64_t K) {
  std::vector<double> G(static_cast<std::size_t>(m * m), 0.0);
  const int nt = threads();
  if (m <= 16 && nt > 1 && K >= 8192) {
    // Tiny m: memory-bound; per-thread partial Grams over column chunks, each call single-threaded.
    const int64_t b = 4096;
    std::vector<std::vector<double>> part(nt, std::vector<double>(static_cast<std::size_t>(m * m), 0.0));
#pragma omp parallel num_threads(nt)
    {
      double* Gt = part[omp_get_thread_num()].data();
#pragma omp for schedule(static)
      for (int64_t k0 = 0; k0 < K; k0 += b) {
        const int64_t bb = std::min(b, K - k0);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, m, bb, 1.0, C + k0, K, 1.0, Gt, m);
      }
    }
    for (const auto& p : part) {
      for (std::size_t i = 0; i < G.size(); ++i) G[i] += p[i];
    }
  } else {
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, m, K, 1.0, C, K, 0.0, G.data(), m);
  }
  return G;
}

namespace {

// Threshold / Gram-noise ratio above which the measured-Gram route keeps the TSQR ranks
// (measured on smooth and noisy 2^20 fields at tol 1e-4 .. 1e-10: identical ranks; at a ratio of
// 0.02 it already loses ranks, and far below 1 it degenerates to full rank).
constexpr double kMeasuredGram = 1.0;

// Left singular vectors and values of the wide C (m < K).
struct LeftSvd {
  std::vector<double> sigma;  // m values, descending
  std::vector<double> U;      // m x m row-major: U[j*m + i] = component j of u_i
};

LeftSvd eig_of_gram(std::vector<double> G, int64_t m) {
  std::vector<double> w(static_cast<std::size_t>(m));
  if (m <= kSmallEigRows) {
    sym_eig_small(m, G, w);  // no BLAS threads to wait for (small_la.hpp)
  } else {
    lapack_check(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', m, G.data(), m, w.data()), "dsyevd");
  }
  LeftSvd out;
  out.sigma.resize(m);
  out.U.resize(static_cast<std::size_t>(m * m));
  for (int64_t i = 0; i < m; ++i) {
    const int64_t src = m - 1 - i;  // eigenvalues ascend
    out.sigma[i] = std::sqrt(std::max(w[src], 0.0));
    for (int64_t j = 0; j < m; ++j) out.U[j * m + i] = G[j * m + src];
  }
  return out;
}

// R factor (m x m, column-major, upper) of C^T (K x m) by streaming over column chunks of C:
// QR of [R; chunk^T], keep R. `col0, col1` restrict to a column range.
void tsqr_range(const double* C, int64_t m, int64_t K, int64_t col0, int64_t col1, int64_t b, double* R) {
  // [R; chunk^T] is triangular-over-rectangular: dtpqrt updates R in place at O(b m^2) per chunk,
  // whatever b is (a plain QR of the stack would refactor R each time). R starts at 0.
  const int64_t nb = std::min<int64_t>(m, 32);
  std::vector<double> B(static_cast<std::size_t>(b * m)), T(static_cast<std::size_t>(nb * m));
  std::fill(R, R + m * m, 0.0);
  for (int64_t k0 = col0; k0 < col1; k0 += b) {
    const int64_t bb = std::min(b, col1 - k0);
    for (int64_t j = 0; j < m; ++j) std::memcpy(B.data() + j * bb, C + j * K + k0, sizeof(double) * bb);
    lapack_check(LAPACKE_dtpqrt(LAPACK_COL_MAJOR, bb, m, 0, nb, R, m, B.data(), bb, T.data(), nb), "dtpqrt");
  }
}

// R (m x m, column-major, upper) of C^T = Q R.
std::vector<double> tsqr_r(const double* C, int64_t m, int64_t K) {
  std::vector<double> R(static_cast<std::size_t>(m * m));
  const int nt = threads();
  // Per-thread streams only while each chunk's QR stays below OpenBLAS's threading threshold
  // (level-2 Householder on (b+m) x m); otherwise one stream with threaded BLAS inside.
  const int64_t b_small = std::max<int64_t>(4 * m, 8192 / std::max<int64_t>(m, 1) - m);
  if (nt > 1 && m <= 16 && (b_small + m) * m <= 9216 && K >= 4 * b_small * nt) {
    std::vector<double> Rs(static_cast<std::size_t>(nt * m * m));
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num();
      const int64_t c0 = K * t / nt, c1 = K * (t + 1) / nt;
      tsqr_range(C, m, K, c0, c1, b_small, Rs.data() + t * m * m);
    }
    // Stack the per-thread R's and factor once more.
    const int64_t rows = nt * m;
    std::vector<double> S(static_cast<std::size_t>(rows * m)), tau(static_cast<std::size_t>(m));
    for (int t = 0; t < nt; ++t) {
      for (int64_t j = 0; j < m; ++j) {
        for (int64_t i = 0; i < m; ++i) S[t * m + i + j * rows] = Rs[t * m * m + i + j * m];
      }
    }
    lapack_check(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, rows, m, S.data(), rows, tau.data()), "dgeqrf");
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t i = 0; i < m; ++i) R[i + j * m] = (i <= j) ? S[i + j * rows] : 0.0;
    }
  } else {
    const int64_t b = std::clamp<int64_t>((int64_t{1} << 18) / m, 256, std::max<int64_t>(K, 256));
    tsqr_range(C, m, K, 0, K, b, R.data());
  }
  return R;
}

// Singular values of C alone (descending): those of its TSQR factor, R destroyed in place.
std::vector<double> tsqr_sigma(const double* C, int64_t m, int64_t K) {
  std::vector<double> R = tsqr_r(C, m, K), sigma(static_cast<std::size_t>(m));
  double unused = 0;
  lapack_check(LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, m, R.data(), m, sigma.data(), &unused, 1, &unused, 1),
               "dgesdd");
  return sigma;
}

LeftSvd tsqr_route(const double* C, int64_t m, int64_t K) {
  std::vector<double> R = tsqr_r(C, m, K);
  // C = R^T Q^T and R = U_R S V_R^T, so C = V_R S (Q U_R)^T: C's left vectors are R's right ones.
  LeftSvd out;
  out.sigma.resize(m);
  // Divide and conquer (dgesvd's QR iteration is ~35x slower at m = 1024: 15 s against 0.4 s).
  // jobz 'O': R is overwritten with U_R, which is not needed; only V_R^T comes out separately.
  std::vector<double> VT(static_cast<std::size_t>(m * m));
  double unused = 0;
  lapack_check(LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'O', m, m, R.data(), m, out.sigma.data(), &unused, 1, VT.data(), m),
               "dgesdd");
  out.U = std::move(VT);  // VT column-major (i, j) at i + j*m = u_i[j] = row-major U[j*m + i]
  return out;
}

// W[0, r*K) = Ut (r x m) * C (m x K), in place: each column chunk of C is copied out before
// its first r rows are overwritten, so no chunk reads what another wrote. With `energy`, also
// returns the squared norm of each of the r output rows.
void project_in_place(double* W, int64_t m, int64_t K, const double* Ut, int64_t r, std::vector<double>* energy) {
  const int nt = threads();
  const double mnk_col = static_cast<double>(r) * static_cast<double>(m);
  const int64_t b_tiny = static_cast<int64_t>(kBlasTinyMNK / mnk_col);
  const bool per_thread = nt > 1 && b_tiny >= 256 && K >= 2 * b_tiny;
  const int64_t b = per_thread ? std::min<int64_t>(b_tiny, 8192) : std::clamp<int64_t>((int64_t{1} << 17) / m, 64, K);
  const int teams = per_thread ? nt : 1;
  std::vector<double> e(static_cast<std::size_t>(energy ? teams * r : 0), 0.0);
  auto chunk = [&](int64_t k0, double* T, double* et) {
    const int64_t bb = std::min(b, K - k0);
    for (int64_t j = 0; j < m; ++j) std::memcpy(T + j * bb, W + j * K + k0, sizeof(double) * bb);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, bb, m, 1.0, Ut, m, T, bb, 0.0, W + k0, K);
    if (et) {
      for (int64_t i = 0; i < r; ++i) {
        const double* row = W + i * K + k0;
        double s = 0;
        for (int64_t c = 0; c < bb; ++c) s += row[c] * row[c];
        et[i] += s;
      }
    }
  };
  if (per_thread) {
#pragma omp parallel num_threads(nt)
    {
      std::vector<double> T(static_cast<std::size_t>(m * b));
      double* et = energy ? e.data() + omp_get_thread_num() * r : nullptr;
#pragma omp for schedule(static)
      for (int64_t k0 = 0; k0 < K; k0 += b) chunk(k0, T.data(), et);
    }
  } else {
    std::vector<double> T(static_cast<std::size_t>(m * b));
    for (int64_t k0 = 0; k0 < K; k0 += b) chunk(k0, T.data(), energy ? e.data() : nullptr);
  }
  if (energy) {
    energy->assign(static_cast<std::size_t>(r), 0.0);
    for (int t = 0; t < teams; ++t) {
      for (int64_t i = 0; i < r; ++i) (*energy)[i] += e[t * r + i];
    }
  }
}

// Tall or square C (m >= K): a direct SVD of C^T (K x m column-major = C's memory), in place.
StepResult direct_step(double* W, int64_t m, int64_t K, double delta_sq, int64_t max_rank) {
  // C^T = U' S VT'  =>  C = VT'^T S U'^T: u_i = row i of VT', C_next = S_r U'_r^T.
  std::vector<double> s(static_cast<std::size_t>(K)), Ub, VTb;
  const double* VTp;  // VT'(i, j) at VTp[i + j*ldvt]
  int64_t ldvt;
  const double* Up;  // U'(c, i) at Up[c + i*K]
  double dummy = 0;
  if (K < m) {
    // jobz 'O' with M < N: the first M rows of VT' overwrite A, U' goes to Ub.
    Ub.resize(static_cast<std::size_t>(K * K));
    lapack_check(LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'O', K, m, W, K, s.data(), Ub.data(), K, &dummy, 1), "dgesdd");
    VTp = W;
    ldvt = K;
    Up = Ub.data();
  } else {
    // Square: U' overwrites A, VT' goes to VTb.
    VTb.resize(static_cast<std::size_t>(m * m));
    lapack_check(LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'O', K, m, W, K, s.data(), &dummy, 1, VTb.data(), m), "dgesdd");
    VTp = VTb.data();
    ldvt = m;
    Up = W;
  }
  StepResult out;
  out.route = Route::Direct;
  out.choice = choose_rank(s.data(), K, delta_sq, max_rank);
  const int64_t r = out.choice.r;
  out.core.resize(static_cast<std::size_t>(m * r));
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t i = 0; i < r; ++i) out.core[j * r + i] = VTp[i + j * ldvt];
  }
  if (Up == W) {
    for (int64_t i = 0; i < r; ++i) {  // row i of C_next is column i of U' in place
      for (int64_t c = 0; c < K; ++c) W[i * K + c] *= s[i];
    }
  } else {
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t c = 0; c < K; ++c) W[i * K + c] = s[i] * Up[c + i * K];
    }
  }
  return out;
}

}  // namespace

StepResult factor_unfolding(double* W, int64_t m, int64_t K, double delta_sq, double norm_sq, int64_t max_rank,
                            Route force, std::vector<double>* known_gram,
                            const std::function<bool(int64_t)>& hopeless) {
  if (m >= K) return direct_step(W, m, K, delta_sq, max_rank);
  // Gram eigenvalues carry absolute errors of about m eps ||C||^2 (rounding in C C^T).
  //  - threshold >= 1e3 x that: the eigenvalues decide the rank directly (cheapest);
  //  - threshold >= kMeasuredGram x that: the Gram eigenvectors are still accurate where it
  //    matters, so rotate all m rows (U^T C) and choose the rank from the measured energies of
  //    the rotated rows: the discarded error is then measured, not estimated;
  //  - tighter: TSQR (the small singular values need an orthogonal factorization).
  const double noise = static_cast<double>(m) * DBL_EPSILON * norm_sq;
  const Route route = force != Route::Auto                ? force
                      : delta_sq >= 1e3 * noise           ? Route::Gram
                      : delta_sq >= kMeasuredGram * noise ? Route::MeasuredGram
                                                          : Route::Tsqr;
  if (route == Route::Tsqr && hopeless && m >= kValuesFirstRows) {
    // Large and possibly incompressible: the values alone (no m x m vectors, no LAPACK workspace
    // of 5 m^2) decide whether the sweep ends here or keeps full rank (identity core); only a step
    // that truncates pays a second TSQR for its vectors.
    const std::vector<double> sigma = tsqr_sigma(W, m, K);
    StepResult probe;
    probe.route = route;
    probe.choice = choose_rank(sigma.data(), m, delta_sq, max_rank);
    if (hopeless(probe.choice.r)) {
      probe.aborted = true;
      return probe;
    }
    if (probe.choice.r == m) {
      // Full rank: any orthonormal basis of the row space gives the same train, so the identity
      // core leaves C in W as it is, with no vectors and no projection at all.
      probe.core.assign(static_cast<std::size_t>(m * m), 0.0);
      for (int64_t i = 0; i < m; ++i) probe.core[i * m + i] = 1.0;
      probe.route = Route::Identity;
      return probe;
    }
  }
  LeftSvd f = route == Route::Tsqr ? tsqr_route(W, m, K)
              : known_gram         ? eig_of_gram(std::move(*known_gram), m)
                                   : eig_of_gram(gram(W, m, K), m);
  StepResult out;
  out.route = route;
  std::vector<double> Ut;
  auto fill = [&](int64_t r) {
    out.core.resize(static_cast<std::size_t>(m * r));
    Ut.resize(static_cast<std::size_t>(r * m));
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t i = 0; i < r; ++i) {
        out.core[j * r + i] = f.U[j * m + i];
        Ut[i * m + j] = f.U[j * m + i];
      }
    }
  };
  if (route == Route::MeasuredGram) {
    fill(m);
    std::vector<double> energy;
    project_in_place(W, m, K, Ut.data(), m, &energy);  // all m rotated rows, in place
    std::vector<double> sig(static_cast<std::size_t>(m));
    for (int64_t i = 0; i < m; ++i) sig[i] = std::sqrt(energy[i]);
    out.choice = choose_rank(sig.data(), m, delta_sq, max_rank);
    // Rows 0..r-1 of the rotated matrix (leading dimension K) are already C_next = U_r^T C.
    const int64_t r = out.choice.r;
    std::vector<double> core(static_cast<std::size_t>(m * r));
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t i = 0; i < r; ++i) core[j * r + i] = out.core[j * m + i];
    }
    out.core.swap(core);
    return out;
  }
  out.choice = choose_rank(f.sigma.data(), m, delta_sq, max_rank);
  fill(out.choice.r);
  project_in_place(W, m, K, Ut.data(), out.choice.r, nullptr);
  return out;
}

}  // namespace tts::detail
