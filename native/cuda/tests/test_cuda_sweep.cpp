// The CUDA backend's host side on any machine: the sweep driver run on the kernels' CPU twins
// (HostOps) against the CPU backend (same ranks within 1, both errors within the target), the twins
// themselves against the CPU core, and the eviction policy of GPU core placement.
#include <cmath>
#include <random>
#include <string>
#include <type_traits>

#include "check.hpp"
#include "lru_budget.hpp"
#include "select_cases.hpp"
#include "sweep.hpp"
#include "tt_testing.hpp"
#include "ttstore/cuda.hpp"
#include "ttstore/internal/dtype_io.hpp"

namespace {

using namespace tts;
namespace cd = tts::cuda::detail;

std::vector<double> smooth(const std::vector<int64_t>& shape, double freq) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    double u = static_cast<double>(t) / static_cast<double>(n);
    x[t] = std::sin(freq * u) + 0.5 * std::cos(3.1 * freq * u * u) + std::exp(-u);
  }
  return x;
}

std::vector<double> noisy(int64_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& v : x) v = nd(g);
  return x;
}

void compare_backends(const std::vector<double>& x, const std::vector<int64_t>& shape, LayoutKind kind, double tol,
                      int64_t max_rank = 0) {
  const QttLayout L = make_layout(shape, kind);
  const ArrayView a = ttt::view(x);
  SvdOptions opt;
  opt.tol = tol;
  opt.max_rank = max_rank;
  const TensorTrain cpu = qtt_svd(a, L, opt);
  auto ops = cd::host_ops(a, L);
  cd::SweepOut out;
  const TensorTrain twin = cd::sweep(*ops, a, L, opt, 0, out);
  CHECK_EQ(twin.ranks.size(), cpu.ranks.size());
  for (std::size_t k = 0; k < cpu.ranks.size() && k < twin.ranks.size(); ++k) {
    CHECK_MSG(std::llabs(cpu.ranks[k] - twin.ranks[k]) <= 1, "bond " + std::to_string(k) + ": cpu " +
                                                                 std::to_string(cpu.ranks[k]) + " twin " +
                                                                 std::to_string(twin.ranks[k]));
  }
  const double e_cpu = fingerprint(cpu, L, a).relative_error;
  const double e_twin = fingerprint(twin, L, a).relative_error;
  // (the fingerprint of values near 1e200 overflows: NaN on both sides, the ranks still compare)
  if (max_rank == 0 && std::isfinite(e_cpu)) {
    const double bound = std::max(tol * 1.0001, 1e-13);  // tol 0: the float64 floor
    CHECK_MSG(e_cpu <= bound, check::num(e_cpu));
    CHECK_MSG(e_twin <= bound, "twin error " + check::num(e_twin) + " tol " + check::num(tol));
  } else if (max_rank == 0) {
    CHECK(!std::isfinite(e_twin));
  }
  std::printf("    shape %lld.. tol %g: ranks max cpu %lld twin %lld, errors %.3g / %.3g, steps ops %d host %d\n",
              static_cast<long long>(shape[0]), tol, static_cast<long long>(cpu.max_rank()),
              static_cast<long long>(twin.max_rank()), e_cpu, e_twin, out.device_steps, out.host_steps);
}

TEST(sweep_on_twins_matches_cpu_backend_smooth) {
  for (double tol : {1e-2, 1e-4, 1e-6, 1e-9})
    compare_backends(smooth({1 << 16}, 40.0), {1 << 16}, LayoutKind::RowMajor, tol);
  compare_backends(smooth({256, 256}, 25.0), {256, 256}, LayoutKind::Interleaved, 1e-6);
  compare_backends(smooth({96, 40}, 9.0), {96, 40}, LayoutKind::RowMajor, 1e-5);
}

