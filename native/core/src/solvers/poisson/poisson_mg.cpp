#include "ttstore/internal/poisson_mg.hpp"

#include <lapacke.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/threads.hpp"

namespace tts::sim::detail {

namespace {

// Below this many points per axis a level is too small to share between threads.
constexpr int64_t kParallelRows = 128;

// body(lo, hi) over the rows of an n x n level in pieces (poll_point.hpp): a pass over a 16384²
// level is seconds, a piece tens of milliseconds.
template <typename Body>
void level_rows(int64_t rows, int64_t n, Body&& body) {
  tts::detail::in_pieces(rows, tts::detail::rows_per_piece(n, tts::detail::kPiecePoints), body);
}
// The coarsest level is solved exactly (dense Cholesky) once it has at most this many points per axis.
constexpr int64_t kCoarsest = 8;

// Row kernels. `up`/`dn` are the neighbouring rows (a zero row at the boundary), `di` the row's own
// axis diagonal, `dg` the column axis diagonals.
struct Row {
  const double* up;
  const double* x;
  const double* dn;
  double di;
  const double* dg;
  int64_t n;

  double neighbours(int64_t j) const {
    double s = up[j] + dn[j];
    if (j > 0) s += x[j - 1];
    if (j + 1 < n) s += x[j + 1];
    return s;
  }
};

}  // namespace

double GridOp::axis_diag(int64_t k) const {
  if (n == 1) return 2.0 / delta;
  return (k == 0 || k == n - 1) ? 1.0 + 1.0 / delta : 2.0;
}

// The three kernels share the row set-up: the zero row stands in for the rows beyond the boundary.
#define TTS_GRID_ROW(xptr)           \
  const double* xi = (xptr) + i * n; \
  const Row row { i > 0 ? xi - n : zero.data(), xi, i + 1 < n ? xi + n : zero.data(), dg[i], dg.data(), n }

double GridOp::apply(const double* x, double* y) const {
  const double s = 1.0 / (h * h);
  std::vector<double> dg(n), zero(n, 0.0);
  for (int64_t k = 0; k < n; ++k) dg[k] = axis_diag(k);
  double dot = 0;
  level_rows(n, n, [&](int64_t first, int64_t end) {
    double piece = 0;
#pragma omp parallel for schedule(static) reduction(+ : piece) num_threads(tts::detail::threads()) if (n >= kParallelRows)
    for (int64_t i = first; i < end; ++i) {
      TTS_GRID_ROW(x);
      double* yi = y + i * n;
      double d = 0;
      yi[0] = s * ((row.di + dg[0]) * xi[0] - row.neighbours(0));
      const double c = row.di + 2.0;
      for (int64_t j = 1; j + 1 < n; ++j) {
        yi[j] = s * (c * xi[j] - row.up[j] - row.dn[j] - xi[j - 1] - xi[j + 1]);
      }
      if (n > 1) yi[n - 1] = s * ((row.di + dg[n - 1]) * xi[n - 1] - row.neighbours(n - 1));
      for (int64_t j = 0; j < n; ++j) d += xi[j] * yi[j];
      piece += d;
    }
    dot += piece;
  });
  return dot;
}

double GridOp::residual(const double* b, const double* x, double* r) const {
  const double s = 1.0 / (h * h);
  std::vector<double> dg(n), zero(n, 0.0);
  for (int64_t k = 0; k < n; ++k) dg[k] = axis_diag(k);
  double norm2 = 0;
  level_rows(n, n, [&](int64_t first, int64_t end) {
    double piece = 0;
#pragma omp parallel for schedule(static) reduction(+ : piece) num_threads(tts::detail::threads()) if (n >= kParallelRows)
    for (int64_t i = first; i < end; ++i) {
      TTS_GRID_ROW(x);
      const double* bi = b + i * n;
      double* ri = r + i * n;
      ri[0] = bi[0] - s * ((row.di + dg[0]) * xi[0] - row.neighbours(0));
      const double c = row.di + 2.0;
      for (int64_t j = 1; j + 1 < n; ++j) {
        ri[j] = bi[j] - s * (c * xi[j] - row.up[j] - row.dn[j] - xi[j - 1] - xi[j + 1]);
      }
      if (n > 1) ri[n - 1] = bi[n - 1] - s * ((row.di + dg[n - 1]) * xi[n - 1] - row.neighbours(n - 1));
      double d = 0;
      for (int64_t j = 0; j < n; ++j) d += ri[j] * ri[j];
      piece += d;
    }
    norm2 += piece;
  });
  return norm2;
}

void GridOp::relax(const double* b, double* x, int colour) const {
  const double h2 = h * h;
  std::vector<double> dg(n), zero(n, 0.0);
  for (int64_t k = 0; k < n; ++k) dg[k] = axis_diag(k);
  level_rows(n, n, [&](int64_t first, int64_t end) {
#pragma omp parallel for schedule(static) num_threads(tts::detail::threads()) if (n >= kParallelRows)
    for (int64_t i = first; i < end; ++i) {
      TTS_GRID_ROW(x);
      double* xw = x + i * n;
      const double* bi = b + i * n;
      auto point = [&](int64_t j) { xw[j] = (h2 * bi[j] + row.neighbours(j)) / (row.di + dg[j]); };
      int64_t j = (colour + i) % 2;
      if (j == 0) {
        point(0);
        j = 2;
      }
      const double inv = 1.0 / (row.di + 2.0);
      for (; j + 1 < n; j += 2) xw[j] = (h2 * bi[j] + row.up[j] + row.dn[j] + xw[j - 1] + xw[j + 1]) * inv;
      if (j == n - 1) point(j);
    }
  });
}

#undef TTS_GRID_ROW

void GridOp::relax_from_zero(const double* b, double* x, int colour) const {
  const double h2 = h * h;
  std::vector<double> dg(n);
  for (int64_t k = 0; k < n; ++k) dg[k] = axis_diag(k);
  level_rows(n, n, [&](int64_t first, int64_t end) {
#pragma omp parallel for schedule(static) num_threads(tts::detail::threads()) if (n >= kParallelRows)
    for (int64_t i = first; i < end; ++i) {
      double* xw = x + i * n;
      const double* bi = b + i * n;
      // Rounded as relax rounds: a multiply by the reciprocal inside the row, a division at its ends.
      const double inv = 1.0 / (dg[i] + 2.0);
      for (int64_t j = (colour + i) % 2; j < n; j += 2) {
        xw[j] = j > 0 && j + 1 < n ? h2 * bi[j] * inv : h2 * bi[j] / (dg[i] + dg[j]);
      }
    }
  });
}

Multigrid::Multigrid(int64_t n, int sweeps) : sweeps_(sweeps) {
  if (n < 1 || (n & (n - 1)) != 0) throw std::invalid_argument("multigrid needs 2^k points per axis");
  GridOp op{n, 1.0 / static_cast<double>(n + 1), 1.0};
  for (;;) {
    Level L;
    L.op = op;
    const bool coarsest = op.n <= kCoarsest;
    if (!levels_.empty()) {
      L.b.resize(op.n * op.n);
      L.x.resize(op.n * op.n);
    }
    if (!coarsest) L.r.resize(op.n * op.n);
    levels_.push_back(std::move(L));
    if (coarsest) break;
    op = GridOp{op.n / 2, 2 * op.h, (op.delta + 0.5) / 2};
  }
  // Dense operator of the coarsest level, factored once.
  const GridOp& c = levels_.back().op;
  const int64_t m = c.n * c.n;
  const double s = 1.0 / (c.h * c.h);
  chol_.assign(m * m, 0.0);
  for (int64_t i = 0; i < c.n; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const int64_t p = i * c.n + j;
      chol_[p * m + p] = s * (c.axis_diag(i) + c.axis_diag(j));
      if (i > 0) chol_[p * m + p - c.n] = -s;
      if (i + 1 < c.n) chol_[p * m + p + c.n] = -s;
      if (j > 0) chol_[p * m + p - 1] = -s;
      if (j + 1 < c.n) chol_[p * m + p + 1] = -s;
    }
  }
  const lapack_int info =
      LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', static_cast<lapack_int>(m), chol_.data(), static_cast<lapack_int>(m));
  if (info != 0)
    throw std::runtime_error("multigrid: coarsest operator not positive definite (" + std::to_string(info) + ")");
}

