// Each CUDA kernel against its CPU twin (float64, 1e-12 relative unless said), the device sweep
// against the twin sweep and the CPU backend, placement and batched dots, with a timing of each.
// Needs a device: without one it prints why and exits 77, which ctest reports as skipped.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "check.hpp"
#include "cuda_raii.hpp"
#include "kernels.hpp"
#include "select_cases.hpp"
#include "sweep.hpp"
#include "tt_testing.hpp"
#include "ttstore/cuda.hpp"
#include "ttstore/internal/dtype_io.hpp"

namespace {

using namespace tts;
namespace cd = tts::cuda::detail;

std::vector<double> noisy(int64_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& v : x) v = nd(g);
  return x;
}

std::vector<double> smooth(int64_t n, double freq) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    const double u = static_cast<double>(t) / static_cast<double>(n);
    x[t] = std::sin(freq * u) + 0.5 * std::cos(3.1 * freq * u * u) + std::exp(-u);
  }
  return x;
}

template <class T>
cd::DeviceBuffer<T> up(const std::vector<T>& v) {
  cd::DeviceBuffer<T> b(static_cast<int64_t>(v.size()));
  TTS_CUDA(cudaMemcpy(b.get(), v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice));
  return b;
}
template <class T>
std::vector<T> down(const cd::DeviceBuffer<T>& b, int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  TTS_CUDA(cudaMemcpy(v.data(), b.get(), sizeof(T) * n, cudaMemcpyDeviceToHost));
  return v;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(gram_kernel_matches_twin) {
  cd::Stream s;
  for (auto [m, K] : {std::pair<int64_t, int64_t>{1, 100000},
                      {2, 1 << 20},
                      {7, 33333},
                      {13, 100003},
                      {16, 1 << 20},
                      {22, 4097},
                      {23, 5000},
                      {100, 20000},
                      {300, 3000}}) {
    const std::vector<double> C = noisy(m * K, static_cast<uint64_t>(m * 7 + K));
    auto dC = up(C);
    std::vector<double> G(m * m), R(m * m);
    const auto t0 = std::chrono::steady_clock::now();
    cd::Scratch scratch;
    cd::launch_gram(dC.get(), m, K, G.data(), scratch, s.get());
    const double t = seconds_since(t0);
    cd::gram_ref(C.data(), m, K, R.data());
    double worst = 0;
    for (int64_t a = 0; a < m; ++a) {
      for (int64_t b = 0; b < m; ++b) {
        worst = std::max(worst, std::fabs(G[a * m + b] - R[a * m + b]) / std::sqrt(R[a * m + a] * R[b * m + b]));
      }
    }
    CHECK_MSG(worst <= 1e-12, "m " + std::to_string(m) + " K " + std::to_string(K) + ": " + check::num(worst));
    std::printf("    gram m %4lld K %8lld: %.3f ms, %.1f GB/s\n", (long long)m, (long long)K, t * 1e3,
                m * K * 8 / t / 1e9);
  }
}

TEST(project_kernel_matches_twin) {
  cd::Stream s;
  for (auto [m, r, K] : {std::tuple<int64_t, int64_t, int64_t>{2, 2, 1 << 20},
                         {8, 5, 77777},
                         {22, 22, 5000},
                         {40, 12, 9999},
                         {256, 256, 2048}}) {
    const std::vector<double> C = noisy(m * K, static_cast<uint64_t>(m + K)), Ut = noisy(r * m, 3);
    auto dC = up(C);
    cd::DeviceBuffer<double> dOut(r * K);
    std::vector<double> e(r), e_ref(r), ref(r * K);
    const auto t0 = std::chrono::steady_clock::now();
    cd::Scratch scratch;
    cd::launch_project(dC.get(), m, K, Ut.data(), r, dOut.get(), e.data(), scratch, s.get());
    const double t = seconds_since(t0);
    const std::vector<double> got = down(dOut, r * K);
    cd::project_ref(C.data(), m, K, Ut.data(), r, ref.data(), e_ref.data());
    double err = 0, nrm = 0;
    for (int64_t i = 0; i < r * K; ++i) {
      err = std::max(err, std::fabs(got[i] - ref[i]));
      nrm = std::max(nrm, std::fabs(ref[i]));
    }
    CHECK_MSG(err <= 1e-12 * nrm * std::sqrt(double(m)), check::num(err / nrm));
    for (int64_t i = 0; i < r; ++i) CHECK_REL(e[i], e_ref[i], 1e-12);
    std::printf("    project m %3lld r %3lld K %8lld: %.3f ms\n", (long long)m, (long long)r, (long long)K, t * 1e3);
  }
}

TEST(reconstruct_kernel_matches_twin_every_dtype) {
  cd::Stream s;
  const int64_t nL = 300, nR = 700, rp = 9;
  const std::vector<double> L = noisy(nL * rp, 1), R = noisy(rp * nR, 2);
  std::vector<int64_t> hi(nL), lo(nR);
  for (int64_t i = 0; i < nL; ++i) hi[i] = (nL - 1 - i) * nR;  // a permutation of rows
  for (int64_t j = 0; j < nR; ++j) lo[j] = j;
  auto dL = up(L), dR = up(R);
  auto dhi = up(hi), dlo = up(lo);
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::I64, DType::I32, DType::I16, DType::I8, DType::U64,
                   DType::U32, DType::U16, DType::U8, DType::Bool}) {
    const std::size_t sz = dtype_size(dt);
    std::vector<unsigned char> ref(nL * nR * sz), want(nL * nR * sz);
    tts::detail::dispatch(dt, [&](auto e) {
      for (int64_t i = 0; i < nL * nR; ++i) decltype(e)::store(ref.data() + i * sz, std::sin(0.01 * i) * 3);
      return 0;
    });
    auto dref = up(ref);
    cd::DeviceBuffer<unsigned char> dout(nL * nR * sz);
    const cd::DeviceSums got = cd::launch_reconstruct(dL.get(), dR.get(), nL, nR, rp, dhi.get(), dlo.get(), dt,
                                                      dout.get(), dref.get(), s.get());
    const cd::FusedSums exp =
        cd::reconstruct_ref(L.data(), R.data(), nL, nR, rp, hi.data(), lo.data(), dt, want.data(), ref.data());
    const std::vector<unsigned char> out = down(dout, nL * nR * sz);
    int64_t differ = 0;
    tts::detail::dispatch(dt, [&](auto e) {
      for (int64_t i = 0; i < nL * nR; ++i) {
        const double a = decltype(e)::load(out.data() + i * sz), b = decltype(e)::load(want.data() + i * sz);
        if (std::fabs(a - b) > 1e-12 * std::max(1.0, std::fabs(b))) ++differ;
      }
      return 0;
    });
    // Float64 sums in another order can move a value across a rounding boundary of the narrow dtypes.
    CHECK_MSG(differ <= (sz < 8 || dt == DType::I64 || dt == DType::U64 ? nL * nR / 10000 + 1 : 0),
              std::string(dtype_name(dt)) + ": " + std::to_string(differ) + " values differ");
    CHECK_REL(got.err_sq, exp.err_sq, dt == DType::F64 ? 1e-9 : 1e-6);
    CHECK_REL(got.ref_sq, exp.ref_sq, 1e-12);
  }
}

