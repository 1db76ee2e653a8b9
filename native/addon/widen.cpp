// widen(src, dtype, dst, dstOffset) -> Promise<void>: the elements of `src` (a whole number of
// `dtype` elements) as float64 into dst[dstOffset, dstOffset + n), on a worker thread. The server
// converts an upload this way while it arrives, into compress()'s `gathered` (tts::widen).
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

class WidenWorker : public PromiseWorker {
 public:
  WidenWorker(Napi::Env env, Bytes src, tts::DType dtype, int64_t n, double* dst)
      : PromiseWorker(env, "ttstore.widen"), src_(src), dtype_(dtype), n_(n), dst_(dst) {}
  using PromiseWorker::keep_;

 protected:
  void Run() override { tts::widen(src_.data, dtype_, n_, dst_); }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  Bytes src_;
  tts::DType dtype_;
  int64_t n_;
  double* dst_;
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
    ThrowRangeError(env, std::to_string(n) + " elements at dstOffset " + std::to_string(offset) +
                             " overrun dst of " + std::to_string(dst.ElementLength()));
  }
  auto w = std::make_unique<WidenWorker>(env, src, dtype, n, dst.Data() + offset);
  w->keep_.Add(env, info[0]);
  w->keep_.Add(env, info[2]);
  return Launch(std::move(w));
}

}  // namespace tts_addon
