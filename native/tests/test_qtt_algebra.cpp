// The QTT algebra against plain dense loops on small grids: each operator applied to the QTT of an
// analytic field equals the dense finite-difference result to round-off, at the operator's exact
// rank; sums, Hadamard products and separable fields equal their dense counterparts; MPO products
// meet their tolerance under a rank cap the result fits, and fitting converges from a poor guess; the SPD solver
// reproduces a dense LAPACK solve of a 2^10-point problem to its tolerance, and a warm start from
// the answer converges in one sweep; held at a rank cap it stops on the sweep that shows the cap.
#include <lapacke.h>

#include <cmath>
#include <functional>

#include "check.hpp"
#include "ttstore/qtt_algebra.hpp"

using namespace tts;
using namespace tts::qtt;

static const double kPi = 3.14159265358979323846;

// An analytic, non-separable, non-periodic field on the grid (index-based coordinates in [0, 1)).
static std::vector<double> field(const Grid& g) {
  const int64_t n = g.side();
  int64_t total = 1;
  for (int j = 0; j < g.dims; ++j) total *= n;
  std::vector<double> a(static_cast<std::size_t>(total));
  for (int64_t t = 0; t < total; ++t) {
    double x[3] = {0, 0, 0};
    int64_t rest = t;
    for (int j = g.dims - 1; j >= 0; --j) {
      x[j] = static_cast<double>(rest % n) / n;
      rest /= n;
    }
    a[t] = std::exp(std::sin(2 * kPi * x[0]) * 0.7 + x[1] * x[1]) * std::cos(3 * x[2] + x[0] * x[1]) + 0.3 * x[0];
  }
  return a;
}

// (c0 I + sum plus_j S_j^+ + minus_j S_j^-) a, on the dense C-order array.
static std::vector<double> dense_stencil(const Grid& g, const std::vector<double>& a, Boundary b, double c0,
                                         const std::vector<double>& plus, const std::vector<double>& minus) {
  const int64_t n = g.side();
  std::vector<double> out(a.size(), 0.0);
  std::vector<int64_t> stride(g.dims, 1);
  for (int j = g.dims - 2; j >= 0; --j) stride[j] = stride[j + 1] * n;
  for (int64_t t = 0; t < static_cast<int64_t>(a.size()); ++t) {
    double v = c0 * a[t];
    for (int j = 0; j < g.dims; ++j) {
      const int64_t i = (t / stride[j]) % n;
      for (int s = -1; s <= 1; s += 2) {
        const double coef = s > 0 ? plus[j] : minus[j];
        if (coef == 0) continue;
        int64_t k = i + s;
        if (k < 0 || k >= n) {
          if (b == Boundary::Dirichlet) continue;
          k = (k + n) % n;
        }
        v += coef * a[t + (k - i) * stride[j]];
      }
    }
    out[t] = v;
  }
  return out;
}

static double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

static SvdOptions exact() {
  SvdOptions o;
  o.tol = 1e-14;
  return o;
}

