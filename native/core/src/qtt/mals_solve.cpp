// A x = b for SPD A in TT format by two-site alternating least squares (MALS, the two-site DMRG of
// linear systems; Holtz, Rohwedder and Schneider 2012).
//
// With every core but the pair (k, k+1) orthonormal (left of it left-orthogonal, right of it
// right-orthogonal), the frames P form an orthonormal basis and the energy-minimising pair solves
// the projected system (P^T A P) X = P^T b, SPD and of size r_k * n * n * r_{k+2}. Interfaces carry
// the projections of A and b built from the left and right: LA[k] = [r, R, r] (x^T A x over cores
// < k), LB[k] = [r, rb] (x^T b), and RA, RB likewise over cores >= k. The pair is then split by a
// truncated SVD, which is what adapts the ranks (the "enrichment" of the one-site methods comes for
// free in the two-site one). One sweep goes left to right and back.
#include <algorithm>
#include <cmath>
#include <string>

#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/rank_select.hpp"
#include "ttstore/internal/small_la.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

namespace {

using Vec = std::vector<double>;

// Local systems up to this size are assembled and factored (about N matvecs + N^3 / 3 flops).
constexpr int64_t kDenseLocal = 768;
// LocalOp::apply runs thousands of times a solve, its GEMMs on OpenBLAS's threads: an OpenMP team
// for its loops as well only pays where a loop is far longer than a fork/join. At ranks 64 (1.6e6
// here, a fraction of a ms) the two pools took turns spinning on 2 cores: a helmholtz_3d gaussian
// step at 512^3 used 66-70 s of CPU for 31 s of wall time (2 threads, a loaded machine), 7-8 s of
// CPU and 2.6-4 s of wall time with the loops serial.
constexpr int64_t kParallelApply = int64_t{1} << 24;

double nrm2(const Vec& v) { return cblas_dnrm2(static_cast<int>(v.size()), v.data(), 1); }

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* A, const double* B, double* C,
          double beta = 0.0) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, A,
              ta ? m : k, B, tb ? k : n, beta, C, n);
}

// The nonzeros of an MPO core W [Ra, n, n, Rb] by output (wa, i): (j * Rb + wb, W[wa, i, j, wb]).
using Nonzeros = std::vector<std::pair<int64_t, double>>;
std::vector<Nonzeros> nonzeros(const double* W, int64_t Ra, int64_t n, int64_t Rb) {
  std::vector<Nonzeros> out(static_cast<std::size_t>(Ra * n));
  for (int64_t wa = 0; wa < Ra; ++wa)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t wb = 0; wb < Rb; ++wb) {
          const double v = W[((wa * n + i) * n + j) * Rb + wb];
          if (v != 0) out[static_cast<std::size_t>(wa * n + i)].emplace_back(j * Rb + wb, v);
        }
  return out;
}

// dst[0..len) = sum over the (key, v) of a nonempty row of v times row `at(key)` of src (rows len
// long), the first term assigning: key j * Rb + wb is row j * stride + wb.
void accumulate_rows(const Nonzeros& row, const double* src, int64_t len, double* dst, int64_t stride, int64_t Rb) {
  auto at = [&](int64_t key) { return (key / Rb) * stride + key % Rb; };
  const double v0 = row[0].second;
  const double* s0 = src + at(row[0].first) * len;
  for (int64_t b = 0; b < len; ++b) dst[b] = v0 * s0[b];
  for (std::size_t t = 1; t < row.size(); ++t) {
    const double v = row[t].second;
    const double* st = src + at(row[t].first) * len;
    for (int64_t b = 0; b < len; ++b) dst[b] += v * st[b];
  }
}

// The projected operator of the pair (k, k+1): LA [rl, R0, rl], W0 [R0, n, n, R1], W1 [R1, n, n, R2],
// RA [rr, R2, rr] (input bond first).
struct LocalOp {
  int64_t rl, n, rr, R0, R1, R2;
  const double *LA, *W0, *W1, *RA;
  int64_t size() const { return rl * n * n * rr; }