TEST(sweep_on_twins_matches_cpu_backend_low_rank_and_capped) {
  const TensorTrain t = ttt::random_tt(std::vector<int64_t>(14, 2), {1, 2, 4, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 2, 1}, 7);
  const std::vector<double> x = ttt::dense_mode_order(t);
  compare_backends(x, {1 << 14}, LayoutKind::RowMajor, 1e-8);
  compare_backends(x, {1 << 14}, LayoutKind::RowMajor, 0.0);
  compare_backends(smooth({1 << 14}, 300.0), {1 << 14}, LayoutKind::RowMajor, 1e-6, 3);
}

TEST(sweep_on_twins_noise_and_tiny) {
  compare_backends(noisy(1 << 12, 3), {1 << 12}, LayoutKind::RowMajor, 1e-3);
  compare_backends({3.0, -1.0, 2.0}, {3}, LayoutKind::RowMajor, 1e-6);
  compare_backends(std::vector<double>(64, 0.0), {64}, LayoutKind::RowMajor, 1e-6);
  std::vector<double> huge = smooth({1 << 10}, 5.0);
  for (double& v : huge) v *= 1e200;  // squares overflow: the driver rescales as the CPU core does
  compare_backends(huge, {1 << 10}, LayoutKind::RowMajor, 1e-6);
}

// The ops of the twins, recording the shape of each Gram asked for.
class GramLog : public cd::SweepOps {
 public:
  explicit GramLog(std::unique_ptr<cd::SweepOps> inner) : inner_(std::move(inner)) {}
  std::vector<std::pair<int64_t, int64_t>> grams;
  double load(int64_t* first_bad) override { return inner_->load(first_bad); }
  double max_abs(int64_t n) override { return inner_->max_abs(n); }
  void scale(int64_t n, double f) override { inner_->scale(n, f); }
  void gram(int64_t m, int64_t K, double* G) override {
    grams.emplace_back(m, K);
    inner_->gram(m, K, G);
  }
  void project(int64_t m, int64_t K, const double* Ut, int64_t r, double* energy) override {
    inner_->project(m, K, Ut, r, energy);
  }
  void download(int64_t n, double* host) override { inner_->download(n, host); }
  void release_work() override { inner_->release_work(); }
  Fingerprint fingerprint(const TensorTrain& tt) override { return inner_->fingerprint(tt); }

 private:
  std::unique_ptr<cd::SweepOps> inner_;
};

TEST(full_rank_prefix_takes_one_gram_pass) {
  // Noise keeps full rank while the unfolding is wide: the steps of 2, 4, 8 and 16 rows read the
  // partial traces of one 16-row Gram; 32 and 64 rows (over kAheadRows) take a Gram each.
  const std::vector<double> x = noisy(1 << 14, 11);
  const QttLayout L = make_layout({1 << 14}, LayoutKind::RowMajor);
  SvdOptions opt;
  opt.tol = 1e-3;
  GramLog ops(cd::host_ops(ttt::view(x), L));
  cd::SweepOut out;
  const TensorTrain twin = cd::sweep(ops, ttt::view(x), L, opt, 0, out);
  CHECK_EQ(out.device_steps, 6);
  const std::vector<std::pair<int64_t, int64_t>> want{{16, 1024}, {32, 512}, {64, 256}};
  CHECK_MSG(ops.grams == want, std::to_string(ops.grams.size()) + " Grams");
  const TensorTrain cpu = qtt_svd(ttt::view(x), L, opt);
  CHECK_MSG(twin.ranks == cpu.ranks, "ranks differ from the CPU backend's");
  // A smooth field truncates early: each projection changes W, so the next step takes its Gram (and
  // those of the steps after it, up to 16 rows) afresh; the ranks are still the CPU backend's.
  const std::vector<double> y = smooth({1 << 14}, 3.0);
  GramLog ops2(cd::host_ops(ttt::view(y), L));
  cd::SweepOut out2;
  const TensorTrain twin2 = cd::sweep(ops2, ttt::view(y), L, opt, 0, out2);
  const TensorTrain cpu2 = qtt_svd(ttt::view(y), L, opt);
  CHECK_MSG(twin2.ranks == cpu2.ranks, "ranks differ from the CPU backend's");
  std::string shapes;
  for (auto [m, K] : ops2.grams) shapes += " " + std::to_string(m) + "x" + std::to_string(K);
  std::printf("    smooth: %d steps through the ops, Grams%s\n", out2.device_steps, shapes.c_str());
  CHECK_MSG(ops2.grams.size() > 1 && static_cast<int>(ops2.grams.size()) <= out2.device_steps, shapes);
}

