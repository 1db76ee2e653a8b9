// Argument checking for the binding: every JS value is validated on the main thread, before any work
// is queued, and a bad one becomes a TypeError (wrong kind of value) or a RangeError (right kind,
// wrong value), both with code ERR_TTS_INVALID, so callers can map them to a 400 in one place.
#pragma once

#include "napi_env.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "ttstore/layout.hpp"
#include "ttstore/limits.hpp"
#include "ttstore/tt.hpp"

namespace tts_addon {

inline constexpr const char* kInvalidCode = "ERR_TTS_INVALID";
inline constexpr const char* kInternalCode = "ERR_TTS_INTERNAL";

[[noreturn]] void ThrowTypeError(Napi::Env env, const std::string& message);
[[noreturn]] void ThrowRangeError(Napi::Env env, const std::string& message);

// "[3,4]" for messages.
std::string FormatList(const std::vector<int64_t>& v);

// An integer-valued Number in [lo, hi].
int64_t ToInteger(Napi::Env env, Napi::Value v, const std::string& what, int64_t lo, int64_t hi);
// An array of such integers.
std::vector<int64_t> ToIntegerList(Napi::Env env, Napi::Value v, const std::string& what, int64_t lo, int64_t hi);

// An array of 0..8 integer axis sizes, each >= 1; the product (numel) must fit in 2^53.
std::vector<int64_t> ToShape(Napi::Env env, Napi::Value v, const char* what = "shape");
int64_t ShapeNumel(const std::vector<int64_t>& shape);

tts::DType ToDType(Napi::Env env, Napi::Value v);
tts::LayoutKind ToLayoutKind(Napi::Env env, Napi::Value v);
// Layout for a shape; `layout` undefined means the engine's choice.
tts::QttLayout ToLayout(Napi::Env env, const std::vector<int64_t>& shape, Napi::Value layout);

// The layout a stored train of these modes is read in: row_major takes any split of the C-order
// flattening (a train put with its own mode sizes); interleaved fixes the mode sizes by the shape.
// RangeError when the modes fit neither.
tts::QttLayout ToTrainLayout(Napi::Env env, const std::vector<int64_t>& shape, tts::LayoutKind kind,
                             const std::vector<int64_t>& modes);

// {tolerance, maxRank?} with 0 <= tolerance < 1 and maxRank in 1..tts::kMaxRank (absent: no cap).
tts::SvdOptions ToSvdOptions(Napi::Env env, Napi::Value v);

// The bytes of a Buffer, TypedArray or DataView, in place (no copy). `data` is null only when
// the view is empty or detached.
struct Bytes {
  const uint8_t* data = nullptr;
  size_t length = 0;
};
Bytes ToBytes(Napi::Env env, Napi::Value v, const char* what);
// The same, and checks that the length is numel * item size of dtype.
Bytes ToArrayBytes(Napi::Env env, Napi::Value v, const char* what, tts::DType dtype, const std::vector<int64_t>& shape);

// A JS tensor train checked for structure on the main thread; the core values are read in place
// (Float32Array or Float64Array) and turned into a tts::TensorTrain on the worker thread, where
// TensorTrain::validate also rejects non-finite values.
struct TrainView {
  std::vector<int64_t> modes;
  std::vector<int64_t> ranks;
  std::vector<const void*> cores;  // each ranks[k] * modes[k] * ranks[k+1] elements
  bool f32 = false;

  int64_t CoreElements(size_t k) const { return ranks[k] * modes[k] * ranks[k + 1]; }
  tts::TensorTrain Materialize() const;  // worker thread: copies into float64 vectors, validates
};

// Keeps JS values (the arrays a worker reads or writes) alive until the worker is destroyed.
class KeepAlive {
 public:
  void Add(Napi::Env env, Napi::Value v);

 private:
  Napi::ObjectReference holder_;
  uint32_t count_ = 0;
};

TrainView ToTrain(Napi::Env env, Napi::Value v, const std::string& what, KeepAlive& keep);

}  // namespace tts_addon
