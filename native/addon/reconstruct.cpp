// reconstruct(tt, shape, layout, dtype, reference?, out?) -> Promise<{data: Uint8Array, fingerprint?}>
// fingerprint(tt, shape, layout, reference, dtype) -> Promise<Fingerprint>
// Without `out`, the output is allocated and written on the worker thread (a 2^24-element array is
// 64 MiB: zeroing it on the main thread would stall the event loop for tens of milliseconds) and
// handed to JavaScript as an external ArrayBuffer that frees it, without a copy. With `out` (a
// Uint8Array of exactly numel * item size bytes, not overlapping `reference`), the array is written
// into it and `data` is `out` itself: a caller that reuses its buffers skips the fresh allocation,
// whose first touch (page faults) can cost more than the reconstruction.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "backend.hpp"
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

class ReconstructWorker : public PromiseWorker {
 public:
  ReconstructWorker(Napi::Env env, TrainView tt, tts::QttLayout layout, tts::DType dtype)
      : PromiseWorker(env, "ttstore.reconstruct"), tt_(std::move(tt)), layout_(std::move(layout)), dtype_(dtype) {}
  using PromiseWorker::keep_;
  bool want_out_ = false;           // false: fingerprint only
  Bytes ref_;                       // data null: no reference
  uint8_t* given_ = nullptr;        // the caller's output buffer, or null
  Napi::ObjectReference given_js_;  // the same buffer as a JS value (kept alive), handed back as `data`

 protected:
  void Run() override {
    tts::TensorTrain tt = tt_.Materialize();
    tts::ArrayView ref{ref_.data, dtype_, layout_.numel()};
    if (want_out_ && given_ == nullptr) out_.Allocate(static_cast<size_t>(layout_.numel()) * tts::dtype_size(dtype_));
    tts::MutableArrayView out{given_ != nullptr ? given_ : out_.data.get(), dtype_, want_out_ ? layout_.numel() : 0};
    fingerprint_ = BackendReconstruct(tt, layout_, out, ref);
  }

  Napi::Value Result(Napi::Env env) override {
    if (!want_out_) return FingerprintToJs(env, fingerprint_);
    if (!given_js_.IsEmpty()) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("data", given_js_.Value());
      if (ref_.data != nullptr) o.Set("fingerprint", FingerprintToJs(env, fingerprint_));
      return o;
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("data", out_.ToJs(env));
    if (ref_.data != nullptr) o.Set("fingerprint", FingerprintToJs(env, fingerprint_));
    return o;
  }

 private:
  TrainView tt_;
  tts::QttLayout layout_;
  tts::DType dtype_;
  tts::Fingerprint fingerprint_;
  OutputBytes out_;
};

struct Target {
  TrainView tt;
  std::vector<int64_t> shape;
  tts::QttLayout layout;
};

Target ToTarget(Napi::Env env, Napi::Value tt_js, Napi::Value shape_js, Napi::Value layout_js, KeepAlive& keep) {
  Target t;
  t.shape = ToShape(env, shape_js);
  tts::LayoutKind kind = ToLayoutKind(env, layout_js);
  t.tt = ToTrain(env, tt_js, "tt", keep);
  t.layout = ToTrainLayout(env, t.shape, kind, t.tt.modes);
  return t;
}

}  // namespace

Napi::Value Reconstruct(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KeepAlive keep;
  Target t = ToTarget(env, info[0], info[1], info[2], keep);
  tts::DType dtype = ToDType(env, info[3]);
  Bytes ref;
  bool has_ref = !info[4].IsUndefined() && !info[4].IsNull();
  if (has_ref) ref = ToArrayBytes(env, info[4], "reference", dtype, t.shape);
  auto w = std::make_unique<ReconstructWorker>(env, std::move(t.tt), std::move(t.layout), dtype);
  w->keep_ = std::move(keep);
  if (has_ref) w->keep_.Add(env, info[4]);
  w->want_out_ = true;
  w->ref_ = ref;
  if (!info[5].IsUndefined() && !info[5].IsNull()) {
    if (!info[5].IsTypedArray() || info[5].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      ThrowTypeError(env, "out must be a Uint8Array (or Buffer)");
    }
    Bytes out = ToArrayBytes(env, info[5], "out", dtype, t.shape);
    if (has_ref && out.length > 0 && out.data < ref.data + ref.length && ref.data < out.data + out.length) {
      ThrowRangeError(env, "out must not overlap reference");
    }
    w->given_ = const_cast<uint8_t*>(out.data);  // a JS Uint8Array: writable memory
    w->given_js_ = Napi::Persistent(info[5].As<Napi::Object>());
  }
  return Launch(std::move(w));
}

Napi::Value Fingerprint(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KeepAlive keep;
  Target t = ToTarget(env, info[0], info[1], info[2], keep);
  tts::DType dtype = ToDType(env, info[4]);
  Bytes ref = ToArrayBytes(env, info[3], "reference", dtype, t.shape);
  auto w = std::make_unique<ReconstructWorker>(env, std::move(t.tt), std::move(t.layout), dtype);
  w->keep_ = std::move(keep);
  w->keep_.Add(env, info[3]);
  w->ref_ = ref;
  return Launch(std::move(w));
}

}  // namespace tts_addon