TEST(compress_on_twins_matches_cpu_compress) {
  for (DType dt : {DType::F64, DType::F32, DType::I16, DType::U8}) {
    const std::vector<double> x = smooth({64, 64}, 12.0);
    std::vector<unsigned char> bytes(x.size() * dtype_size(dt));
    tts::detail::dispatch(dt, [&](auto e) {
      for (std::size_t i = 0; i < x.size(); ++i) decltype(e)::store(bytes.data() + i * dtype_size(dt), x[i] * 100);
      return 0;
    });
    const ArrayView a{bytes.data(), dt, static_cast<int64_t>(x.size())};
    const QttLayout L = make_layout({64, 64}, LayoutKind::RowMajor);
    SvdOptions opt;
    opt.tol = 1e-5;
    const CompressResult cpu = compress(a, L, opt);
    auto ops = cd::host_ops(a, L);
    const CompressResult twin = cd::compress_with(*ops, a, L, opt);
    CHECK_EQ(twin.compressible, cpu.compressible);
    CHECK_EQ(twin.tt.f32, cpu.tt.f32);
    CHECK_MSG(twin.fingerprint.relative_error <= opt.tol, check::num(twin.fingerprint.relative_error));
    CHECK_MSG(std::llabs(twin.tt.max_rank() - cpu.tt.max_rank()) <= 1,
              std::to_string(twin.tt.max_rank()) + " vs " + std::to_string(cpu.tt.max_rank()));
  }
}

TEST(sweep_rejects_non_finite_with_the_cpu_message) {
  std::vector<double> x = smooth({8, 16}, 3.0);
  x[37] = std::nan("");
  const QttLayout L = make_layout({8, 16}, LayoutKind::RowMajor);
  auto ops = cd::host_ops(ttt::view(x), L);
  cd::SweepOut out;
  CHECK_THROWS(InvalidArgument, cd::sweep(*ops, ttt::view(x), L, SvdOptions{}, 0, out),
               "non-finite value (NaN) at flat index 37 (index [2, 5])");
}

