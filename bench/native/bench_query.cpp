// Timing of score_batch on bench:query's data shape (a CMake target, not a ctest: see bench/native/README.md):
//   build/cmake/bench/bench_query [candidates] [distinct] [reps]
// Fields as bench/query.ts makes them (a sum of 1 to 4 sinusoids over 2^16 points, so QTT ranks 2 to 8),
// compressed at the default tolerance (1e-6); `distinct` fields are decomposed and copied round
// robin into `candidates` operands (each its own allocation, as the pool holds them). Prints the
// median and best of `reps` cosine batches on 1 and 2 threads.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "ttstore/internal/inner_kernels.hpp"
#include "ttstore/query.hpp"
#include "ttstore/tt.hpp"

using namespace tts;
using clk = std::chrono::steady_clock;

static double ms_since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }
// CPU time of the process (all threads): on a shared machine, the work done whatever the waits.
static double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// bench/fields.ts's rng (mulberry32), so field j is bench/query.ts's field j.
struct Rng {
  uint32_t s;
  double operator()() {
    s += 0x6d2b79f5u;
    uint32_t t = s;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return static_cast<double>(t ^ (t >> 14)) / 4294967296.0;
  }
};

static std::vector<float> field(uint32_t seed, int64_t n) {
  Rng u{seed};
  const int terms = 1 + static_cast<int>(u() * 4);
  std::vector<double> acc(static_cast<std::size_t>(n), 0.0);
  for (int m = 0; m < terms; ++m) {
    const int k = 1 + static_cast<int>(u() * 48);
    const double amp = 0.5 + u();
    const double phase = 2 * M_PI * u();
    for (int64_t i = 0; i < n; ++i) acc[i] += amp * std::sin(2 * M_PI * k * static_cast<double>(i) / n + phase);
  }
  return std::vector<float>(acc.begin(), acc.end());
}

