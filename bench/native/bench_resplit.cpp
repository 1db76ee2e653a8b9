// Where a put_cores train of its own mode split should live (a CMake target, not a ctest: see
// bench/native/README.md):
//   scripts/openblas-env.sh build/cmake/bench/bench_resplit [reps]
// For each train, two designs side by side, timed in the same run:
//   A (kept): store the cores as given; put takes the norm in their modes, serve rebuilds over a
//     row_major layout of those modes, a query brings the train into the engine's split when it loads
//     it into the operand pool (resplit), then contracts;
//   B: resplit once at put time into the engine's split and store that; serve and queries use it.
// It prints the medians of `reps` runs (wall ms), the stored bytes and ranks of each design, and how
// B's rebuild compares with A's bit for bit (float32 and float64 outputs), both against a long double
// rebuild of the cores as given.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ttstore/layout.hpp"
#include "ttstore/query.hpp"
#include "ttstore/tt.hpp"

using namespace tts;
using clk = std::chrono::steady_clock;

namespace {

// Median wall time of `reps` runs after one untimed run (thread pools awake, caches warm).
double median_ms(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = clk::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

TensorTrain random_f32_train(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  TensorTrain t;
  t.modes = modes;
  t.ranks = ranks;
  t.f32 = true;
  for (std::size_t k = 0; k < modes.size(); ++k) {
    std::vector<double> c(static_cast<std::size_t>(ranks[k] * modes[k] * ranks[k + 1]));
    const double s = 1.0 / std::sqrt(static_cast<double>(ranks[k]));
    for (double& v : c) v = static_cast<double>(static_cast<float>(nd(g) * s));
    t.cores.push_back(std::move(c));
  }
  return t;
}

// Element t of the mode tensor (C order for row_major) in long double, core slice by core slice.
std::vector<long double> reference(const TensorTrain& tt) {
  const int64_t N = tt.numel();
  std::vector<long double> out(static_cast<std::size_t>(N));
  std::vector<int64_t> digit(tt.modes.size());
  std::vector<long double> v, w;
  for (int64_t t = 0; t < N; ++t) {
    int64_t rest = t;
    for (int k = tt.d() - 1; k >= 0; --k) {
      digit[k] = rest % tt.modes[k];
      rest /= tt.modes[k];
    }
    v.assign(1, 1.0L);
    for (int k = 0; k < tt.d(); ++k) {
      const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
      w.assign(static_cast<std::size_t>(r1), 0.0L);
      for (int64_t a = 0; a < r0; ++a) {
        for (int64_t b = 0; b < r1; ++b)
          w[b] += v[a] * static_cast<long double>(tt.cores[k][(a * n + digit[k]) * r1 + b]);
      }
      v.swap(w);
    }
    out[t] = v[0];
  }
  return out;
}

template <class T>
std::vector<T> rebuild(const TensorTrain& tt, const QttLayout& L, DType dt) {
  std::vector<T> y(static_cast<std::size_t>(L.numel()));
  reconstruct(tt, L, MutableArrayView{y.data(), dt, L.numel()}, ArrayView{});
  return y;
}

// Elements whose bits differ, and the largest difference relative to the array's largest value.
template <class T>
std::pair<int64_t, double> differ(const std::vector<T>& a, const std::vector<T>& b) {
  int64_t n = 0;
  double m = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) ++n;
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::fabs(static_cast<double>(a[i])));
  }
  return {n, scale > 0 ? m / scale : m};
}

// Elements of `got` that are not the correctly rounded value of the long double reference.
template <class T>
int64_t misrounded(const std::vector<T>& got, const std::vector<long double>& ref) {
  int64_t n = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const T want = static_cast<T>(ref[i]);
    if (std::memcmp(&got[i], &want, sizeof(T)) != 0) ++n;
  }
  return n;
}

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

