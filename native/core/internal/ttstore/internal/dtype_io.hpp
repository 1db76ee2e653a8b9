// Private: element conversions between the array dtypes and float64.
// Loads go through memcpy because arrays arrive from arbitrary offsets (unaligned views).
// Stores implement CONTRACT.md section 2/3: floats cast (float16: IEEE half, round to nearest even),
// integers rounded half to even and saturated to the dtype's range, bool = (value >= 0.5).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ttstore/types.hpp"

namespace tts::detail {

struct Half {  // storage tag for float16
  uint16_t bits;
};
struct Bool8 {  // storage tag for bool (one byte, nonzero = true)
  uint8_t bits;
};

inline double half_to_double(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

// Round-to-nearest-even shift of a mantissa by s (1 <= s <= 63) bits.
inline uint64_t rne_shift(uint64_t m, int s) {
  const uint64_t q = m >> s;
  const uint64_t rem = m & ((uint64_t{1} << s) - 1);
  const uint64_t half = uint64_t{1} << (s - 1);
  return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

// float64 -> IEEE half directly (no double rounding through float32), as NumPy's astype does.
inline uint16_t double_to_half(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  const uint16_t sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  const int exp = static_cast<int>((b >> 52) & 0x7ff);
  uint64_t mant = b & 0xFFFFFFFFFFFFFull;
  if (exp == 0x7ff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  const int e = exp - 1023 + 15;  // biased half exponent
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
    mant |= uint64_t{1} << 52;
    return static_cast<uint16_t>(sign | rne_shift(mant, 43 - e));  // a carry lands in the exponent
  }
  const uint64_t m = rne_shift(mant, 42);  // may carry to 0x400: exponent + 1 (up to inf)
  return static_cast<uint16_t>(sign | ((static_cast<uint64_t>(e) << 10) + m));
}

template <class T>
T round_saturate(double v) {
  if (std::isnan(v)) return T(0);
  const double r = std::nearbyint(v);                   // default rounding mode: half to even
  constexpr int bits = std::numeric_limits<T>::digits;  // value bits (63 for int64, 64 for uint64)
  const double hi = std::ldexp(1.0, bits);              // first value past the range (exact)
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  if (r >= hi) return std::numeric_limits<T>::max();
  if (r <= lo) return std::numeric_limits<T>::min();
  return static_cast<T>(r);
}

// ---- per storage type: load as float64, store from float64, value after the cast ---------------
template <class S>
struct Elem {
  static double load(const unsigned char* p) {
    S v;
    std::memcpy(&v, p, sizeof(S));
    return static_cast<double>(v);
  }
  static S cast(double v) {
    if constexpr (std::is_floating_point_v<S>) {
      return static_cast<S>(v);
    } else {
      return round_saturate<S>(v);
    }
  }
  static void store(unsigned char* p, double v) {
    const S s = cast(v);
    std::memcpy(p, &s, sizeof(S));
  }
  static double cast_value(double v) { return static_cast<double>(cast(v)); }
};
template <>
struct Elem<Half> {
  static double load(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_double(h);
  }
  static void store(unsigned char* p, double v) {
    const uint16_t h = double_to_half(v);
    std::memcpy(p, &h, 2);
  }
  static double cast_value(double v) { return half_to_double(double_to_half(v)); }
};
template <>
struct Elem<Bool8> {
  static double load(const unsigned char* p) { return *p ? 1.0 : 0.0; }
  static void store(unsigned char* p, double v) { *p = (v >= 0.5) ? 1 : 0; }
  static double cast_value(double v) { return (v >= 0.5) ? 1.0 : 0.0; }
};

// Calls f(Elem<S>{}) for the storage type of t; S has sizeof == dtype_size(t).
template <class F>
decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case DType::F64: return f(Elem<double>{});
    case DType::F32: return f(Elem<float>{});
    case DType::F16: return f(Elem<Half>{});
    case DType::I64: return f(Elem<int64_t>{});
    case DType::I32: return f(Elem<int32_t>{});
    case DType::I16: return f(Elem<int16_t>{});
    case DType::I8: return f(Elem<int8_t>{});
    case DType::U64: return f(Elem<uint64_t>{});
    case DType::U32: return f(Elem<uint32_t>{});
    case DType::U16: return f(Elem<uint16_t>{});
    case DType::U8: return f(Elem<uint8_t>{});
    case DType::Bool: return f(Elem<Bool8>{});
  }
  throw InvalidArgument("unknown dtype");
}

// The float64 value of v after the cast to dtype t (what a reader of that dtype sees).
inline double cast_value(double v, DType t) {
  return dispatch(t, [v](auto e) { return decltype(e)::cast_value(v); });
}

}  // namespace tts::detail