TEST(dot_batch_kernel_matches_twin) {
  for (auto [rq, rc, n] :
       {std::tuple<int64_t, int64_t, int64_t>{4, 8, 1000}, {16, 16, 300}, {8, 40, 100}, {64, 64, 20}}) {
    const std::vector<int64_t> modes(12, 2);
    std::vector<int64_t> qr(13, rq), cr(13, rc);
    for (int k = 0; k < 13; ++k) {
      qr[k] = std::min<int64_t>({rq, int64_t{1} << std::min(k, 12 - k)});
      cr[k] = std::min<int64_t>({rc, int64_t{1} << std::min(k, 12 - k)});
    }
    const TensorTrain q = ttt::random_tt(modes, qr, 1);
    const Operand oq = Operand::train(q);
    auto& res = tts::cuda::Residency::instance();
    res.clear();
    res.set_budget(int64_t{1} << 32);
    std::vector<int64_t> ids;
    std::vector<double> want, scale;
    for (int64_t j = 0; j < n; ++j) {
      TensorTrain c = ttt::random_tt(modes, cr, 100 + j);
      if (j % 2) c = to_f32(c);
      res.place(0, j, Operand::train(c));
      ids.push_back(j);
      want.push_back(dot(q, c));
      scale.push_back(norm(q) * norm(c));
    }
    ids.push_back(n + 5);  // not resident: NaN
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<double> got = res.dots(0, oq, ids);
    const double t = seconds_since(t0);
    for (int64_t j = 0; j < n; ++j) CHECK_NEAR(got[j], want[j], 1e-9 * scale[j]);
    CHECK(std::isnan(got[n]));
    std::printf("    dots rq %lld rc %lld n %lld: %.3f ms\n", (long long)rq, (long long)rc, (long long)n, t * 1e3);
  }
}