  // y = A_loc X, X and y as [a, i1, i2, b].
  void apply(const double* X, double* y, Vec& T1, Vec& T2, Vec& T3) const {
    // T1[(a' j1 j2), (w2 b)] = X[(a' j1 j2), b'] RA[b', (w2 b)]
    T1.resize(static_cast<std::size_t>(rl * n * n * R2 * rr));
    gemm(false, false, rl * n * n, R2 * rr, rr, X, RA, T1.data());
    // The stencil's MPO cores are mostly zeros: each output row below is a short sum of scaled
    // input rows, written once (its first term assigns), so the buffers need no zeroing pass.
    const std::vector<Nonzeros> nz1 = nonzeros(W1, R1, n, R2);  // by (w1, i2): (j2, w2)
    const std::vector<Nonzeros> nz0 = nonzeros(W0, R0, n, R1);  // by (w0, i1): (j1, w1)
    // T2[a', j1, i2, w1, b] = sum_{j2, w2} T1[a', j1, j2, w2, b] W1[w1, i2, j2, w2]
    T2.resize(static_cast<std::size_t>(rl * n * n * R1 * rr));
#pragma omp parallel for num_threads(detail::threads()) \
    schedule(static) if (rl * n * n * n * R1 * R2 * rr > kParallelApply)
    for (int64_t aj = 0; aj < rl * n; ++aj) {
      const double* t1 = &T1[aj * n * R2 * rr];
      for (int64_t i2 = 0; i2 < n; ++i2) {
        for (int64_t w1 = 0; w1 < R1; ++w1) {
          double* dst = &T2[((aj * n + i2) * R1 + w1) * rr];
          const Nonzeros& row = nz1[w1 * n + i2];
          if (row.empty()) {
            std::fill(dst, dst + rr, 0.0);
            continue;
          }
          accumulate_rows(row, t1, rr, dst, R2, R2);  // T1[a', j1, j2, w2] at row j2 R2 + w2 of t1
        }
      }
    }
    // T3[w0, a', i1, i2, b] = sum_{j1, w1} T2[a', j1, i2, w1, b] W0[w0, i1, j1, w1]
    T3.resize(static_cast<std::size_t>(R0 * rl * n * n * rr));
#pragma omp parallel for num_threads(detail::threads()) \
    schedule(static) if (rl * R0 * n * n * R1 * n * rr > kParallelApply)
    for (int64_t a = 0; a < rl; ++a) {
      for (int64_t w0 = 0; w0 < R0; ++w0) {
        for (int64_t i1 = 0; i1 < n; ++i1) {
          const Nonzeros& row = nz0[w0 * n + i1];
          for (int64_t i2 = 0; i2 < n; ++i2) {
            double* dst = &T3[((((w0 * rl + a) * n + i1) * n) + i2) * rr];
            if (row.empty()) {
              std::fill(dst, dst + rr, 0.0);
              continue;
            }
            // T2[a', j1, i2, w1] is row j1 n R1 + w1 from T2[a', 0, i2, 0].
            accumulate_rows(row, &T2[((a * n * n) + i2) * R1 * rr], rr, dst, n * R1, R1);
          }
        }
      }
    }
    // y[a, (i1 i2 b)] = LA[a, (w0 a')] T3[(w0 a'), (i1 i2 b)]
    gemm(false, false, rl, n * n * rr, R0 * rl, LA, T3.data(), y);
  }

  // diag(A_loc), for Jacobi preconditioning.
  Vec diagonal() const {
    // WW[w0, i1, i2, w2] = sum_w1 W0[w0, i1, i1, w1] W1[w1, i2, i2, w2]
    Vec WW(static_cast<std::size_t>(R0 * n * n * R2), 0.0);
    for (int64_t w0 = 0; w0 < R0; ++w0)
      for (int64_t i1 = 0; i1 < n; ++i1)
        for (int64_t w1 = 0; w1 < R1; ++w1) {
          const double v = W0[((w0 * n + i1) * n + i1) * R1 + w1];
          if (v == 0) continue;
          for (int64_t i2 = 0; i2 < n; ++i2)
            for (int64_t w2 = 0; w2 < R2; ++w2)
              WW[((w0 * n + i1) * n + i2) * R2 + w2] += v * W1[((w1 * n + i2) * n + i2) * R2 + w2];
        }
    Vec dg(static_cast<std::size_t>(size()), 0.0);
    for (int64_t a = 0; a < rl; ++a)
      for (int64_t w0 = 0; w0 < R0; ++w0) {
        const double la = LA[(a * R0 + w0) * rl + a];
        if (la == 0) continue;
        for (int64_t i1 = 0; i1 < n; ++i1)
          for (int64_t i2 = 0; i2 < n; ++i2)
            for (int64_t w2 = 0; w2 < R2; ++w2) {
              const double ww = la * WW[((w0 * n + i1) * n + i2) * R2 + w2];
              if (ww == 0) continue;
              double* out = &dg[((a * n + i1) * n + i2) * rr];
              for (int64_t b = 0; b < rr; ++b) out[b] += ww * RA[(b * R2 + w2) * rr + b];
            }
      }
    return dg;
  }
};