// Every operator the solvers use, on 1-D, 2-D and 3-D grids, both boundaries.
TEST(operators_equal_dense_finite_differences_to_round_off) {
  for (int dims = 1; dims <= 3; ++dims) {
    const Grid g{dims, dims == 3 ? 4 : (dims == 2 ? 5 : 8)};
    const std::vector<double> a = field(g);
    const Mps x = from_dense(g, a, 1e-15);
    CHECK(rel_diff(to_dense(g, x), a) < 1e-13);
    const double h = 1.0 / g.side();
    for (Boundary b : {Boundary::Periodic, Boundary::Dirichlet}) {
      struct Case {
        std::string name;
        Mpo op;
        double c0;
        std::vector<double> plus, minus;
        int64_t rank;
      };
      std::vector<Case> cases;
      const std::vector<double> zero(dims, 0.0);
      cases.push_back({"identity", identity(g), 1.0, zero, zero, 1});
      std::vector<double> lap(dims, 1 / (h * h));
      cases.push_back({"laplacian", laplacian(g, b, h), -2.0 * dims / (h * h), lap, lap, 2 * dims + 1});
      for (int ax = 0; ax < dims; ++ax) {
        std::vector<double> p = zero, m = zero;
        p[ax] = 1;
        cases.push_back({"shift+" + std::to_string(ax), shift(g, b, ax, +1), 0.0, p, zero, 2});
        cases.push_back({"shift-" + std::to_string(ax), shift(g, b, ax, -1), 0.0, zero, p, 2});
        p[ax] = 0.5 / h;
        m[ax] = -0.5 / h;
        cases.push_back({"derivative" + std::to_string(ax), derivative(g, b, ax, h), 0.0, p, m, 3});
      }
      for (const Case& c : cases) {
        const std::string what =
            c.name + " dims " + std::to_string(dims) + (b == Boundary::Periodic ? " periodic" : " dirichlet");
        CHECK_MSG(c.op.max_rank() == c.rank, what + " rank " + std::to_string(c.op.max_rank()));
        const std::vector<double> want = dense_stencil(g, a, b, c.c0, c.plus, c.minus);
        const std::vector<double> got = to_dense(g, apply(c.op, x, exact()));
        const double e = rel_diff(got, want);
        CHECK_MSG(e < 1e-11, what + " error " + check::num(e));
      }
    }
  }
}

TEST(combine_and_hadamard_equal_dense) {
  const Grid g{2, 6};
  const std::vector<double> a = field(g);
  std::vector<double> b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) b[i] = std::sin(0.001 * static_cast<double>(i)) + 0.5;
  const Mps x = from_dense(g, a, 1e-15), y = from_dense(g, b, 1e-15);
  std::vector<double> lin(a.size()), prod(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    lin[i] = 2.5 * a[i] - 0.75 * b[i];
    prod[i] = a[i] * b[i];
  }
  CHECK(rel_diff(to_dense(g, combine({2.5, -0.75}, {&x, &y}, exact())), lin) < 1e-12);
  CHECK(rel_diff(to_dense(g, hadamard(x, y, exact())), prod) < 1e-12);
  // Rounded to a tolerance: the error is within it.
  SvdOptions loose;
  loose.tol = 1e-4;
  const Mps p = hadamard(x, y, loose);
  CHECK(rel_diff(to_dense(g, p), prod) <= 1e-4);
  double sum = 0;
  for (double v : prod) sum += v;
  CHECK_REL(total(p), sum, 1e-3);
}