TEST(select_kernel_matches_twin_and_cpu_core) {
  for (const auto& c : sel_cases::select_cases()) {
    const std::vector<double> twin = sel_cases::twin_values(c);
    std::vector<double> got(twin.size());
    tts::cuda::reconstruct_selection(c.tt, c.layout, c.s,
                                     MutableArrayView{got.data(), DType::F64, static_cast<int64_t>(got.size())}, 0);
    const double rel = sel_cases::max_rel_diff(got, twin);
    CHECK_MSG(rel <= 1e-12, c.name + ": " + check::num(rel));
  }
  // Large selections (several tiles, every cast) against the CPU core, timed: a 2048^2 field of rank
  // 12, its whole plane at level 0 and 1, a 1000 x 1000 region with steps, and 10^6 points.
  const QttLayout L = make_layout({2048, 2048}, LayoutKind::RowMajor);
  const TensorTrain tt = sel_cases::train_for(L, 12, 77);
  std::mt19937_64 g(5);
  std::vector<std::pair<std::string, Selection>> big(4);
  big[0].first = "plane";
  big[0].second.region = {AxisSlice{0, 2048, 1}, AxisSlice{0, 2048, 1}};
  big[1].first = "level 1";
  big[1].second.level = {1, 1};
  big[1].second.region = {AxisSlice{0, 1024, 1}, AxisSlice{0, 1024, 1}};
  big[2].first = "1000^2 region, steps 2, -2";
  big[2].second.region = {AxisSlice{3, 2003, 2}, AxisSlice{2047, 47, -2}};
  big[3].first = "10^6 points";
  big[3].second.by_points = true;
  for (int i = 0; i < 2000000; ++i) big[3].second.points.push_back(static_cast<int64_t>(g() % 2048));
  for (const auto& [name, s] : big) {
    int64_t n = 1;
    for (int64_t x : selection_shape(L.shape, s)) n *= x;
    for (DType dt : {DType::F64, DType::F32}) {
      const std::size_t sz = dtype_size(dt);
      std::vector<unsigned char> got(n * sz), want(n * sz);
      const auto t0 = std::chrono::steady_clock::now();
      tts::cuda::reconstruct_selection(tt, L, s, MutableArrayView{got.data(), dt, n}, 0);
      const double tg = seconds_since(t0);
      const auto t1 = std::chrono::steady_clock::now();
      reconstruct_selection(tt, L, s, MutableArrayView{want.data(), dt, n});
      const double tc = seconds_since(t1);
      std::vector<double> a(n), b(n);
      tts::detail::dispatch(dt, [&](auto e) {
        for (int64_t i = 0; i < n; ++i) {
          a[i] = decltype(e)::load(got.data() + i * sz);
          b[i] = decltype(e)::load(want.data() + i * sz);
        }
        return 0;
      });
      const double rel = sel_cases::max_rel_diff(a, b);
      CHECK_MSG(rel <= (dt == DType::F64 ? 1e-12 : 1e-6), name + ": " + check::num(rel));
      std::printf("    select %s (%s, %lld values): gpu %.3f ms, cpu %.3f ms\n", name.c_str(), dtype_name(dt),
                  (long long)n, tg * 1e3, tc * 1e3);
    }
  }
}

TEST(device_sweep_matches_twin_and_cpu) {
  for (double tol : {1e-3, 1e-6, 1e-10}) {
    const std::vector<double> x = smooth(1 << 20, 60.0);
    const QttLayout L = make_layout({1 << 20}, LayoutKind::RowMajor);
    SvdOptions opt;
    opt.tol = tol;
    const auto t0 = std::chrono::steady_clock::now();
    const TensorTrain gpu = tts::cuda::qtt_svd(ttt::view(x), L, opt, 0);
    const double tg = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    const TensorTrain cpu = qtt_svd(ttt::view(x), L, opt);
    const double tc = seconds_since(t1);
    for (std::size_t k = 0; k < cpu.ranks.size(); ++k) CHECK(std::llabs(cpu.ranks[k] - gpu.ranks[k]) <= 1);
    const double eg = tts::cuda::fingerprint(gpu, L, ttt::view(x), 0).relative_error;
    const double ec = fingerprint(cpu, L, ttt::view(x)).relative_error;
    CHECK_MSG(eg <= tol && ec <= tol, check::num(eg) + " " + check::num(ec));
    CHECK_REL(eg, fingerprint(gpu, L, ttt::view(x)).relative_error, 1e-6);
    std::printf("    2^20 tol %g: gpu %.3f ms (max rank %lld), cpu %.3f ms (max rank %lld)\n", tol, tg * 1e3,
                (long long)gpu.max_rank(), tc * 1e3, (long long)cpu.max_rank());
  }
}

