// widen(src, dtype, dst, dstOffset, lanes?) -> Promise<void>: the elements of `src` (a whole number
// of `dtype` elements) as float64 into dst[dstOffset, dstOffset + n), on a worker thread. The server
// converts an upload this way while it arrives, into compress()'s `gathered` (tts::widen). `lanes`
// (a Float64Array of 16) takes each value's square in lane (dstOffset + i) mod 16: converted in
// order, the pieces' lanes total compress()'s `gatheredSumSquares`.
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

class WidenWorker : public PromiseWorker {
 public:
  WidenWorker(Napi::Env env, Bytes src, tts::DType dtype, int64_t n, double* dst, double* lanes, int64_t first)
      : PromiseWorker(env, "ttstore.widen"), src_(src), dtype_(dtype), n_(n), dst_(dst), lanes_(lanes), first_(first) {}
  using PromiseWorker::keep_;

 protected:
  void Run() override { tts::widen(src_.data, dtype_, n_, dst_, lanes_, first_); }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  Bytes src_;
  tts::DType dtype_;
  int64_t n_;
  double* dst_;
  double* lanes_;
  int64_t first_;
};

}  // namespace

Napi::Value Widen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Bytes src = ToBytes(env, info[0], "src");
  const tts::DType dtype = ToDType(env, info[1]);
  if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    ThrowTypeError(env, "dst must be a Float64Array");
  }
  Napi::Float64Array dst = info[2].As<Napi::Float64Array>();
  const std::size_t size = tts::dtype_size(dtype);
  if (src.length % size != 0) {
    ThrowRangeError(env, "src holds " + std::to_string(src.length) + " bytes, not a whole number of " +
                             tts::dtype_name(dtype) + " elements");
  }
  const int64_t n = static_cast<int64_t>(src.length / size);
  const int64_t offset = ToInteger(env, info[3], "dstOffset", 0, static_cast<int64_t>(dst.ElementLength()));
  if (offset + n > static_cast<int64_t>(dst.ElementLength())) {
    ThrowRangeError(env, std::to_string(n) + " elements at dstOffset " + std::to_string(offset) + " overrun dst of " +
                             std::to_string(dst.ElementLength()));
  }
  double* lanes = nullptr;
  if (!info[4].IsUndefined()) {
    if (!info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
      ThrowTypeError(env, "lanes must be a Float64Array");
    }
    Napi::Float64Array l = info[4].As<Napi::Float64Array>();
    if (l.ElementLength() != static_cast<std::size_t>(tts::kSquareLanes)) {
      ThrowRangeError(env, "lanes holds " + std::to_string(l.ElementLength()) + " values, not " +
                               std::to_string(tts::kSquareLanes));
    }
    lanes = l.Data();
  }
  auto w = std::make_unique<WidenWorker>(env, src, dtype, n, dst.Data() + offset, lanes, offset);
  w->keep_.Add(env, info[0]);
  w->keep_.Add(env, info[2]);
  if (lanes != nullptr) w->keep_.Add(env, info[4]);
  return Launch(std::move(w));
}

}  // namespace tts_addon
