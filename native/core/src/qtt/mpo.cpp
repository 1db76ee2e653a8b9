// Matrix product operators on the interleaved QTT grid: the shift-based stencils (identity, shifts,
// central differences, Laplacians) built explicitly at their exact low rank.
//
// Adding c in {-1, +1} to a binary index works from the least significant bit up: each bit becomes
// (bit + carry) mod 2 and passes floor((bit + carry) / 2) to the next bit. With the most significant
// bit first, the carry flows right to left, so the bond between cores holds the carry that the
// lower bits produced: "none" or the carry/borrow of one axis. In the interleaved order an axis'
// carry passes the other axes' cores unchanged. That gives rank 1 + (number of shifted terms): 2 for
// a shift, 3 for a central difference or a 1-D Laplacian, 5 and 7 for the 2-D and 3-D Laplacians.
// A periodic grid keeps the carry out of the top bit (wrap-around); a Dirichlet grid drops it (the
// shifted index left the grid: the zero boundary value).
#include <algorithm>
#include <cmath>
#include <string>

#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

int64_t Mpo::max_rank() const { return ranks.empty() ? 0 : *std::max_element(ranks.begin(), ranks.end()); }

void Mpo::validate() const {
  const int n = d();
  if (n < 1 || static_cast<int>(ranks.size()) != n + 1 || static_cast<int>(cores.size()) != n) {
    throw InvalidArgument("mpo: needs d cores and d + 1 ranks");
  }
  if (ranks[0] != 1 || ranks[n] != 1) throw InvalidArgument("mpo: boundary ranks must be 1");
  for (int k = 0; k < n; ++k) {
    if (static_cast<int64_t>(cores[k].size()) != ranks[k] * modes[k] * modes[k] * ranks[k + 1]) {
      throw InvalidArgument("mpo: core " + std::to_string(k) + " has the wrong size");
    }
  }
}

std::vector<int64_t> Grid::shape() const { return std::vector<int64_t>(static_cast<std::size_t>(dims), side()); }

namespace {

void check_grid(const Grid& g) {
  if (g.dims < 1 || g.dims > 3) throw InvalidArgument("qtt grid: dims must be 1, 2 or 3");
  if (g.n_bits < 1 || g.n_bits > 20) throw InvalidArgument("qtt grid: n_bits must be in 1..20");
}

// Bond state: 0 = no carry; otherwise (axis, carry) for the terms with a non-zero coefficient.
struct Carry {
  int axis;
  int c;  // +1 or -1: what is added to the input index (i_out + 2 c_out = i_in + c)
};

}  // namespace

Mpo stencil(const Grid& g, Boundary b, double c0, const std::vector<double>& plus, const std::vector<double>& minus,
            int stride) {
  check_grid(g);
  if (stride != 1 && stride != 2) throw InvalidArgument("stencil: stride must be 1 or 2");
  if (stride == 2 && g.n_bits < 2) throw InvalidArgument("stencil: stride 2 needs n_bits >= 2");
  const int low_levels = stride == 2 ? 1 : 0;  // bits below the one the carry enters
  if (static_cast<int>(plus.size()) != g.dims || static_cast<int>(minus.size()) != g.dims) {
    throw InvalidArgument("stencil: one plus and one minus coefficient per axis");
  }
  // (S^+ x)(i) = x(i + 1): the output index is the input minus 1, a borrow (c = -1).
  std::vector<Carry> states{{-1, 0}};
  std::vector<double> right{c0};
  for (int j = 0; j < g.dims; ++j) {
    if (plus[j] != 0) {
      states.push_back({j, -1});
      right.push_back(plus[j]);
    }
    if (minus[j] != 0) {
      states.push_back({j, +1});
      right.push_back(minus[j]);
    }
  }
  const int64_t R = static_cast<int64_t>(states.size());
  auto index_of = [&](int axis, int c) -> int64_t {
    if (c == 0) return 0;
    for (int64_t s = 1; s < R; ++s) {
      if (states[s].axis == axis && states[s].c == c) return s;
    }
    return -1;  // a carry with a sign no term started cannot arise
  };

  const int d = g.d();
  Mpo op;
  op.modes.assign(static_cast<std::size_t>(d), 2);
  op.ranks.assign(static_cast<std::size_t>(d + 1), R);
  op.ranks[0] = op.ranks[d] = 1;
  for (int k = 0; k < d; ++k) {
    const int axis = k % g.dims;
    const bool below_entry = k / g.dims >= g.n_bits - low_levels;
    // Full R x 2 x 2 x R core, then the boundary vectors are folded into the first and last.
    std::vector<double> W(static_cast<std::size_t>(R * 4 * R), 0.0);
    auto at = [&](int64_t a, int i, int j, int64_t bb) -> double& { return W[((a * 2 + i) * 2 + j) * R + bb]; };
    for (int64_t s = 0; s < R; ++s) {
      for (int jin = 0; jin < 2; ++jin) {
        if (s == 0 || states[s].axis != axis || below_entry) {
          at(s, jin, jin, s) = 1.0;  // nothing to add on this bit: pass the state on
          continue;
        }
        const int sum = jin + states[s].c;  // -1 .. 2
        const int iout = (sum + 2) % 2;
        const int cout = (sum - iout) / 2;
        at(index_of(axis, cout), iout, jin, s) = 1.0;
      }
    }
    const int64_t rl = (k == 0) ? 1 : R, rr = (k == d - 1) ? 1 : R;
    std::vector<double> core(static_cast<std::size_t>(rl * 4 * rr), 0.0);
    for (int64_t a = 0; a < R; ++a) {
      // Periodic: a carry out of the top bit wraps around (any state ends the train);
      // Dirichlet: only "no carry" does (the shifted index fell off the grid).
      const double wl = (k > 0) ? 1.0 : (a == 0 || b == Boundary::Periodic ? 1.0 : 0.0);
      if (wl == 0) continue;
      for (int ij = 0; ij < 4; ++ij) {
        for (int64_t s = 0; s < R; ++s) {
          const double v = W[(a * 4 + ij) * R + s];
          if (v == 0) continue;
          const double wr = (k < d - 1) ? 1.0 : right[s];
          core[((k > 0 ? a : 0) * 4 + ij) * rr + (k < d - 1 ? s : 0)] += wl * v * wr;
        }
      }
    }
    op.cores.push_back(std::move(core));
  }
  return op;
}

