// reconstruct(tt, shape, layout, dtype, reference?) -> Promise<{data: Uint8Array, fingerprint?}>
// fingerprint(tt, shape, layout, reference, dtype) -> Promise<Fingerprint>
// The output ArrayBuffer is allocated here on the main thread and written by the worker in place.
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
  uint8_t* out_ = nullptr;       // null: fingerprint only
  Bytes ref_;                    // data null: no reference
  Napi::ObjectReference out_js_;  // the Uint8Array handed back

 protected:
  void Run() override {
    tts::TensorTrain tt = tt_.Materialize();
    tts::ArrayView ref{ref_.data, dtype_, layout_.numel()};
    tts::MutableArrayView out{out_, dtype_, out_ ? layout_.numel() : 0};
    fingerprint_ = BackendReconstruct(tt, layout_, out, ref);
  }

  Napi::Value Result(Napi::Env env) override {
    if (out_ == nullptr) return FingerprintToJs(env, fingerprint_);
    Napi::Object o = Napi::Object::New(env);
    o.Set("data", out_js_.Value());
    if (ref_.data != nullptr) o.Set("fingerprint", FingerprintToJs(env, fingerprint_));
    return o;
  }

 private:
  TrainView tt_;
  tts::QttLayout layout_;
  tts::DType dtype_;
  tts::Fingerprint fingerprint_;
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
  t.layout = tts::make_layout(t.shape, kind);
  t.tt = ToTrain(env, tt_js, "tt", keep);
  if (t.tt.modes != t.layout.modes) {
    ThrowRangeError(env, "tt.modes " + FormatList(t.tt.modes) + " do not match the modes " +
                             FormatList(t.layout.modes) + " of shape " + FormatList(t.shape) + " in layout " +
                             tts::layout_name(kind));
  }
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
  size_t bytes = static_cast<size_t>(t.layout.numel()) * tts::dtype_size(dtype);
  Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, bytes);
  Napi::Uint8Array out = Napi::Uint8Array::New(env, bytes, ab, 0);

  auto w = std::make_unique<ReconstructWorker>(env, std::move(t.tt), std::move(t.layout), dtype);
  w->keep_ = std::move(keep);
  w->keep_.Add(env, out);
  if (has_ref) w->keep_.Add(env, info[4]);
  w->out_ = static_cast<uint8_t*>(ab.Data());
  w->ref_ = ref;
  w->out_js_ = Napi::Persistent(out.As<Napi::Object>());
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