std::size_t Multigrid::bytes() const {
  std::size_t b = sizeof(double) * chol_.size();
  for (const Level& L : levels_) b += sizeof(double) * (L.b.size() + L.x.size() + L.r.size());
  return b;
}

void Multigrid::coarse_solve(const double* b, double* x) const {
  const GridOp& c = levels_.back().op;
  const lapack_int m = static_cast<lapack_int>(c.n * c.n);
  std::copy(b, b + m, x);
  const lapack_int info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', m, 1, chol_.data(), m, x, m);
  if (info != 0) throw std::runtime_error("multigrid: coarse solve failed (" + std::to_string(info) + ")");
}

void Multigrid::apply(const double* r, double* z) { cycle(0, r, z); }

void Multigrid::cycle(std::size_t l, const double* b, double* x) {
  Level& L = levels_[l];
  if (l + 1 == levels_.size()) {
    coarse_solve(b, x);
    return;
  }
  // From x = 0: the first half sweep reads only zeros, so it needs no zeroed x.
  const int64_t n = L.op.n;
  if (sweeps_ > 0) {
    L.op.relax_from_zero(b, x, 0);
    L.op.relax(b, x, 1);
  } else {
    std::fill(x, x + n * n, 0.0);
  }
  for (int s = 1; s < sweeps_; ++s) {
    L.op.relax(b, x, 0);
    L.op.relax(b, x, 1);
  }
  L.op.residual(b, x, L.r.data());
  Level& C = levels_[l + 1];
  restrict_to(l, L.r.data(), C.b.data());
  cycle(l + 1, C.b.data(), C.x.data());
  prolong_add(l, C.x.data(), x);
  for (int s = 0; s < sweeps_; ++s) {
    L.op.relax(b, x, 1);
    L.op.relax(b, x, 0);
  }
}