int main(int argc, char** argv) {
  const int64_t nc = argc > 1 ? std::atoll(argv[1]) : 10000;
  const int64_t distinct = argc > 2 ? std::atoll(argv[2]) : 400;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 15;
  const int64_t hot =
      argc > 4 ? std::atoll(argv[4]) : 0;  // > 0: candidates cycle over this many operands (cache-resident)
  const int64_t N = int64_t{1} << 16;
  const QttLayout layout = make_layout({N}, LayoutKind::RowMajor);

  // The decompositions take a while: kept in a file between runs (TTS_BENCH_QUERY_CACHE).
  const char* cache_path = std::getenv("TTS_BENCH_QUERY_CACHE");
  auto t0 = clk::now();
  std::vector<TensorTrain> tts;
  std::map<int64_t, int> hist;
  if (FILE* f = cache_path ? std::fopen(cache_path, "rb") : nullptr) {
    int64_t count = 0;
    if (std::fread(&count, 8, 1, f) != 1 || count < distinct) return std::fprintf(stderr, "stale cache\n"), 1;
    for (int64_t j = 0; j < distinct; ++j) {
      TensorTrain t;
      int64_t d = 0, f32 = 0;
      if (std::fread(&d, 8, 1, f) != 1 || std::fread(&f32, 8, 1, f) != 1) return 1;
      t.f32 = f32 != 0;
      t.modes.resize(d);
      t.ranks.resize(d + 1);
      t.cores.resize(d);
      if (std::fread(t.modes.data(), 8, d, f) != static_cast<size_t>(d) ||
          std::fread(t.ranks.data(), 8, d + 1, f) != static_cast<size_t>(d + 1))
        return 1;
      for (int64_t k = 0; k < d; ++k) {
        t.cores[k].resize(t.ranks[k] * t.modes[k] * t.ranks[k + 1]);
        if (std::fread(t.cores[k].data(), 8, t.cores[k].size(), f) != t.cores[k].size()) return 1;
      }
      hist[t.max_rank()]++;
      tts.push_back(std::move(t));
    }
    std::fclose(f);
  } else {
    for (int64_t j = 0; j < distinct; ++j) {
      const auto x = field(static_cast<uint32_t>(1000 + j), N);
      CompressResult r = compress(ArrayView{x.data(), DType::F32, N}, layout, SvdOptions{});
      hist[r.tt.max_rank()]++;
      tts.push_back(std::move(r.tt));
    }
    if (FILE* out = cache_path ? std::fopen(cache_path, "wb") : nullptr) {
      std::fwrite(&distinct, 8, 1, out);
      for (const auto& t : tts) {
        const int64_t d = t.d();
        const int64_t f32 = t.f32 ? 1 : 0;
        std::fwrite(&d, 8, 1, out);
        std::fwrite(&f32, 8, 1, out);
        std::fwrite(t.modes.data(), 8, d, out);
        std::fwrite(t.ranks.data(), 8, d + 1, out);
        for (const auto& c : t.cores) std::fwrite(c.data(), 8, c.size(), out);
      }
      std::fclose(out);
    }
  }
  std::printf("decomposed %lld fields in %.1f s; max rank histogram:", static_cast<long long>(distinct),
              ms_since(t0) / 1e3);
  for (auto [r, n] : hist) std::printf(" %lld:%d", static_cast<long long>(r), n);
  std::printf("; cores %s\n", tts[0].f32 ? "float32" : "float64");

  std::vector<Operand> ops;
  ops.reserve(static_cast<std::size_t>(nc + 1));
  for (int64_t j = 0; j <= nc; ++j) ops.push_back(Operand::train(tts[static_cast<std::size_t>(j % distinct)]));
  const Operand& q = ops[0];
  std::vector<const Operand*> cands;
  std::vector<double> norms;
  int64_t bytes = 0;
  double fma = 0;  // vector multiply-adds of the exact-rank kernel (8 lanes, the better orientation)
  for (int64_t j = 1; j <= nc; ++j) {
    const Operand& c = ops[static_cast<std::size_t>(hot > 0 ? 1 + (j - 1) % hot : j)];
    cands.push_back(&c);
    norms.push_back(norm(c));
    bytes += c.elements() * (c.f32() ? 4 : 8);
    for (int k = 0; k < q.d(); ++k) {
      const double ra0 = q.ranks()[k], ra1 = q.ranks()[k + 1], rb0 = c.ranks()[k], rb1 = c.ranks()[k + 1];
      fma += 2 * std::min(ra0 * (rb0 + ra1), rb1 * (rb0 + ra0));
    }
  }
  std::printf("candidate cores %.1f MiB; %.1f M vector multiply-adds per batch\n", bytes / 1048576.0, fma / 1e6);
  const double qn = norm(q);
  std::printf("query max rank %lld; %lld candidates\n", static_cast<long long>(q.max_rank()),
              static_cast<long long>(nc));

  if (std::getenv("TTS_BENCH_AB")) {  // one thread, kernels interleaved, best cpu time of each
    const auto pq = detail::prepare_train(q);
    const detail::Pad8Kernel ks[] = {detail::Pad8Kernel::Loops, detail::Pad8Kernel::Avx512, detail::Pad8Kernel::Avx2};
    double best[3] = {1e30, 1e30, 1e30}, sum[3] = {0, 0, 0};
    for (int r = 0; r < reps; ++r) {
      for (int v = 0; v < 3; ++v) {
        const double c0 = cpu_ms();
        double acc = 0;
        for (const Operand* c : cands) acc += detail::inner_trains_with(pq, *c, ks[v]);
        best[v] = std::min(best[v], cpu_ms() - c0);
        sum[v] = acc;
      }
    }
    {  // candidates of equal ranks two at a time
      std::map<uint64_t, std::vector<const Operand*>> groups;
      for (const Operand* c : cands) groups[c->rank_key()].push_back(c);
      double bestp = 1e30, accp = 0;
      for (int r = 0; r < reps; ++r) {
        const double c0 = cpu_ms();
        double acc = 0, out[2];
        for (const auto& [key, g] : groups) {
          std::size_t j = 0;
          for (; j + 1 < g.size(); j += 2) {
            detail::inner_trains_2(pq, *g[j], *g[j + 1], out);
            acc += out[0] + out[1];
          }
          if (j < g.size()) acc += detail::inner_trains(pq, *g[j]);
        }
        bestp = std::min(bestp, cpu_ms() - c0);
        accp = acc;
      }
      std::printf("  %-10s best cpu %.3f ms (sum %.15g; %zu rank profiles)\n", "pairs", bestp, accp, groups.size());
    }
    for (int v = 0; v < 3; ++v)
      std::printf("  %-10s best cpu %.3f ms (sum %.15g)\n", detail::pad8_kernel_name(ks[v]), best[v], sum[v]);
    return 0;
  }
  for (int threads : {1, 2}) {
    set_threads(threads);
    std::vector<double> t, cpu;
    double check = 0;
    for (int r = 0; r <= reps; ++r) {
      const auto s = clk::now();
      const double c0 = cpu_ms();
      const auto out = score_batch(q, qn, cands, norms, Metric::Cosine);
      if (r > 0) t.push_back(ms_since(s));
      if (r > 0) cpu.push_back(cpu_ms() - c0);
      check = out[static_cast<std::size_t>(nc / 2)];
    }
    std::sort(t.begin(), t.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf(
        "threads %d: score_batch median %.3f ms, best %.3f ms; cpu median %.3f ms, best %.3f ms (score[%lld] = "
        "%.15f)\n",
        threads, t[t.size() / 2], t[0], cpu[cpu.size() / 2], cpu[0], static_cast<long long>(nc / 2), check);
  }
  return 0;
}