TEST(twins_agree_with_cpu_core) {
  // gram_ref / project_ref against plain definitions
  const int64_t m = 5, K = 37;
  std::vector<double> C = noisy(m * K, 11), G(m * m), Ut = noisy(3 * m, 12), out(3 * K), e(3);
  cd::gram_ref(C.data(), m, K, G.data());
  double s = 0;
  for (int64_t c = 0; c < K; ++c) s += C[1 * K + c] * C[4 * K + c];
  CHECK_REL(G[1 * m + 4], s, 1e-14);
  CHECK_REL(G[4 * m + 1], s, 1e-14);
  cd::project_ref(C.data(), m, K, Ut.data(), 3, out.data(), e.data());
  double e2 = 0;
  for (int64_t c = 0; c < K; ++c) e2 += out[2 * K + c] * out[2 * K + c];
  CHECK_REL(e[2], e2, 1e-14);
  // reconstruct_ref through the CPU core's split, every dtype
  const QttLayout L = make_layout({12, 10}, LayoutKind::RowMajor);  // modes 3 2 2 5 2
  const TensorTrain t = ttt::random_tt(L.modes, {1, 2, 3, 3, 2, 1}, 5);
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::I32, DType::U8, DType::Bool}) {
    const int64_t N = L.numel();
    std::vector<unsigned char> ref(N * dtype_size(dt)), got(N * dtype_size(dt)), want(N * dtype_size(dt));
    tts::detail::dispatch(dt, [&](auto el) {
      for (int64_t i = 0; i < N; ++i) decltype(el)::store(ref.data() + i * dtype_size(dt), std::sin(0.3 * i) * 3);
      return 0;
    });
    const Fingerprint fp = reconstruct(t, L, MutableArrayView{want.data(), dt, N}, ArrayView{ref.data(), dt, N});
    // one split: all cores on the right (L = [1], R = the dense train)
    std::vector<double> R = ttt::dense_mode_order(t);
    const OffsetTables T = offsets_split_at(L, 0);
    const double one = 1.0;
    const cd::FusedSums sums =
        cd::reconstruct_ref(&one, R.data(), T.n_hi, T.n_lo, 1, T.hi.data(), T.lo.data(), dt, got.data(), ref.data());
    int64_t differ = 0;  // float64 sums in another order: a value may cross a rounding boundary
    tts::detail::dispatch(dt, [&](auto el) {
      for (int64_t i = 0; i < N; ++i) {
        const double u = decltype(el)::load(got.data() + i * dtype_size(dt));
        const double v = decltype(el)::load(want.data() + i * dtype_size(dt));
        differ += std::fabs(u - v) > 1e-12 * std::max(1.0, std::fabs(v));
      }
      return 0;
    });
    CHECK_MSG(differ <= N / 100, std::string("dtype ") + dtype_name(dt) + ": " + std::to_string(differ));
    CHECK_REL(std::sqrt(sums.err_sq), fp.frobenius_error, 1e-12);
    CHECK_REL(sums.max_abs, fp.max_abs_error, 1e-12);
  }
  // dot_ref against tts::dot, float64 and float32 candidates
  const TensorTrain q = ttt::random_tt({2, 2, 3, 2}, {1, 2, 4, 3, 1}, 21);
  const TensorTrain c = ttt::random_tt({2, 2, 3, 2}, {1, 2, 2, 5, 1}, 22);
  std::vector<double> qc, cc;
  for (const auto& core : q.cores) qc.insert(qc.end(), core.begin(), core.end());
  for (const auto& core : c.cores) cc.insert(cc.end(), core.begin(), core.end());
  CHECK_REL(cd::dot_ref(q.modes, q.ranks, qc.data(), c.ranks, cc.data(), false), dot(q, c), 1e-12);
  const TensorTrain c32 = to_f32(c);
  std::vector<float> cf;
  for (const auto& core : c32.cores) cf.insert(cf.end(), core.begin(), core.end());
  CHECK_REL(cd::dot_ref(q.modes, q.ranks, qc.data(), c.ranks, cf.data(), true), dot(q, c32), 1e-12);
}

// The selection kernel's twin (one chain a value, the kernel's index arithmetic) against the CPU
// core's reconstruct_selection (shared prefixes), itself checked against slicing the full array.
TEST(select_twin_matches_cpu_core) {
  for (const auto& c : sel_cases::select_cases()) {
    const std::vector<double> got = sel_cases::twin_values(c);
    std::vector<double> want(got.size());
    reconstruct_selection(c.tt, c.layout, c.s,
                          MutableArrayView{want.data(), DType::F64, static_cast<int64_t>(want.size())});
    const double rel = sel_cases::max_rel_diff(got, want);
    CHECK_MSG(rel <= 1e-12, c.name + ": " + check::num(rel));
  }
  // Ranks over the kernel's: the plan is refused, so the backend falls back to the CPU core.
  const QttLayout L = make_layout({1 << 14}, LayoutKind::RowMajor);
  const TensorTrain big = sel_cases::train_for(L, cuda::kMaxSelectRank + 1, 9);
  Selection s;
  s.region.push_back(AxisSlice{0, 1 << 14, 1});
  CHECK_THROWS(cuda::Unavailable, cd::select_arrays(tts::detail::plan_selection(big, L, s), s), "ranks up to 64");
}

