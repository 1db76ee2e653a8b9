// CPU twins of the CUDA kernels (plain loops, float64, no BLAS): each computes exactly what its
// kernel computes, and HostOps runs the sweep driver on them so the driver is tested everywhere.
#include <algorithm>
#include <cmath>

#include "sweep.hpp"
#include "ttstore/internal/dtype_io.hpp"

namespace tts::cuda::detail {

void gram_ref(const double* C, int64_t m, int64_t K, double* G) {
  for (int64_t a = 0; a < m; ++a) {
    for (int64_t b = a; b < m; ++b) {
      double s = 0;
      const double* x = C + a * K;
      const double* y = C + b * K;
      for (int64_t c = 0; c < K; ++c) s += x[c] * y[c];
      G[a * m + b] = G[b * m + a] = s;
    }
  }
}

void project_ref(const double* C, int64_t m, int64_t K, const double* Ut, int64_t r, double* out, double* energy) {
  if (energy) std::fill(energy, energy + r, 0.0);
  for (int64_t i = 0; i < r; ++i) {
    double e = 0;
    for (int64_t c = 0; c < K; ++c) {
      double s = 0;
      for (int64_t j = 0; j < m; ++j) s += Ut[i * m + j] * C[j * K + c];
      out[i * K + c] = s;
      e += s * s;
    }
    if (energy) energy[i] = e;
  }
}

FusedSums reconstruct_ref(const double* L, const double* R, int64_t nL, int64_t nR, int64_t rp, const int64_t* hi,
                          const int64_t* lo, DType dtype, void* out, const void* ref) {
  FusedSums s;
  const std::size_t sz = dtype_size(dtype);
  tts::detail::dispatch(dtype, [&](auto e) {
    using E = decltype(e);
    for (int64_t i = 0; i < nL; ++i) {
      for (int64_t j = 0; j < nR; ++j) {
        double y = 0;
        for (int64_t k = 0; k < rp; ++k) y += L[i * rp + k] * R[k * nR + j];
        const std::size_t off = static_cast<std::size_t>(hi[i] + lo[j]) * sz;
        if (out) {
          E::store(static_cast<unsigned char*>(out) + off, y);
          y = E::load(static_cast<unsigned char*>(out) + off);
        } else {
          y = E::cast_value(y);
        }
        if (ref) {
          const double x = E::load(static_cast<const unsigned char*>(ref) + off);
          s.err_sq += (x - y) * (x - y);
          s.ref_sq += x * x;
          s.max_abs = std::max(s.max_abs, std::fabs(x - y));
        }
      }
    }
    return 0;
  });
  return s;
}

double dot_ref(const std::vector<int64_t>& modes, const std::vector<int64_t>& q_ranks, const double* q_cores,
               const std::vector<int64_t>& c_ranks, const void* c_cores, bool c_f32) {
  std::vector<double> M{1.0}, T, next;
  int64_t qo = 0, co = 0;
  for (std::size_t k = 0; k < modes.size(); ++k) {
    const int64_t n = modes[k], a0 = q_ranks[k], a1 = q_ranks[k + 1], b0 = c_ranks[k], b1 = c_ranks[k + 1];
    auto C = [&](int64_t b, int64_t i, int64_t bb) {
      const int64_t at = co + (b * n + i) * b1 + bb;
      return c_f32 ? static_cast<double>(static_cast<const float*>(c_cores)[at])
                   : static_cast<const double*>(c_cores)[at];
    };
    next.assign(static_cast<std::size_t>(a1 * b1), 0.0);
    T.assign(static_cast<std::size_t>(a0 * b1), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t x = 0; x < a0; ++x) {  // T = M_{k-1} C_k[:, i, :]
        for (int64_t y = 0; y < b1; ++y) {
          double s = 0;
          for (int64_t b = 0; b < b0; ++b) s += M[x * b0 + b] * C(b, i, y);
          T[x * b1 + y] = s;
        }
      }
      for (int64_t x = 0; x < a1; ++x) {  // next += Q_k[:, i, :]^T T
        for (int64_t y = 0; y < b1; ++y) {
          double s = 0;
          for (int64_t a = 0; a < a0; ++a) s += q_cores[qo + (a * n + i) * a1 + x] * T[a * b1 + y];
          next[x * b1 + y] += s;
        }
      }
    }
    M.swap(next);
    qo += a0 * n * a1;
    co += b0 * n * b1;
  }
  return M[0];
}

namespace {

class HostOps final : public SweepOps {
 public:
  HostOps(const ArrayView& a, const QttLayout& layout) : a_(a), layout_(layout) {}

  double load(int64_t* first_bad) override {
    const OffsetTables T = offsets_split(layout_);
    W_.resize(static_cast<std::size_t>(a_.numel));
    const auto* src = static_cast<const unsigned char*>(a_.data);
    const std::size_t sz = dtype_size(a_.dtype);
    double sumsq = 0;
    int64_t bad = -1;
    tts::detail::dispatch(a_.dtype, [&](auto e) {
      using E = decltype(e);
      for (int64_t h = 0; h < T.n_hi; ++h) {
        for (int64_t j = 0; j < T.n_lo; ++j) {
          const int64_t off = T.hi[h] + T.lo[j];
          const double v = E::load(src + static_cast<std::size_t>(off) * sz);
          W_[h * T.n_lo + j] = v;
          sumsq += v * v;
          if (!std::isfinite(v) && (bad < 0 || off < bad)) bad = off;
        }
      }
      return 0;
    });
    *first_bad = bad;
    return sumsq;
  }
  double max_abs(int64_t n) override {
    double m = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(W_[i]));
    return m;
  }
  void scale(int64_t n, double f) override {
    for (int64_t i = 0; i < n; ++i) W_[i] *= f;
  }
  void gram(int64_t m, int64_t K, double* G) override { gram_ref(W_.data(), m, K, G); }
  void project(int64_t m, int64_t K, const double* Ut, int64_t r, double* energy) override {
    std::vector<double> out(static_cast<std::size_t>(r * K));
    project_ref(W_.data(), m, K, Ut, r, out.data(), energy);
    std::copy(out.begin(), out.end(), W_.begin());
  }
  void download(int64_t n, double* host) override { std::copy(W_.begin(), W_.begin() + n, host); }
  void release_work() override { std::vector<double>().swap(W_); }
  Fingerprint fingerprint(const TensorTrain& tt) override { return tts::fingerprint(tt, layout_, a_); }

 private:
  ArrayView a_;
  QttLayout layout_;
  std::vector<double> W_;
};

}  // namespace

std::unique_ptr<SweepOps> host_ops(const ArrayView& a, const QttLayout& layout) {
  return std::make_unique<HostOps>(a, layout);
}

}  // namespace tts::cuda::detail