// Jacobi-preconditioned CG from the given X, whose product A X the caller has at hand (AX); stops at
// ||f - A X|| <= rtol ||f|| or max_it.
void local_cg(const LocalOp& op, const Vec& f, const Vec& AX, Vec& X, double rtol, int max_it) {
  const int64_t N = op.size();
  Vec T1, T2, T3, r(static_cast<std::size_t>(N)), z(static_cast<std::size_t>(N)), p, q(static_cast<std::size_t>(N));
  Vec dg = op.diagonal();
  for (double& v : dg) v = (v > 0) ? 1.0 / v : 1.0;
  for (int64_t i = 0; i < N; ++i) r[i] = f[i] - AX[i];
  const double fn = nrm2(f);
  if (fn == 0) {
    std::fill(X.begin(), X.end(), 0.0);
    return;
  }
  for (int64_t i = 0; i < N; ++i) z[i] = dg[i] * r[i];
  p = z;
  double rz = cblas_ddot(static_cast<int>(N), r.data(), 1, z.data(), 1);
  for (int it = 0; it < max_it; ++it) {
    if (nrm2(r) <= rtol * fn) break;
    // At rank 256 one apply is tens of milliseconds and a pair may take 400 of them.
    detail::poll_point();
    op.apply(p.data(), q.data(), T1, T2, T3);
    const double pq = cblas_ddot(static_cast<int>(N), p.data(), 1, q.data(), 1);
    if (!(pq > 0)) break;  // lost positive definiteness to round-off: keep what we have
    const double alpha = rz / pq;
    cblas_daxpy(static_cast<int>(N), alpha, p.data(), 1, X.data(), 1);
    cblas_daxpy(static_cast<int>(N), -alpha, q.data(), 1, r.data(), 1);
    for (int64_t i = 0; i < N; ++i) z[i] = dg[i] * r[i];
    const double rz1 = cblas_ddot(static_cast<int>(N), r.data(), 1, z.data(), 1);
    const double beta = rz1 / rz;
    rz = rz1;
    for (int64_t i = 0; i < N; ++i) p[i] = z[i] + beta * p[i];
  }
}

// Small systems: assemble the projected matrix and factor it (exact local solve).
bool local_dense(const LocalOp& op, const Vec& f, Vec& X) {
  const int64_t N = op.size();
  Vec M(static_cast<std::size_t>(N * N)), e(static_cast<std::size_t>(N), 0.0), col(static_cast<std::size_t>(N));
  Vec T1, T2, T3;
  for (int64_t j = 0; j < N; ++j) {
    e[j] = 1.0;
    op.apply(e.data(), col.data(), T1, T2, T3);
    e[j] = 0.0;
    for (int64_t i = 0; i < N; ++i) M[i * N + j] = col[i];
  }
  for (int64_t i = 0; i < N; ++i)  // symmetrise away the round-off of the contractions
    for (int64_t j = i + 1; j < N; ++j) M[i * N + j] = M[j * N + i] = 0.5 * (M[i * N + j] + M[j * N + i]);
  Vec rhs = f;
  if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', N, 1, M.data(), N, rhs.data(), 1) != 0) return false;
  X.swap(rhs);
  return true;
}

}  // namespace

