// DType names and sizes (CONTRACT.md section 2: NumPy names), and widen(): any dtype to float64.
#include <cstring>

#include "ttstore/internal/dtype_io.hpp"
#include "ttstore/tt.hpp"
#include "ttstore/types.hpp"

namespace tts {

namespace {
struct DTypeInfo {
  DType t;
  const char* name;
  std::size_t size;
  bool integer;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "float64", 8, false}, {DType::F32, "float32", 4, false}, {DType::F16, "float16", 2, false},
    {DType::I64, "int64", 8, true},    {DType::I32, "int32", 4, true},    {DType::I16, "int16", 2, true},
    {DType::I8, "int8", 1, true},      {DType::U64, "uint64", 8, true},   {DType::U32, "uint32", 4, true},
    {DType::U16, "uint16", 2, true},   {DType::U8, "uint8", 1, true},     {DType::Bool, "bool", 1, true},
};
const DTypeInfo& info(DType t) {
  for (const auto& d : kDTypes) {
    if (d.t == t) return d;
  }
  throw InvalidArgument("unknown dtype code " + std::to_string(static_cast<int>(t)));
}
}  // namespace

DType dtype_from_name(const std::string& name) {
  for (const auto& d : kDTypes) {
    if (name == d.name) return d.t;
  }
  throw InvalidArgument("unknown dtype '" + name +
                        "' (expected float64, float32, float16, int64, int32, int16, int8, uint64, "
                        "uint32, uint16, uint8 or bool)");
}
const char* dtype_name(DType t) { return info(t).name; }
std::size_t dtype_size(DType t) { return info(t).size; }
bool dtype_is_integer(DType t) { return info(t).integer; }

namespace {

// widen() of a float type that also adds each value's square to its lane (see tt.hpp): a scalar
// head up to a lane boundary, whole rows of kSquareLanes (the inner loop vectorises across lanes,
// each lane still adding its elements in order), a scalar tail.
template <typename F>
void widen_with_squares(const unsigned char* p, int64_t n, double* dst, double* lanes, int64_t first) {
  auto load = [p](int64_t i) {
    F v;
    std::memcpy(&v, p + static_cast<std::size_t>(i) * sizeof(F), sizeof(F));
    return static_cast<double>(v);
  };
  constexpr int L = kSquareLanes;
  int64_t i = 0;
  for (; i < n && (first + i) % L != 0; ++i) {
    const double v = load(i);
    dst[i] = v;
    lanes[(first + i) % L] += v * v;
  }
  double acc[L];
  std::memcpy(acc, lanes, sizeof acc);
  for (; i + L <= n; i += L) {
    for (int j = 0; j < L; ++j) {
      const double v = load(i + j);
      dst[i + j] = v;
      acc[j] += v * v;
    }
  }
  std::memcpy(lanes, acc, sizeof acc);
  for (; i < n; ++i) {
    const double v = load(i);
    dst[i] = v;
    lanes[(first + i) % L] += v * v;
  }
}

}  // namespace

double sum_square_lanes(const double* lanes) {
  double s = 0;
  for (int j = 0; j < kSquareLanes; ++j) s += lanes[j];
  return s;
}

void widen(const void* src, DType dtype, int64_t n, double* dst, double* lanes, int64_t first) {
  if (n < 0) throw InvalidArgument("widen: negative element count");
  if (first < 0) throw InvalidArgument("widen: negative first index");
  const unsigned char* p = static_cast<const unsigned char*>(src);
  if (lanes != nullptr && (dtype == DType::F32 || dtype == DType::F64)) {
    if (dtype == DType::F32) {
      widen_with_squares<float>(p, n, dst, lanes, first);
    } else {
      widen_with_squares<double>(p, n, dst, lanes, first);
    }
    return;
  }
  if (dtype == DType::F64) {
    std::memcpy(dst, p, static_cast<std::size_t>(n) * 8);
  } else if (dtype == DType::F32) {  // a constant stride, so the loop vectorises
    for (int64_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, p + static_cast<std::size_t>(i) * 4, 4);
      dst[i] = v;
    }
  } else {
    const std::size_t sz = dtype_size(dtype);
    detail::dispatch(dtype, [&](auto e) {
      using E = decltype(e);
      for (int64_t i = 0; i < n; ++i) dst[i] = E::load(p + static_cast<std::size_t>(i) * sz);
      return 0;
    });
  }
  if (lanes != nullptr) {
    for (int64_t i = 0; i < n; ++i) lanes[(first + i) % kSquareLanes] += dst[i] * dst[i];
  }
}

}  // namespace tts
