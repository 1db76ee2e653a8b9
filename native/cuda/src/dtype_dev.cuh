// Private: device twins of native/core/internal/ttstore/internal/dtype_io.hpp (load as float64, store with the cast of
// CONTRACT.md sections 2-3: floats cast, float16 IEEE round-to-nearest-even straight from float64,
// integers rounded half to even and saturated, bool = value >= 0.5).
#pragma once

#include <cstdint>

#include "ttstore/types.hpp"

namespace tts::cuda::detail {

struct HalfBits {
  uint16_t bits;
};
struct BoolByte {
  uint8_t bits;
};

__device__ inline double dev_half_to_double(uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) v = ldexp(static_cast<double>(mant), -24);
  else if (exp == 31)
    v = mant ? __longlong_as_double(0x7ff8000000000000LL) : __longlong_as_double(0x7ff0000000000000LL);
  else v = ldexp(static_cast<double>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

__device__ inline uint64_t dev_rne_shift(uint64_t m, int s) {
  const uint64_t q = m >> s, rem = m & ((uint64_t{1} << s) - 1), half = uint64_t{1} << (s - 1);
  return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

__device__ inline uint16_t dev_double_to_half(double d) {
  const uint64_t b = static_cast<uint64_t>(__double_as_longlong(d));
  const uint16_t sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  const int exp = static_cast<int>((b >> 52) & 0x7ff);
  uint64_t mant = b & 0xFFFFFFFFFFFFFull;
  if (exp == 0x7ff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  const int e = exp - 1023 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= uint64_t{1} << 52;
    return static_cast<uint16_t>(sign | dev_rne_shift(mant, 43 - e));
  }
  const uint64_t m = dev_rne_shift(mant, 42);
  return static_cast<uint16_t>(sign | ((static_cast<uint64_t>(e) << 10) + m));
}

template <class T>
struct IntRange;  // value bits, as std::numeric_limits<T>::digits
// One line a type, kept as a table.
// clang-format off
template <> struct IntRange<int64_t> { static constexpr int bits = 63; static constexpr bool is_signed = true; };
template <> struct IntRange<int32_t> { static constexpr int bits = 31; static constexpr bool is_signed = true; };
template <> struct IntRange<int16_t> { static constexpr int bits = 15; static constexpr bool is_signed = true; };
template <> struct IntRange<int8_t> { static constexpr int bits = 7; static constexpr bool is_signed = true; };
template <> struct IntRange<uint64_t> { static constexpr int bits = 64; static constexpr bool is_signed = false; };
template <> struct IntRange<uint32_t> { static constexpr int bits = 32; static constexpr bool is_signed = false; };
template <> struct IntRange<uint16_t> { static constexpr int bits = 16; static constexpr bool is_signed = false; };
template <> struct IntRange<uint8_t> { static constexpr int bits = 8; static constexpr bool is_signed = false; };
// clang-format on

template <class T>
__device__ inline T dev_round_saturate(double v) {
  if (isnan(v)) return T(0);
  const double r = rint(v);  // half to even
  const double hi = ldexp(1.0, IntRange<T>::bits);
  const double lo = IntRange<T>::is_signed ? -hi : 0.0;
  if constexpr (IntRange<T>::is_signed) {
    const int64_t max = static_cast<int64_t>((uint64_t{1} << IntRange<T>::bits) - 1);
    if (r >= hi) return static_cast<T>(max);
    if (r <= lo) return static_cast<T>(-max - 1);
  } else {
    if (r >= hi) return static_cast<T>(~T(0));
    if (r <= lo) return T(0);
  }
  return static_cast<T>(r);
}

template <class S>
struct DevElem {
  __device__ static double load(const void* base, int64_t i) {
    return static_cast<double>(static_cast<const S*>(base)[i]);
  }
  __device__ static double store(void* base, int64_t i, double v) {  // returns the stored value as float64
    S s;
    if constexpr (sizeof(S) >= 4 && (S(0.5) != S(0))) {
      s = static_cast<S>(v);  // float / double
    } else {
      s = dev_round_saturate<S>(v);
    }
    if (base) static_cast<S*>(base)[i] = s;
    return static_cast<double>(s);
  }
};
template <>
struct DevElem<HalfBits> {
  __device__ static double load(const void* base, int64_t i) {
    return dev_half_to_double(static_cast<const uint16_t*>(base)[i]);
  }
  __device__ static double store(void* base, int64_t i, double v) {
    const uint16_t h = dev_double_to_half(v);
    if (base) static_cast<uint16_t*>(base)[i] = h;
    return dev_half_to_double(h);
  }
};
template <>
struct DevElem<BoolByte> {
  __device__ static double load(const void* base, int64_t i) {
    return static_cast<const uint8_t*>(base)[i] ? 1.0 : 0.0;
  }
  __device__ static double store(void* base, int64_t i, double v) {
    const uint8_t b = v >= 0.5 ? 1 : 0;
    if (base) static_cast<uint8_t*>(base)[i] = b;
    return b;
  }
};

// Calls f(DevElem<S>{}) on the host for the storage type of t (to pick a kernel instantiation).
template <class F>
inline void dev_dispatch(DType t, F&& f) {
  switch (t) {
    case DType::F64: f(DevElem<double>{}); return;
    case DType::F32: f(DevElem<float>{}); return;
    case DType::F16: f(DevElem<HalfBits>{}); return;
    case DType::I64: f(DevElem<int64_t>{}); return;
    case DType::I32: f(DevElem<int32_t>{}); return;
    case DType::I16: f(DevElem<int16_t>{}); return;
    case DType::I8: f(DevElem<int8_t>{}); return;
    case DType::U64: f(DevElem<uint64_t>{}); return;
    case DType::U32: f(DevElem<uint32_t>{}); return;
    case DType::U16: f(DevElem<uint16_t>{}); return;
    case DType::U8: f(DevElem<uint8_t>{}); return;
    case DType::Bool: f(DevElem<BoolByte>{}); return;
  }
  throw InvalidArgument("unknown dtype");
}

}  // namespace tts::cuda::detail
