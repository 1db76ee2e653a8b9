// One MPO core applied to the middle indices of a block (operator_core.hpp), two ways:
//
// - sparse: one axpy of length s1 per nonzero of W, for the stencils (shifts, derivatives,
//   Laplacians: a few nonzeros per core);
// - dense: the block transposed to [j, w, (r, s)], then one GEMM per (i, j) slice of W that has a
//   nonzero, W_ij^T [R1 x R0] times [R0 x rr s1], and the result transposed back. For the cores
//   that carry most of the work: Hadamard products (diag(y): two dense slices of four) and the
//   periodic convolution of navier_stokes_2d's projection (rank ~170, a quarter of each slice
//   nonzero). A GEMM runs near the core's peak where the axpys are bound by the cache, so it wins
//   even with the convolution's zeros multiplied; the choice is by density (see below).
#include <algorithm>
#include <cstring>

#include "qtt/operator_core.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/threads.hpp"

namespace tts::detail {

namespace {

void apply_sparse(int64_t rr, int64_t R0, int64_t n, int64_t R1, int64_t s1, const std::vector<double>& in,
                  const std::vector<double>& W, int64_t nnz, std::vector<double>& out) {
  // A team only for millions of multiply-adds: a Laplacian core (rank 5) at ranks 64-96 applies in
  // 24-84 us serially, 40-102 us with a team of 2 (best of 200 here), whose idle thread then spins
  // beside OpenBLAS's. Before, the threshold counted all R0 n² R1 entries, not the nonzeros.
#pragma omp parallel for num_threads(threads()) schedule(static) if (rr * nnz * s1 > (int64_t{1} << 22))
  for (int64_t r = 0; r < rr; ++r) {
    for (int64_t w = 0; w < R0; ++w) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t w1 = 0; w1 < R1; ++w1) {
            const double v = W[((w * n + i) * n + j) * R1 + w1];
            if (v == 0) continue;
            const double* src = &in[((r * R0 + w) * n + j) * s1];
            double* dst = &out[((r * n + i) * R1 + w1) * s1];
            for (int64_t b = 0; b < s1; ++b) dst[b] += v * src[b];
          }
        }
      }
    }
  }
}

// The nonzero blocks of W's (i, j) slices on a g x g grid of [R0 / g] x [R1 / g] blocks.
struct BlockGrid {
  int64_t g = 1;
  std::vector<char> live;  // [i, j, p, q]
  int64_t count = 0;       // live blocks
};

// One pass over W: the grid of g blocks a side, and W's nonzeros.
BlockGrid block_grid(int64_t R0, int64_t n, int64_t R1, const std::vector<double>& W, int64_t g, int64_t& nnz) {
  BlockGrid b;
  b.g = g;
  b.live.assign(static_cast<std::size_t>(n * n * g * g), 0);
  const int64_t b0 = R0 / g, b1 = R1 / g;
  nnz = 0;
  for (int64_t w = 0; w < R0; ++w) {
    for (int64_t ij = 0; ij < n * n; ++ij) {
      const double* p = &W[(w * n * n + ij) * R1];
      for (int64_t w1 = 0; w1 < R1; ++w1) {
        if (p[w1] != 0) {
          b.live[(ij * g + w / b0) * g + w1 / b1] = 1;
          ++nnz;
        }
      }
    }
  }
  for (char l : b.live) b.count += l;
  return b;
}

// The same grid with g blocks a side, g dividing fine.g: a block is live when any of its parts is.
BlockGrid coarsen(const BlockGrid& fine, int64_t n, int64_t g) {
  BlockGrid b;
  b.g = g;
  b.live.assign(static_cast<std::size_t>(n * n * g * g), 0);
  const int64_t f = fine.g / g;
  for (int64_t ij = 0; ij < n * n; ++ij) {
    for (int64_t p = 0; p < fine.g; ++p) {
      for (int64_t q = 0; q < fine.g; ++q) {
        if (fine.live[(ij * fine.g + p) * fine.g + q]) b.live[(ij * g + p / f) * g + q / f] = 1;
      }
    }
  }
  for (char l : b.live) b.count += l;
  return b;
}