struct Case {
  const char* name;
  std::vector<int64_t> shape, modes, ranks;
};

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::vector<Case> cases = {
      {"[2,3,4] as (2,3,4)", {2, 3, 4}, {2, 3, 4}, {1, 2, 3, 1}},
      {"[6] as [2,3] (merge)", {6}, {2, 3}, {1, 2, 1}},
      {"64^3 natural TT r16", {64, 64, 64}, {64, 64, 64}, {1, 16, 16, 1}},
      {"256^2 natural TT r32", {256, 256}, {256, 256}, {1, 32, 1}},
      {"2^20 base-4 QTT r8", {1 << 20}, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, {1, 4, 8, 8, 8, 8, 8, 8, 8, 4, 1}},
      {"3*2^14 2s then 3 r2 (merges)",
       {3 << 14},
       {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3},
       {1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1}},
  };
  std::printf(
      "design A: cores as given (resplit when a query loads them); B: resplit at put, stored in the engine's split\n");
  std::printf("%-30s %-10s %9s %9s %9s %9s %9s %11s %8s\n", "train", "design", "put ms", "serve ms", "sim cold",
              "sim warm", "bytes", "max rank", "");
  for (const Case& c : cases) {
    const TensorTrain A = random_f32_train(c.modes, c.ranks, 1);
    const QttLayout LE = make_layout(c.shape, LayoutKind::RowMajor);
    const QttLayout LA = row_major_layout(c.shape, c.modes);
    // A partner in the engine's split (what put makes of an array of this shape).
    std::vector<int64_t> pr(LE.modes.size() + 1, 4);
    pr.front() = pr.back() = 1;
    const TensorTrain partner = random_f32_train(LE.modes, pr, 2);
    const Operand P = Operand::train(partner);

    TensorTrain B;
    const double putA = median_ms(reps, [&] { (void)norm(A); });
    const double putB = median_ms(reps, [&] {
      B = resplit(A, LE.modes);
      (void)norm(B);
    });
    const double serveA = median_ms(reps, [&] { (void)rebuild<float>(A, LA, DType::F32); });
    const double serveB = median_ms(reps, [&] { (void)rebuild<float>(B, LE, DType::F32); });
    const double coldA = median_ms(reps, [&] { (void)inner(Operand::train(resplit(A, LE.modes)), P); });
    const double coldB = median_ms(reps, [&] { (void)inner(Operand::train(B), P); });
    const Operand opB = Operand::train(B);
    const double warm = median_ms(reps, [&] { (void)inner(opB, P); });
    std::printf("%-30s %-10s %9.2f %9.2f %9.2f %9.2f %9lld %11lld\n", c.name, "A", putA, serveA, coldA, warm,
                static_cast<long long>(A.stored_bytes()), static_cast<long long>(A.max_rank()));
    std::printf("%-30s %-10s %9.2f %9.2f %9.2f %9.2f %9lld %11lld  ranks %s\n", "", "B", putB, serveB, coldB, warm,
                static_cast<long long>(B.stored_bytes()), static_cast<long long>(B.max_rank()), list(B.ranks).c_str());

    const auto ref = reference(A);
    const auto a32 = rebuild<float>(A, LA, DType::F32), b32 = rebuild<float>(B, LE, DType::F32);
    const auto a64 = rebuild<double>(A, LA, DType::F64), b64 = rebuild<double>(B, LE, DType::F64);
    const auto d32 = differ(a32, b32), d64 = differ(a64, b64);
    std::printf(
        "%-30s exactness: B vs A differ in %lld of %zu float32 and %lld float64 values (max rel %.1e); "
        "not the correctly rounded value: float32 A %lld B %lld, float64 A %lld B %lld\n",
        "", static_cast<long long>(d32.first), a32.size(), static_cast<long long>(d64.first), d64.second,
        static_cast<long long>(misrounded(a32, ref)), static_cast<long long>(misrounded(b32, ref)),
        static_cast<long long>(misrounded(a64, ref)), static_cast<long long>(misrounded(b64, ref)));
  }
  return 0;
}