Mpo identity(const Grid& g) {
  return stencil(g, Boundary::Periodic, 1.0, std::vector<double>(g.dims, 0.0), std::vector<double>(g.dims, 0.0));
}

Mpo shift(const Grid& g, Boundary b, int axis, int by) {
  if (axis < 0 || axis >= g.dims) throw InvalidArgument("shift: axis out of range");
  if (by != 1 && by != -1) throw InvalidArgument("shift: by must be +1 or -1");
  std::vector<double> plus(g.dims, 0.0), minus(g.dims, 0.0);
  (by > 0 ? plus : minus)[axis] = 1.0;
  return stencil(g, b, 0.0, plus, minus);
}

Mpo derivative(const Grid& g, Boundary b, int axis, double h) {
  if (axis < 0 || axis >= g.dims) throw InvalidArgument("derivative: axis out of range");
  std::vector<double> plus(g.dims, 0.0), minus(g.dims, 0.0);
  plus[axis] = 0.5 / h;
  minus[axis] = -0.5 / h;
  return stencil(g, b, 0.0, plus, minus);
}

Mpo laplacian(const Grid& g, Boundary b, double h) {
  const double w = 1.0 / (h * h);
  return stencil(g, b, -2.0 * g.dims * w, std::vector<double>(g.dims, w), std::vector<double>(g.dims, w));
}

Mpo wide_laplacian(const Grid& g, Boundary b, double h) {
  const double w = 1.0 / (4 * h * h);
  return stencil(g, b, -2.0 * g.dims * w, std::vector<double>(g.dims, w), std::vector<double>(g.dims, w), 2);
}

Mpo parity_projector(const Grid& g) {
  check_grid(g);
  const int d = g.d();
  Mpo p;
  p.modes.assign(static_cast<std::size_t>(d), 2);
  p.ranks.assign(static_cast<std::size_t>(d + 1), 1);
  // Each class holds side^dims / 2^dims points; e_c e_c^T / |c| summed over the classes.
  const double scale = std::ldexp(1.0, g.dims * (1 - g.n_bits));
  for (int k = 0; k < d; ++k) {
    const bool lowest = k / g.dims == g.n_bits - 1;
    const double w = k == 0 ? scale : 1.0;
    p.cores.push_back(lowest ? std::vector<double>{w, 0, 0, w} : std::vector<double>{w, w, w, w});
  }
  return p;
}

Mpo combine(double ca, const Mpo& a, double cb, const Mpo& b) {
  a.validate();
  b.validate();
  if (a.modes != b.modes) throw InvalidArgument("mpo combine: different modes");
  const int d = a.d();
  Mpo s;
  s.modes = a.modes;
  s.ranks.assign(static_cast<std::size_t>(d + 1), 1);
  for (int k = 1; k < d; ++k) s.ranks[k] = a.ranks[k] + b.ranks[k];
  for (int k = 0; k < d; ++k) {
    const int64_t n = s.modes[k], R0 = s.ranks[k], R1 = s.ranks[k + 1];
    std::vector<double> core(static_cast<std::size_t>(R0 * n * n * R1), 0.0);
    const Mpo* ops[2] = {&a, &b};
    const double cs[2] = {ca, cb};
    for (int t = 0; t < 2; ++t) {
      const Mpo& m = *ops[t];
      const int64_t r0 = m.ranks[k], r1 = m.ranks[k + 1];
      const int64_t o0 = (t == 1 && k > 0) ? a.ranks[k] : 0, o1 = (t == 1 && k < d - 1) ? a.ranks[k + 1] : 0;
      const double w = (k == 0) ? cs[t] : 1.0;
      for (int64_t x = 0; x < r0; ++x)
        for (int64_t ij = 0; ij < n * n; ++ij)
          for (int64_t y = 0; y < r1; ++y)
            core[((o0 + x) * n * n + ij) * R1 + (o1 + y)] += w * m.cores[k][(x * n * n + ij) * r1 + y];
    }
    s.cores.push_back(std::move(core));
  }
  return s;
}

}  // namespace tts::qtt