void apply_dense(int64_t rr, int64_t R0, int64_t n, int64_t R1, int64_t s1, const std::vector<double>& in,
                 const std::vector<double>& W, const BlockGrid& grid, std::vector<double>& out) {
  const int64_t cols = rr * s1;
  const std::size_t row = static_cast<std::size_t>(s1) * sizeof(double);
  // in_t[j, w, r, b] = in[r, w, j, b]
  std::vector<double> in_t(static_cast<std::size_t>(n * R0 * cols));
  for (int64_t r = 0; r < rr; ++r) {
    for (int64_t w = 0; w < R0; ++w) {
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(&in_t[((j * R0 + w) * rr + r) * s1], &in[((r * R0 + w) * n + j) * s1], row);
      }
    }
  }
  // out_t[i, w1, r, b] = sum_j W_ij^T in_t[j], by blocks of the g x g grid of each slice
  std::vector<double> out_t(static_cast<std::size_t>(n * R1 * cols), 0.0);
  const int64_t g = grid.g, b0 = R0 / g, b1 = R1 / g;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < g; ++p) {
        for (int64_t q = 0; q < g; ++q) {
          if (!grid.live[((i * n + j) * g + p) * g + q]) continue;
          cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, b1, cols, b0, 1.0,
                      &W[(p * b0 * n * n + i * n + j) * R1 + q * b1], n * n * R1, &in_t[(j * R0 + p * b0) * cols], cols,
                      1.0, &out_t[(i * R1 + q * b1) * cols], cols);
        }
      }
    }
  }
  for (int64_t r = 0; r < rr; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t w1 = 0; w1 < R1; ++w1) {
        std::memcpy(&out[((r * n + i) * R1 + w1) * s1], &out_t[((i * R1 + w1) * rr + r) * s1], row);
      }
    }
  }
}

}  // namespace

void apply_operator_core(int64_t rr, int64_t R0, int64_t n, int64_t R1, int64_t s1, const std::vector<double>& in,
                         const std::vector<double>& W, std::vector<double>& out) {
  out.assign(static_cast<std::size_t>(rr * n * R1 * s1), 0.0);
  // The nonzeros decide: the dense path does b0 b1 multiply-adds per live block and column where
  // the sparse one does one per nonzero, at a fraction of the GEMM's rate (on this AVX-512 machine,
  // 2 cores: a quarter-dense convolution core of rank 156 x 116 applies 2.0-2.4x faster as
  // whole-slice GEMMs than as axpys, a Hadamard product's rank-64 core 4.7-12x).
  // Blocks: with rr s1 >= 1024 columns, the grid of 2, 4 or 8 blocks a side that divides both ranks
  // and leaves the fewest multiply-adds. The periodic convolution's bonds are (borrows, kernel
  // bond), borrow-major, so on a 2^dims grid each slice has one kernel-core block per borrow column,
  // a quarter of the slice in 2-D: at 96 x 64 columns its core applies 1.6x faster by blocks than
  // by whole slices; at 64 columns the small GEMMs made it 2x slower, hence the threshold.
  int64_t finest = 1;
  for (int64_t g : {2, 4, 8}) {
    if (rr * s1 < 1024 || R0 % g != 0 || R1 % g != 0) break;
    finest = g;
  }
  int64_t nnz = 0;
  const BlockGrid fine = block_grid(R0, n, R1, W, finest, nnz);
  BlockGrid best = fine;
  for (int64_t g = finest / 2; g >= 1; g /= 2) {
    BlockGrid b = coarsen(fine, n, g);
    if (b.count * (R0 / g) * (R1 / g) <= best.count * (R0 / best.g) * (R1 / best.g)) best = std::move(b);
  }
  const int64_t work = best.count * (R0 / best.g) * (R1 / best.g);
  const bool dense = R0 >= 8 && R1 >= 8 && rr * s1 >= 32 && 6 * nnz >= work;
  if (dense) {
    apply_dense(rr, R0, n, R1, s1, in, W, best, out);
  } else {
    apply_sparse(rr, R0, n, R1, s1, in, W, nnz, out);
  }
}

}  // namespace tts::detail
