// Selections on the CUDA backend: the plan of the CPU core (plan_selection) flattened into arrays,
// its CPU twin (select_ref: the kernel's loop, one value at a time) and tts::cuda::reconstruct_selection,
// which evaluates the values in tiles on the device and casts them on the host as the core does.
#include <algorithm>
#include <string>
#include <type_traits>

#include "cuda_raii.hpp"
#include "kernels.hpp"
#include "select.hpp"
#include "trace.hpp"
#include "ttstore/cuda.hpp"
#include "ttstore/internal/dtype_io.hpp"

namespace tts::cuda {
namespace detail {
namespace {

int log2_exact(int64_t x) {  // log2(x) when x is a power of two, else -1
  if (x <= 0 || (x & (x - 1)) != 0) return -1;
  int b = 0;
  while ((int64_t{1} << b) < x) ++b;
  return b;
}

// The spec of a plan's arrays wherever `at` puts them: at(v) is where vector v's copy starts (the
// host arrays themselves, or their device copies). Points are set per tile by the caller.
template <class Where>
SelectSpec spec_of(const tts::detail::SelectionPlan& plan, const SelectArrays& A, Where&& at) {
  SelectSpec p;
  p.d = plan.train.d();
  p.na = static_cast<int>(plan.shape.size());
  p.max_rank = static_cast<int>(plan.train.max_rank());
  p.ranks = at(A.ranks);
  p.modes = at(A.modes);
  p.core_off = at(A.core_off);
  p.cores = at(A.cores);
  p.source = at(A.source);
  p.div = at(A.div);
  p.radix = at(A.radix);
  p.shift = at(A.shift);
  p.flat = plan.flat ? 1 : 0;
  p.expand_bits = plan.expand_bits;
  p.level = at(A.level);
  p.shape = at(A.shape);
  p.start = at(A.start);
  p.step = at(A.step);
  p.out_shape = at(A.out_shape);
  return p;
}

// Values of one tile go to the device and back as float64; a tile bounds that buffer.
constexpr int64_t kSelectTileQueries = int64_t{1} << 22;

}  // namespace

void select_ref(const SelectSpec& s, int64_t n, double* values) {
  const int64_t expand = int64_t{1} << s.expand_bits;
  std::vector<double> v, w;
  int64_t c[kMaxSelectAxes];
  for (int64_t o = 0; o < n; ++o) {
    select_coarse(s, o, c);
    double sum = 0;
    for (int64_t t = 0; t < expand; ++t) {
      const int64_t off = s.flat ? select_fine_offset(s, c, t) : 0;
      v.assign(1, 1.0);
      for (int k = 0; k < s.d; ++k) {
        const int64_t r0 = s.ranks[k], r1 = s.ranks[k + 1], nk = s.modes[k];
        const double* G = s.cores + s.core_off[k] + select_digit(s, c, off, k) * r1;
        w.assign(static_cast<std::size_t>(r1), 0.0);
        for (int64_t a = 0; a < r0; ++a) {
          for (int64_t b = 0; b < r1; ++b) w[b] += v[a] * G[a * nk * r1 + b];
        }
        v.swap(w);
      }
      sum += v[0];
    }
    values[o] = sum / static_cast<double>(expand);
  }
}

SelectArrays select_arrays(const tts::detail::SelectionPlan& plan, const Selection& s) {
  const TensorTrain& t = plan.train;
  const int d = t.d(), na = static_cast<int>(plan.shape.size());
  if (t.max_rank() > kMaxSelectRank) {
    throw Unavailable("the selection kernel takes ranks up to " + std::to_string(kMaxSelectRank) + ", this train has " +
                      std::to_string(t.max_rank()));
  }
  if (na > kMaxSelectAxes) {
    throw Unavailable("the selection kernel takes up to " + std::to_string(kMaxSelectAxes) + " axes");
  }
  SelectArrays A;
  for (int64_t r : t.ranks) A.ranks.push_back(static_cast<int32_t>(r));
  A.modes = t.modes;
  for (int k = 0; k < d; ++k) {
    A.core_off.push_back(static_cast<int64_t>(A.cores.size()));
    A.cores.insert(A.cores.end(), t.cores[k].begin(), t.cores[k].end());
    const int ds = log2_exact(plan.div[k]), rs = log2_exact(plan.radix[k]);
    A.shift.push_back(ds >= 0 && rs >= 0 ? ds : -1);
  }
  A.source = plan.source;
  A.div = plan.div;
  A.radix = plan.radix;
  A.level.assign(plan.level.begin(), plan.level.end());
  A.shape = plan.shape;
  A.out_shape = plan.out_shape;
  for (const AxisSlice& r : s.region) {
    A.start.push_back(r.start);
    A.step.push_back(r.step);
  }
  A.spec = spec_of(plan, A, [](const auto& v) { return v.data(); });
  A.spec.points = s.by_points ? s.points.data() : nullptr;
  return A;
}

}  // namespace detail

void reconstruct_selection(const TensorTrain& tt, const QttLayout& layout, const Selection& s,
                           const MutableArrayView& out, int device) {
  detail::Trace trace("select");
  const tts::detail::SelectionPlan plan = tts::detail::plan_selection(tt, layout, s);
  double n = 1;
  for (int64_t x : plan.out_shape) n *= static_cast<double>(x);
  if (static_cast<double>(out.numel) != n || (!out.data && out.numel > 0)) {
    throw InvalidArgument("output has " + std::to_string(out.numel) + " elements, the selection " +
                          std::to_string(static_cast<int64_t>(n)));
  }
  if (out.numel == 0) return;
  const detail::SelectArrays A = detail::select_arrays(plan, s);
  trace.mark("plan");
  detail::require_device(device);
  detail::DeviceScope scope(device);
  detail::Stream stream;
  std::vector<detail::DeviceBuffer<unsigned char>> held;  // the device copies of A's arrays
  auto on_device = [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    const int64_t bytes = static_cast<int64_t>(sizeof(T) * v.size());
    held.emplace_back(std::max<int64_t>(1, bytes));
    if (bytes > 0) TTS_CUDA(cudaMemcpyAsync(held.back().get(), v.data(), bytes, cudaMemcpyHostToDevice, stream.get()));
    return reinterpret_cast<const T*>(held.back().get());
  };
  detail::SelectSpec dev = detail::spec_of(plan, A, on_device);
  const int na = A.spec.na;
  const int64_t total = out.numel;
  const int64_t tile = std::min(total, std::max<int64_t>(1, detail::kSelectTileQueries >> plan.expand_bits));
  detail::DeviceBuffer<double> values(tile);
  detail::DeviceBuffer<int64_t> points(s.by_points ? tile * na : 0);
  std::vector<double> host(static_cast<std::size_t>(tile));
  stream.sync();
  trace.mark("upload");
  const std::size_t sz = dtype_size(out.dtype);
  unsigned char* dst = static_cast<unsigned char*>(out.data);
  for (int64_t o0 = 0; o0 < total; o0 += tile) {
    const int64_t m = std::min(tile, total - o0);
    if (s.by_points) {
      TTS_CUDA(cudaMemcpyAsync(points.get(), s.points.data() + o0 * na, sizeof(int64_t) * m * na,
                               cudaMemcpyHostToDevice, stream.get()));
      dev.points = points.get();
    }
    detail::launch_select(dev, o0, m, values.get(), stream.get());
    if (trace.on()) {
      stream.sync();
      trace.mark("kernel");
    }
    TTS_CUDA(cudaMemcpyAsync(host.data(), values.get(), sizeof(double) * m, cudaMemcpyDeviceToHost, stream.get()));
    stream.sync();
    trace.mark("download");
    tts::detail::dispatch(out.dtype, [&](auto e) {
      using E = decltype(e);
      for (int64_t i = 0; i < m; ++i) E::store(dst + static_cast<std::size_t>(o0 + i) * sz, host[i]);
      return 0;
    });
    trace.mark("cast");
  }
  trace.note(" values " + std::to_string(total) + " expand " + std::to_string(int64_t{1} << plan.expand_bits) +
             " max rank " + std::to_string(A.spec.max_rank) +
             (A.spec.max_rank <= detail::kSelectRegsLarge ? " (a thread a value)" : " (a warp a value)"));
}

}  // namespace tts::cuda
