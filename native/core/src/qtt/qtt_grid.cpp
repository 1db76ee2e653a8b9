// Fields on the interleaved QTT grid: dense <-> QTT for small grids, separable fields built from
// 1-D factors without ever forming the D-dimensional array, and the sum of all elements.
#include <string>

#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

namespace {

QttLayout grid_layout(const Grid& g) {
  QttLayout l = make_layout(g.shape(), LayoutKind::Interleaved);
  if (static_cast<int>(l.modes.size()) != g.d()) throw InvalidArgument("qtt grid: layout mismatch");
  return l;
}

// A 1-D train (n_bits cores) placed on one axis of the grid: the other axes' cores carry its bond
// unchanged and are constant in their own bit.
Mps embed_axis(const Grid& g, const Mps& f, int axis) {
  Mps x;
  const int d = g.d();
  x.modes.assign(static_cast<std::size_t>(d), 2);
  x.ranks.assign(static_cast<std::size_t>(d + 1), 1);
  for (int k = 0; k < d; ++k) {
    const int l = k / g.dims, j = k % g.dims;
    // Bond after core k: the 1-D bond after level l when axis j' <= k's axis reached level l.
    const int done_levels = (j >= axis) ? l + 1 : l;
    x.ranks[k + 1] = (k == d - 1) ? 1 : f.ranks[done_levels];
    if (j == axis) {
      x.cores.push_back(f.cores[l]);
    } else {
      const int64_t r = x.ranks[k];
      std::vector<double> c(static_cast<std::size_t>(r * 2 * r), 0.0);
      for (int64_t a = 0; a < r; ++a) {
        c[(a * 2 + 0) * r + a] = 1.0;
        c[(a * 2 + 1) * r + a] = 1.0;
      }
      x.cores.push_back(std::move(c));
    }
  }
  return x;
}

}  // namespace

Mps from_dense(const Grid& g, const std::vector<double>& a, double tol) {
  const QttLayout l = grid_layout(g);
  if (static_cast<int64_t>(a.size()) != l.numel()) throw InvalidArgument("from_dense: wrong number of values");
  SvdOptions o;
  o.tol = tol;
  return qtt_svd(ArrayView{a.data(), DType::F64, l.numel()}, l, o);
}

std::vector<double> to_dense(const Grid& g, const Mps& x) {
  const QttLayout l = grid_layout(g);
  std::vector<double> out(static_cast<std::size_t>(l.numel()));
  reconstruct(x, l, MutableArrayView{out.data(), DType::F64, l.numel()}, ArrayView{});
  return out;
}

Mps separable(const Grid& g, const std::vector<std::vector<double>>& factors, double tol) {
  if (static_cast<int>(factors.size()) != g.dims) throw InvalidArgument("separable: one factor per axis");
  const Grid line{1, g.n_bits};
  SvdOptions o;
  o.tol = tol;
  Mps out;
  for (int j = 0; j < g.dims; ++j) {
    Mps f = from_dense(line, factors[j], tol);
    Mps e = embed_axis(g, f, j);
    // The product of single-axis fields: ranks multiply only across the bonds both axes cross.
    out = (j == 0) ? e : hadamard(out, e, o);
  }
  return out;
}

double total(const Mps& x) {
  std::vector<double> v{1.0}, next;
  for (int k = 0; k < x.d(); ++k) {
    const int64_t r0 = x.ranks[k], n = x.modes[k], r1 = x.ranks[k + 1];
    next.assign(static_cast<std::size_t>(r1), 0.0);
    for (int64_t a = 0; a < r0; ++a) {
      for (int64_t i = 0; i < n; ++i) {
        const double* row = &x.cores[k][(a * n + i) * r1];
        for (int64_t b = 0; b < r1; ++b) next[b] += v[a] * row[b];
      }
    }
    v.swap(next);
  }
  return v[0];
}

}  // namespace tts::qtt