// The kernel's one-thread-per-value path (select_value_regs, both register widths) on the host:
// every case whose ranks fit gives select_ref's values, in the same summation order.
TEST(select_regs_path_matches_twin) {
  int checked = 0;
  for (const auto& c : sel_cases::select_cases()) {
    const tts::detail::SelectionPlan plan = tts::detail::plan_selection(c.tt, c.layout, c.s);
    const cd::SelectArrays A = cd::select_arrays(plan, c.s);
    const std::vector<double> want = sel_cases::twin_values(c);
    const int64_t n = static_cast<int64_t>(want.size());
    auto run = [&](auto width) {
      constexpr int R = decltype(width)::value;
      if (A.spec.max_rank > R) return;
      std::vector<double> got(want.size());
      for (int64_t o = 0; o < n; ++o) got[o] = cd::select_value_regs<R>(A.spec, o);
      const double rel = sel_cases::max_rel_diff(got, want);
      CHECK_MSG(rel <= 1e-12, c.name + " (registers for rank " + std::to_string(R) + "): " + check::num(rel));
      ++checked;
    };
    run(std::integral_constant<int, cd::kSelectRegsSmall>{});
    run(std::integral_constant<int, cd::kSelectRegsLarge>{});
  }
  CHECK_MSG(checked >= 50, "cases on the register path: " + std::to_string(checked));
}

TEST(lru_budget_evicts_least_recently_used_first) {
  cd::LruBudget lru;
  lru.set_budget(100);
  lru.insert(1, 40);
  lru.insert(2, 40);
  CHECK(lru.make_room(10).empty());
  lru.insert(3, 10);
  lru.touch(1);                       // order now 2, 3, 1
  const auto ev = lru.make_room(40);  // used 90, needs 40: evict 2 (40) -> 50 + 40 <= 100
  CHECK_EQ(ev.size(), std::size_t{1});
  CHECK_EQ(ev.empty() ? -1 : ev[0], int64_t{2});
  CHECK_EQ(lru.used(), int64_t{50});
  lru.insert(4, 40);
  const auto shrunk = lru.set_budget(45);  // 3, 1, 4 -> evict 3 then 1
  CHECK_EQ(shrunk.size(), std::size_t{2});
  CHECK(lru.contains(4) && !lru.contains(1) && !lru.contains(3));
  CHECK_EQ(lru.evictions(), int64_t{3});
  CHECK(lru.remove(4));
  CHECK_EQ(lru.used(), int64_t{0});
  CHECK_EQ(lru.evict_oldest(), int64_t{-1});
}

TEST(no_device_is_reported_not_thrown) {
  std::string why;
  const int n = tts::cuda::device_count(&why);
  std::printf("    CUDA devices: %d%s%s\n", n, n == 0 ? " (" : "", n == 0 ? (why + ")").c_str() : "");
  if (n == 0) {
    CHECK(!why.empty());
    const std::vector<double> x = smooth({1 << 10}, 5.0);
    const QttLayout L = make_layout({1 << 10}, LayoutKind::RowMajor);
    CHECK_THROWS(tts::cuda::Unavailable, tts::cuda::qtt_svd(ttt::view(x), L, SvdOptions{}, 0), "no usable CUDA device");
    const TensorTrain t = ttt::random_tt(std::vector<int64_t>(10, 2), std::vector<int64_t>(11, 1), 1);
    CHECK_THROWS(tts::cuda::Unavailable, tts::cuda::Residency::instance().place(0, 1, Operand::train(t)),
                 "no usable CUDA device");
    CHECK(!tts::cuda::Residency::instance().resident(0, 1));
  }
}

}  // namespace

int main(int argc, char** argv) { return check::run_all(argc, argv); }