// 1-D interpolation: fine point 2I sits a quarter coarse spacing before coarse point I, 2I+1 a
// quarter after; the end points interpolate towards zero at the boundary with weight `wb`.
void Multigrid::restrict_to(std::size_t l, const double* fine, double* coarse) const {
  const int64_t nf = levels_[l].op.n, nc = nf / 2;
  const double wb = levels_[l].op.delta / (levels_[l].op.delta + 0.5);
  level_rows(nc, nf, [&](int64_t first, int64_t end) {
#pragma omp parallel num_threads(tts::detail::threads()) if (nf >= kParallelRows)
    {
      std::vector<double> t(nf);
#pragma omp for schedule(static)
      for (int64_t I = first; I < end; ++I) {
        // rows of P^T: (2I-1, 1/4), (2I, 3/4 | wb), (2I+1, 3/4 | wb), (2I+2, 1/4)
        const double w0 = I == 0 ? wb : 0.75, w1 = I == nc - 1 ? wb : 0.75;
        const double* a = fine + (2 * I) * nf;
        const double* b = a + nf;
        for (int64_t j = 0; j < nf; ++j) t[j] = w0 * a[j] + w1 * b[j];
        if (I > 0) {
          const double* m = a - nf;
          for (int64_t j = 0; j < nf; ++j) t[j] += 0.25 * m[j];
        }
        if (I + 1 < nc) {
          const double* p = b + nf;
          for (int64_t j = 0; j < nf; ++j) t[j] += 0.25 * p[j];
        }
        double* c = coarse + I * nc;
        for (int64_t J = 0; J < nc; ++J) {
          double v = (J == 0 ? wb : 0.75) * t[2 * J] + (J == nc - 1 ? wb : 0.75) * t[2 * J + 1];
          if (J > 0) v += 0.25 * t[2 * J - 1];
          if (J + 1 < nc) v += 0.25 * t[2 * J + 2];
          c[J] = 0.25 * v;
        }
      }
    }
  });
}

void Multigrid::prolong_add(std::size_t l, const double* coarse, double* fine) const {
  const int64_t nf = levels_[l].op.n, nc = nf / 2;
  const double wb = levels_[l].op.delta / (levels_[l].op.delta + 0.5);
  level_rows(nf, nf, [&](int64_t first, int64_t end) {
#pragma omp parallel num_threads(tts::detail::threads()) if (nf >= kParallelRows)
    {
      std::vector<double> c(nc);
#pragma omp for schedule(static)
      for (int64_t a = first; a < end; ++a) {
        const int64_t I = a / 2;
        const bool even = a % 2 == 0;
        const int64_t other = even ? I - 1 : I + 1;  // the second coarse row, when inside the grid
        const bool has_other = other >= 0 && other < nc;
        const double w = has_other ? 0.75 : wb;
        const double* p = coarse + I * nc;
        if (has_other) {
          const double* q = coarse + other * nc;
          for (int64_t J = 0; J < nc; ++J) c[J] = w * p[J] + 0.25 * q[J];
        } else {
          for (int64_t J = 0; J < nc; ++J) c[J] = w * p[J];
        }
        double* f = fine + a * nf;
        for (int64_t J = 0; J < nc; ++J) {
          f[2 * J] += J > 0 ? 0.75 * c[J] + 0.25 * c[J - 1] : wb * c[0];
          f[2 * J + 1] += J + 1 < nc ? 0.75 * c[J] + 0.25 * c[J + 1] : wb * c[J];
        }
      }
    }
  });
}

}  // namespace tts::sim::detail