SolveReport solve_spd(const Mpo& A, const Mps& b, Mps& x, const SolveOptions& opt) {
  A.validate();
  b.validate();
  x.validate();
  if (A.modes != b.modes || x.modes != b.modes)
    throw InvalidArgument("solve_spd: operator, rhs and guess have different modes");
  if (!(opt.tol > 0 && opt.tol < 1)) throw InvalidArgument("solve_spd: tol must be in (0, 1)");
  const int d = x.d();
  SolveReport rep;
  if (d < 2) throw InvalidArgument("solve_spd: needs at least two cores");
  orthogonalize_right(x);

  std::vector<Vec> LA(d + 1), LB(d + 1), RA(d + 1), RB(d + 1);
  LA[0] = {1.0};
  LB[0] = {1.0};
  RA[d] = {1.0};
  RB[d] = {1.0};
  Vec S1, S2;

  // Right interfaces over cores >= k from core k (right-orthogonal) and those over cores > k.
  auto update_right = [&](int k) {
    const int64_t r = x.ranks[k], n = x.modes[k], rr = x.ranks[k + 1];
    const int64_t R1 = A.ranks[k], R2 = A.ranks[k + 1];
    const double* V = x.cores[k].data();
    const double* W = A.cores[k].data();
    // S1[(b', j), (w2, c)] = V[(b' j), c'] RA[c', (w2 c)]
    S1.resize(static_cast<std::size_t>(r * n * R2 * rr));
    gemm(false, false, r * n, R2 * rr, rr, V, RA[k + 1].data(), S1.data());
    // S2[b', w, i, c] = sum_{j, w2} S1[b', j, w2, c] W[w, i, j, w2]
    S2.assign(static_cast<std::size_t>(r * R1 * n * rr), 0.0);
    for (int64_t bp = 0; bp < r; ++bp)
      for (int64_t w = 0; w < R1; ++w)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            for (int64_t w2 = 0; w2 < R2; ++w2) {
              const double v = W[((w * n + i) * n + j) * R2 + w2];
              if (v == 0) continue;
              const double* src = &S1[((bp * n + j) * R2 + w2) * rr];
              double* dst = &S2[((bp * R1 + w) * n + i) * rr];
              for (int64_t c = 0; c < rr; ++c) dst[c] += v * src[c];
            }
    // RA[k][(b', w), b] = S2[(b' w), (i c)] V[b, (i c)]^T
    RA[k].resize(static_cast<std::size_t>(r * R1 * r));
    gemm(false, true, r * R1, r, n * rr, S2.data(), V, RA[k].data());
    // RB[k][b, c0] = sum V[b, i, c'] B[c0, i, c1] RB[c', c1]
    const int64_t rb0 = b.ranks[k], rb1 = b.ranks[k + 1];
    Vec T(static_cast<std::size_t>(r * n * rb1));
    gemm(false, false, r * n, rb1, rr, V, RB[k + 1].data(), T.data());
    RB[k].resize(static_cast<std::size_t>(r * rb0));
    gemm(false, true, r, rb0, n * rb1, T.data(), b.cores[k].data(), RB[k].data());
  };
  // Left interfaces over cores <= k from core k (left-orthogonal).
  auto update_left = [&](int k) {
    const int64_t rl = x.ranks[k], n = x.modes[k], r = x.ranks[k + 1];
    const int64_t R0 = A.ranks[k], R1 = A.ranks[k + 1];
    const double* U = x.cores[k].data();
    const double* W = A.cores[k].data();
    // S1[(c, w0), (j, a')] = LA[(c w0), c'] U[c', (j a')]
    S1.resize(static_cast<std::size_t>(rl * R0 * n * r));
    gemm(false, false, rl * R0, n * r, rl, LA[k].data(), U, S1.data());
    // S2[c, i, w, a'] = sum_{w0, j} S1[c, w0, j, a'] W[w0, i, j, w]
    S2.assign(static_cast<std::size_t>(rl * n * R1 * r), 0.0);
    for (int64_t c = 0; c < rl; ++c)
      for (int64_t w0 = 0; w0 < R0; ++w0)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            for (int64_t w = 0; w < R1; ++w) {
              const double v = W[((w0 * n + i) * n + j) * R1 + w];
              if (v == 0) continue;
              const double* src = &S1[((c * R0 + w0) * n + j) * r];
              double* dst = &S2[((c * n + i) * R1 + w) * r];
              for (int64_t a = 0; a < r; ++a) dst[a] += v * src[a];
            }
    // LA[k+1][a, (w, a')] = U[(c i), a]^T S2[(c i), (w a')]
    LA[k + 1].resize(static_cast<std::size_t>(r * R1 * r));
    gemm(true, false, r, R1 * r, rl * n, U, S2.data(), LA[k + 1].data());
    // LB[k+1][a, c1] = U[(c i), a]^T (LB[c, c0] B[c0, (i c1)])
    const int64_t rb0 = b.ranks[k], rb1 = b.ranks[k + 1];
    Vec T(static_cast<std::size_t>(rl * n * rb1));
    gemm(false, false, rl, n * rb1, rb0, LB[k].data(), b.cores[k].data(), T.data());
    LB[k + 1].resize(static_cast<std::size_t>(r * rb1));
    gemm(true, false, r, rb1, rl * n, U, T.data(), LB[k + 1].data());
  };

  for (int k = d - 1; k >= 2; --k) {
    detail::poll_point();
    update_right(k);
  }

  Vec X, f, Ax, T1, T2, T3, U, s, Vt;
  const double local_tol = opt.tol / 4;
  // Per direction and pair: the local residual that the pair's last split at max_rank left, when
  // it was more than 10 tol (0: none). Solving the pair far below it is work the split throws away.
  std::vector<double> cap_floor(static_cast<std::size_t>(2 * d), 0.0);
  for (int sweep = 0; sweep < opt.max_sweeps; ++sweep) {
    double worst = 0;
    double capped = 0;  // largest local residual left by a truncation to max_rank in this sweep
    for (int dir = 0; dir < 2; ++dir) {
      for (int step = 0; step + 1 < d; ++step) {
        const int k = (dir == 0) ? step : d - 2 - step;
        detail::poll_point();
        // (dir 1 starts on the pair dir 0 ended on: solved already, its residual check skips the
        // solve, but the split with the singular values moved left makes core k+1 right-orthogonal.)
        const int64_t rl = x.ranks[k], n = x.modes[k], rm = x.ranks[k + 1], rr = x.ranks[k + 2];
        const int64_t n2 = x.modes[k + 1];
        if (n2 != n) throw InvalidArgument("solve_spd: needs equal mode sizes");
        LocalOp op{rl,
                   n,
                   rr,
                   A.ranks[k],
                   A.ranks[k + 1],
                   A.ranks[k + 2],
                   LA[k].data(),
                   A.cores[k].data(),
                   A.cores[k + 1].data(),
                   RA[k + 2].data()};
        const int64_t N = op.size();
        X.resize(static_cast<std::size_t>(N));
        gemm(false, false, rl * n, n * rr, rm, x.cores[k].data(), x.cores[k + 1].data(), X.data());
        // f = LB[a, c0] B_k[c0, i1, c1] B_k+1[c1, i2, c2] RB[b, c2]
        {
          const int64_t b0 = b.ranks[k], b1 = b.ranks[k + 1], b2 = b.ranks[k + 2];
          Vec F1(static_cast<std::size_t>(rl * n * b1)), F2(static_cast<std::size_t>(rl * n * n * b2));
          gemm(false, false, rl, n * b1, b0, LB[k].data(), b.cores[k].data(), F1.data());
          gemm(false, false, rl * n, n * b2, b1, F1.data(), b.cores[k + 1].data(), F2.data());
          f.resize(static_cast<std::size_t>(N));
          gemm(false, true, rl * n * n, rr, b2, F2.data(), RB[k + 2].data(), f.data());
        }
        Ax.resize(static_cast<std::size_t>(N));
        op.apply(X.data(), Ax.data(), T1, T2, T3);
        const double fn = nrm2(f);
        double res = 0;
        for (int64_t i = 0; i < N; ++i) res += (f[i] - Ax[i]) * (f[i] - Ax[i]);
        res = fn > 0 ? std::sqrt(res) / fn : 0;
        worst = std::max(worst, res);
        double& pair_floor = cap_floor[static_cast<std::size_t>(dir * d + k)];
        // A tenth of the floor: enough that the split, not the solve, sets what the pair keeps.
        const double target = std::max(local_tol, 0.1 * pair_floor);
        double solved = res;  // local residual of the unsplit pair after the solve
        if (res > target) {
          // Exact (Cholesky) for the small systems, where ill-conditioned operators (Poisson) would
          // stall CG; CG from the current pair for the large ones.
          if (N > kDenseLocal || !local_dense(op, f, X)) local_cg(op, f, Ax, X, target, 400);
          op.apply(X.data(), Ax.data(), T1, T2, T3);
          double r2 = 0;
          for (int64_t i = 0; i < N; ++i) r2 += (f[i] - Ax[i]) * (f[i] - Ax[i]);
          solved = fn > 0 ? std::sqrt(r2) / fn : 0;
        }
        // The split may not lose more than the solve reached (a stalled local solve must not make
        // the truncation keep every rank).
        const double split_tol = std::max(0.5 * opt.tol, 1.5 * solved);
        // Split the pair. A Frobenius threshold alone would let an ill-conditioned A turn a small
        // truncation of X into a large residual, so the rank grows from the Frobenius choice until
        // the truncated pair still has local residual <= tol / 2 (residual-based truncation).
        detail::poll_point();  // the SVD of a 512 x 512 pair at rank 256 is a piece of its own
        detail::svd_rows(rl * n, n * rr, X.data(), U, s, Vt);
        const int64_t kk = static_cast<int64_t>(s.size());
        const double xn = nrm2(s);
        const double delta = 0.5 * opt.tol * xn / std::sqrt(static_cast<double>(d));
        int64_t r = detail::choose_rank(s.data(), kk, delta * delta, opt.max_rank).r;
        const int64_t r_cap = opt.max_rank > 0 ? std::min(kk, opt.max_rank) : kk;
        Vec Xr(static_cast<std::size_t>(N)), SV;
        // ||f - A_loc X_r|| of the pair truncated to `rank`.
        auto truncated_residual = [&](int64_t rank) {
          detail::poll_point();
          SV.assign(static_cast<std::size_t>(rank * n * rr), 0.0);
          for (int64_t i = 0; i < rank; ++i)
            for (int64_t j = 0; j < n * rr; ++j) SV[i * n * rr + j] = s[i] * Vt[i * n * rr + j];
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rl * n, n * rr, rank, 1.0, U.data(), kk, SV.data(),
                      n * rr, 0.0, Xr.data(), n * rr);
          op.apply(Xr.data(), Ax.data(), T1, T2, T3);
          double rt = 0;
          for (int64_t i = 0; i < N; ++i) rt += (f[i] - Ax[i]) * (f[i] - Ax[i]);
          return std::sqrt(rt);
        };
        while (r < r_cap && fn > 0) {
          if (truncated_residual(r) <= split_tol * fn) break;
          r = std::min(r_cap, r + std::max<int64_t>(1, r / 4));
        }
        // A split held at the rank cap: the local residual it leaves is where the next sweep starts
        // on this pair, however well the pair was solved.
        if (r == r_cap && r < kk && fn > 0) {
          const double kept = truncated_residual(r) / fn;
          if (kept > split_tol) capped = std::max(capped, kept);
          pair_floor = kept > 10 * opt.tol ? kept : 0.0;
        } else {
          pair_floor = 0;
        }
        Vec left(static_cast<std::size_t>(rl * n * r)), right(static_cast<std::size_t>(r * n * rr));
        for (int64_t i = 0; i < rl * n; ++i)
          for (int64_t j = 0; j < r; ++j) left[i * r + j] = U[i * kk + j] * (dir == 1 ? s[j] : 1.0);
        for (int64_t i = 0; i < r; ++i)
          for (int64_t j = 0; j < n * rr; ++j) right[i * n * rr + j] = Vt[i * n * rr + j] * (dir == 0 ? s[i] : 1.0);
        x.cores[k].swap(left);
        x.cores[k + 1].swap(right);
        x.ranks[k + 1] = r;
        if (dir == 0) {
          update_left(k);
        } else {
          update_right(k + 1);
        }
      }
    }
    rep.sweeps = sweep + 1;
    const double before = rep.residual;
    rep.residual = worst;
    if (worst <= opt.tol) {
      rep.converged = true;
      break;
    }
    // Stagnation: the rank cap (or the local solver's limit) keeps the residual where it is; more
    // sweeps would only cost time.
    if (sweep > 0 && worst > 0.7 * before) break;
    // The same, seen one sweep sooner: the truncations to max_rank alone left local residuals of
    // 70% of where this sweep started, so the next sweep (which starts from them) cannot cut it by 30%.
    if (capped > 0.7 * worst) break;
  }
  return rep;
}

}  // namespace tts::qtt