TEST(separable_fields_equal_the_dense_outer_product) {
  const Grid g{3, 4};
  const int64_t n = g.side();
  std::vector<std::vector<double>> f(3, std::vector<double>(static_cast<std::size_t>(n)));
  for (int64_t i = 0; i < n; ++i) {
    const double x = (i + 0.5) / n;
    f[0][i] = std::sin(2 * kPi * x);
    f[1][i] = std::exp(-(x - 0.5) * (x - 0.5) / 0.02);
    f[2][i] = 1 + x * x;
  }
  const Mps s = separable(g, f, 1e-14);
  std::vector<double> want(static_cast<std::size_t>(n * n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < n; ++k) want[(i * n + j) * n + k] = f[0][i] * f[1][j] * f[2][k];
  CHECK(rel_diff(to_dense(g, s), want) < 1e-12);
}

// The circulant MPO generated by a kernel is the dense cyclic convolution, at rank 2^dims rank(kernel).
TEST(convolution_equals_the_dense_cyclic_convolution_at_rank_2_to_the_dims_times_the_kernel_rank) {
  for (int dims = 1; dims <= 3; ++dims) {
    const Grid g{dims, dims == 3 ? 3 : 4};
    const int64_t n = g.side();
    const std::vector<double> a = field(g);
    std::vector<double> k(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) k[i] = std::cos(0.37 * static_cast<double>(i * i % 97)) + 0.1;
    const Mps kernel = from_dense(g, k, 1e-15), x = from_dense(g, a, 1e-15);
    const Mpo c = convolution(g, kernel);
    CHECK_EQ(c.max_rank(), (int64_t{1} << dims) * kernel.max_rank());
    std::vector<double> want(a.size(), 0.0);
    const int64_t total = static_cast<int64_t>(a.size());
    for (int64_t i = 0; i < total; ++i) {
      for (int64_t j = 0; j < total; ++j) {
        int64_t m = 0, ri = i, rj = j, place = 1;
        for (int ax = dims - 1; ax >= 0; --ax) {  // C order: the last axis varies fastest
          m += (((ri % n) - (rj % n) + n) % n) * place;
          ri /= n;
          rj /= n;
          place *= n;
        }
        want[i] += k[m] * a[j];
      }
    }
    CHECK_MSG(rel_diff(to_dense(g, apply(c, x, exact())), want) < 1e-12, "dims " + std::to_string(dims));
  }
}

// The operator core's three paths (operator_core.cpp) in one product: a field of rank ~60 on 64²
// under the convolution of a kernel of rank ~60 (MPO rank ~240): the zip-up's middle cores have
// 1024 columns or more and run as GEMMs on the nonzero blocks, the outer ones as whole-slice GEMMs
// or axpys; together they must give the dense cyclic convolution.
TEST(a_full_rank_convolution_on_64_squared_equals_the_dense_one_through_every_operator_core_path) {
  const Grid g{2, 6};
  const int64_t n = g.side(), total = n * n;
  std::vector<double> a(static_cast<std::size_t>(total)), k(a.size());
  for (int64_t t = 0; t < total; ++t) {
    k[t] = std::cos(0.37 * static_cast<double>(t * t % 97)) + 0.1;
    a[t] = std::sin(0.91 * static_cast<double>(t * t % 89)) - 0.2;
  }
  const Mps x = from_dense(g, a, 1e-15), kernel = from_dense(g, k, 1e-15);
  CHECK(x.max_rank() >= 48);
  const Mpo c = convolution(g, kernel);
  CHECK_EQ(c.max_rank(), 4 * kernel.max_rank());
  std::vector<double> want(a.size(), 0.0);
  for (int64_t i = 0; i < total; ++i) {
    for (int64_t j = 0; j < total; ++j) {
      const int64_t m = ((i / n - j / n + n) % n) * n + ((i % n - j % n + n) % n);
      want[i] += k[m] * a[j];
    }
  }
  CHECK(rel_diff(to_dense(g, apply(c, x, exact())), want) < 1e-12);
}

// A rank cap that the result fits under must not cost accuracy: the zip-up's carried rank (capped at
// 1.5 max_rank) is not enough here (it left an error of 9e-4 at tol 1e-6), and the fitting sweep
// that follows a capped split brings the error to round-off.
TEST(apply_meets_its_tolerance_when_the_result_fits_the_cap_but_the_zip_up_was_capped) {
  const Grid g{2, 5};
  const int64_t n = g.side();
  std::vector<double> a(static_cast<std::size_t>(n * n)), k(a.size());
  for (int64_t t = 0; t < n * n; ++t) {
    k[t] = std::cos(0.37 * static_cast<double>(t * t % 97)) + 0.1;
    a[t] = std::exp(std::sin(0.05 * static_cast<double>(t))) + std::cos(0.002 * static_cast<double>(t * t % 13));
  }
  const Mps x = from_dense(g, a, 1e-15), kernel = from_dense(g, k, 1e-15);
  const Mpo c = convolution(g, kernel);
  const std::vector<double> want = to_dense(g, apply(c, x, exact()));
  SvdOptions o;
  o.tol = 1e-6;
  o.max_rank = 32;  // the largest rank a train over 2^10 points can need
  CHECK(rel_diff(to_dense(g, apply(c, x, o)), want) <= 1e-6);
}

// Two-site fitting from a poor guess (rank 2) grows the ranks it needs (at most doubling them per
// sweep: the result needs 37 here) and reaches the tolerance.
TEST(apply_fit_from_a_rank_2_guess_reaches_the_tolerance_in_six_sweeps) {
  const Grid g{2, 6};
  const std::vector<double> a = field(g);
  const Mps x = from_dense(g, a, 1e-15);
  const Mpo lap = laplacian(g, Boundary::Periodic, 1.0);
  SvdOptions two;
  two.tol = 1e-15;
  two.max_rank = 2;
  SvdOptions o;
  o.tol = 1e-8;
  const Mps y = apply_fit(lap, x, round(x, two), o, 6);
  const double err = rel_diff(to_dense(g, y), to_dense(g, apply(lap, x, exact())));
  CHECK_MSG(err <= 1e-8, "error " + check::num(err) + " rank " + std::to_string(y.max_rank()));
}

// -L (G * f) = f minus its part in L's null space, for both periodic Laplacians the solvers use.
TEST(periodic_green_inverts_the_periodic_laplacian_off_its_null_space) {
  for (int stride = 1; stride <= 2; ++stride) {
    for (int dims = 1; dims <= 2; ++dims) {
      const Grid g{dims, dims == 1 ? 8 : 5};
      const int64_t n = g.side();
      const double h = 2 * kPi / static_cast<double>(n), tol = 1e-10;
      const Mpo lap = stride == 1 ? laplacian(g, Boundary::Periodic, h) : wide_laplacian(g, Boundary::Periodic, h);
      const std::vector<double> f = field(g);
      // Null space: the constants (stride 1), the fields constant on each parity class (stride 2).
      std::vector<double> want = f, mean(static_cast<std::size_t>(1 << dims), 0.0);
      auto cls = [&](std::size_t t) {
        if (stride == 1) return std::size_t{0};
        return dims == 1 ? t % 2 : ((t / static_cast<std::size_t>(n)) % 2) * 2 + t % 2;
      };
      for (std::size_t t = 0; t < f.size(); ++t)
        mean[cls(t)] += f[t] / (static_cast<double>(f.size()) / (stride == 1 ? 1 : (1 << dims)));
      for (std::size_t t = 0; t < f.size(); ++t) want[t] -= mean[cls(t)];
      const Mps green = periodic_green(g, h, stride, tol);
      const Mps u = apply(convolution(g, green), from_dense(g, f, 1e-15), exact());
      const Mps back = combine({-1.0}, {&u}, exact());
      const double err = rel_diff(to_dense(g, apply(lap, back, exact())), want);
      CHECK_MSG(err < 10 * tol,
                "stride " + std::to_string(stride) + " dims " + std::to_string(dims) + ": " + check::num(err));
      // Nothing of the null space is left in the answer (it must not feed the gradient of p).
      const std::vector<double> ud = to_dense(g, u);
      std::vector<double> um(mean.size(), 0.0);
      double un = 0;
      for (std::size_t t = 0; t < ud.size(); ++t) {
        um[cls(t)] += ud[t];
        un += ud[t] * ud[t];
      }
      for (double v : um)
        CHECK_MSG(std::fabs(v) < 1e-9 * std::sqrt(un * static_cast<double>(ud.size())), "null part " + check::num(v));
    }
  }
}

// -Lap + I (Dirichlet) on 32 x 32 = 2^10 points against LAPACK's Cholesky solve of the same matrix.
// (I - Lap) u = f with Dirichlet boundaries on a 32 x 32 grid: the operator as an MPO, f as an MPS,
// and the dense answer by LAPACK (the dense matrix's columns: the stencil applied to unit vectors).
struct DirichletProblem {
  Grid g{2, 5};
  int64_t N = 1024;
  double h = 1.0 / 33;
  std::vector<double> w = std::vector<double>(2, -33.0 * 33.0);
  Mpo A;
  std::vector<double> f, want;
  Mps b;

  DirichletProblem() {
    std::vector<double> Ad(static_cast<std::size_t>(N * N)), e(static_cast<std::size_t>(N), 0.0);
    for (int64_t j = 0; j < N; ++j) {
      e[j] = 1;
      const std::vector<double> col = dense_stencil(g, e, Boundary::Dirichlet, 1 + 4 / (h * h), w, w);
      e[j] = 0;
      for (int64_t i = 0; i < N; ++i) Ad[i * N + j] = col[i];
    }
    A = stencil(g, Boundary::Dirichlet, 1 + 4 / (h * h), w, w);
    f = field(g);
    want = f;
    CHECK(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', N, 1, Ad.data(), N, want.data(), 1) == 0);
    b = from_dense(g, f, 1e-14);
  }
};

TEST(spd_solver_reproduces_a_dense_solve_of_a_1024_point_problem) {
  const DirichletProblem p;
  const Grid& g = p.g;
  const int64_t N = p.N;
  const double h = p.h;
  const std::vector<double>& w = p.w;
  const Mpo& A = p.A;
  const std::vector<double>& f = p.f;
  const std::vector<double>& want = p.want;
  const Mps& b = p.b;
  Mps x = b;  // a start that is not the answer
  SolveOptions o;
  o.tol = 1e-9;
  const SolveReport r = solve_spd(A, b, x, o);
  CHECK(r.converged);
  const std::vector<double> got = to_dense(g, x);
  const double err = rel_diff(got, want);
  // The residual is at most tol; the error then is at most cond(A) * tol in the worst case, in
  // practice far below it: ask for 100 tol.
  CHECK_MSG(err < 100 * o.tol, "error " + check::num(err) + " sweeps " + std::to_string(r.sweeps));
  const std::vector<double> res = dense_stencil(g, got, Boundary::Dirichlet, 1 + 4 / (h * h), w, w);
  double rn = 0, fn = 0;
  for (int64_t i = 0; i < N; ++i) {
    rn += (res[i] - f[i]) * (res[i] - f[i]);
    fn += f[i] * f[i];
  }
  CHECK_MSG(std::sqrt(rn / fn) < 10 * o.tol, "residual " + check::num(std::sqrt(rn / fn)));

  // Warm start from the answer: one sweep finds nothing to do.
  Mps again = x;
  const SolveReport r2 = solve_spd(A, b, again, o);
  CHECK(r2.converged);
  CHECK_EQ(r2.sweeps, 1);
}

// The same problem with the solution's ranks capped at 8 (it needs 28): the solve cannot reach tol, so
// it must stop on the sweep whose truncations to max_rank show that (two sweeps, where waiting for a
// sweep that fails to cut the residual took three), with an answer near the best that rank allows.
TEST(spd_solver_held_at_max_rank_stops_on_the_sweep_that_shows_it) {
  const DirichletProblem p;
  const Grid& g = p.g;
  const Mpo& A = p.A;
  const std::vector<double>& want = p.want;
  const Mps& b = p.b;
  Mps x = b;
  SolveOptions o;
  o.tol = 1e-9;
  o.max_rank = 8;
  const SolveReport r = solve_spd(A, b, x, o);
  CHECK(!r.converged);
  CHECK(x.max_rank() <= 8);
  CHECK_MSG(r.sweeps <= 2, "sweeps " + std::to_string(r.sweeps));
  // Energy-optimal under the cap: its error is within a small factor of the dense answer's own
  // rank-8 truncation (measured: 2.5e-3 against 1.9e-3).
  const double best = rel_diff(to_dense(g, round_to(from_dense(g, want, 1e-15), 0.0, 8)), want);
  const double err = rel_diff(to_dense(g, x), want);
  CHECK_MSG(err < 2 * best, "error " + check::num(err) + ", rank-8 truncation " + check::num(best));

  // Restarted from its answer, one sweep sees the same residual and stops.
  Mps again = x;
  const SolveReport r2 = solve_spd(A, b, again, o);
  CHECK(!r2.converged);
  CHECK_EQ(r2.sweeps, 1);
  CHECK_REL(r2.residual, r.residual, 0.05);
}

int main(int argc, char** argv) { return check::run_all(argc, argv); }