TEST(device_compress_and_reconstruct_match_cpu) {
  const std::vector<double> x = smooth(96 * 128, 20.0);
  std::vector<float> xf(x.begin(), x.end());
  const QttLayout L = make_layout({96, 128}, LayoutKind::RowMajor);
  const ArrayView a{xf.data(), DType::F32, static_cast<int64_t>(xf.size())};
  SvdOptions opt;
  opt.tol = 1e-5;
  const CompressResult g = tts::cuda::compress(a, L, opt, 0);
  const CompressResult c = compress(a, L, opt);
  CHECK_EQ(g.compressible, c.compressible);
  CHECK(g.fingerprint.relative_error <= opt.tol);
  std::vector<float> out_g(xf.size()), out_c(xf.size());
  const Fingerprint fg = tts::cuda::reconstruct(g.tt, L, MutableArrayView{out_g.data(), DType::F32, a.numel}, a, 0);
  const Fingerprint fc = reconstruct(g.tt, L, MutableArrayView{out_c.data(), DType::F32, a.numel}, a);
  CHECK_REL(fg.frobenius_error, fc.frobenius_error, 1e-6);
  CHECK_REL(fg.relative_error, g.fingerprint.relative_error, 1e-6);
  int64_t differ = 0;
  for (std::size_t i = 0; i < xf.size(); ++i) differ += out_g[i] != out_c[i];
  CHECK_MSG(differ <= static_cast<int64_t>(xf.size()) / 1000, std::to_string(differ));
}

TEST(placement_budget_and_device_index) {
  auto& res = tts::cuda::Residency::instance();
  res.clear();
  const TensorTrain t = ttt::random_tt(std::vector<int64_t>(10, 2), {1, 2, 4, 4, 4, 4, 4, 4, 4, 2, 1}, 3);
  const Operand op = Operand::train(t);
  const int64_t bytes = op.elements() * 8;
  res.set_budget(3 * bytes);
  for (int64_t id = 1; id <= 3; ++id) CHECK(!res.place(0, id, op).resident_before);
  CHECK(res.place(0, 1, op).resident_before);  // 1 most recent now: 2 goes first
  const auto p = res.place(0, 4, op);
  CHECK_EQ(p.evicted, int64_t{1});
  CHECK(!res.resident(0, 2) && res.resident(0, 1) && res.resident(0, 4));
  CHECK_EQ(res.stats(0).bytes, 3 * bytes);
  res.set_budget(bytes - 1);
  CHECK_EQ(res.stats(0).entries, int64_t{0});
  CHECK_THROWS(tts::cuda::Unavailable, res.place(0, 9, op), "GPU cache budget");
  CHECK_THROWS(InvalidArgument, res.place(tts::cuda::device_count(), 9, op), "does not exist");
  res.set_budget(int64_t{4} << 30);
}

TEST(copy_bandwidth_is_measured) {
  const auto bw = tts::cuda::copy_bandwidth(0, int64_t{256} << 20);
  std::printf("    H2D %.1f GB/s, D2H %.1f GB/s, D2D %.1f GB/s (bytes copied per second)\n", bw.h2d_gbps, bw.d2h_gbps,
              bw.d2d_gbps);
  CHECK(bw.d2d_gbps > 0 && bw.h2d_gbps > 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (tts::cuda::device_count(&why) == 0) {
    std::printf("SKIP: no usable CUDA device (%s); the kernels' parity tests need one\n", why.c_str());
    return 77;
  }
  for (const auto& d : tts::cuda::devices()) {
    std::printf("device %d: %s, %.1f GiB, sm_%d%d\n", d.index, d.name.c_str(), d.total_bytes / 1073741824.0, d.major,
                d.minor);
  }
  return check::run_all(argc, argv);
}
