// Backend selection and GPU core placement (exports.setBackend and exports.gpu):
//
//   setBackend('auto' | 'cpu' | 'cuda') -> {backend, cudaDevices, reason}   throws (code
//       ERR_TTS_GPU_UNAVAILABLE) for 'cuda' without a usable device
//   gpu.setBudget(bytes); gpu.stats(device) -> {entries, bytes, budgetBytes, evictions}
//   gpu.place(device, id, tt) -> Promise<{residentBefore, bytes, evicted} | {error, message}>
//       error: 'gpu_unsupported' | 'gpu_unavailable' | 'invalid_device'
//   gpu.evict(id) -> boolean; gpu.resident(device, id) -> boolean
//   gpu.copyBandwidth(device, bytes) -> Promise<{h2d, d2h, d2d}> (GB/s)
//   gpu.timedQttSvd(Float32Array, shape, {tolerance, maxRank?}, device, resident)
//       -> Promise<{seconds, relativeError, ranks}>
// Compiled in every build; without TTS_HAVE_CUDA every GPU call answers gpu_unsupported.
#include <cmath>

#include "backend.hpp"
#include "bindings.hpp"
#include "worker.hpp"

#ifdef TTS_HAVE_CUDA
#include "ttstore/cuda.hpp"
#endif

namespace tts_addon {
namespace {

constexpr const char* kGpuUnavailableCode = "ERR_TTS_GPU_UNAVAILABLE";
constexpr const char* kGpuUnsupportedCode = "ERR_TTS_GPU_UNSUPPORTED";

[[noreturn]] void ThrowCoded(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  throw err;
}

Napi::Value SetBackend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) ThrowTypeError(env, "backend must be a string: auto, cpu or cuda");
  const std::string choice = info[0].As<Napi::String>().Utf8Value();
  if (choice != "auto" && choice != "cpu" && choice != "cuda") {
    ThrowRangeError(env, "backend must be auto, cpu or cuda, got '" + choice + "'");
  }
  BackendKind k;
  try {
    k = SelectBackend(choice);
  } catch (const std::runtime_error& e) {
    ThrowCoded(env, CudaCompiled() ? kGpuUnavailableCode : kGpuUnsupportedCode,
               CudaCompiled() ? e.what()
                              : "the CUDA backend was requested but this build has no CUDA backend "
                                "(built without nvcc)");
  }
  std::string why;
  const int n = CudaDeviceCount(&why);
  Napi::Object o = Napi::Object::New(env);
  o.Set("backend", BackendName(k));
  o.Set("cudaDevices", Napi::Number::New(env, n));
  o.Set("reason", n > 0 ? std::string() : why);
  return o;
}

#ifdef TTS_HAVE_CUDA
class PlaceWorker : public PromiseWorker {
 public:
  PlaceWorker(Napi::Env env, int device, int64_t id)
      : PromiseWorker(env, "ttstore.gpu.place"), device_(device), id_(id) {}
  using PromiseWorker::keep_;
  TrainView tt_;

 protected:
  void Run() override {
    try {
      std::vector<const void*> cores(tt_.cores.begin(), tt_.cores.end());
      const tts::Operand op = tts::Operand::train(tt_.modes, tt_.ranks, cores, tt_.f32);
      placed_ = tts::cuda::Residency::instance().place(device_, id_, op);
    } catch (const tts::cuda::Unavailable& e) {
      error_ = "gpu_unavailable";
      message_ = e.what();
    }
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    if (!error_.empty()) {
      o.Set("error", error_);
      o.Set("message", message_);
      return o;
    }
    o.Set("residentBefore", Napi::Boolean::New(env, placed_.resident_before));
    o.Set("bytes", Napi::Number::New(env, static_cast<double>(placed_.bytes)));
    o.Set("evicted", Napi::Number::New(env, static_cast<double>(placed_.evicted)));
    return o;
  }

 private:
  int device_;
  int64_t id_;
  tts::cuda::Placement placed_;
  std::string error_, message_;
};

class BandwidthWorker : public PromiseWorker {
 public:
  BandwidthWorker(Napi::Env env, int device, int64_t bytes)
      : PromiseWorker(env, "ttstore.gpu.bandwidth"), device_(device), bytes_(bytes) {}

 protected:
  void Run() override { bw_ = tts::cuda::copy_bandwidth(device_, bytes_); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("h2d", Napi::Number::New(env, bw_.h2d_gbps));
    o.Set("d2h", Napi::Number::New(env, bw_.d2h_gbps));
    o.Set("d2d", Napi::Number::New(env, bw_.d2d_gbps));
    return o;
  }

 private:
  int device_;
  int64_t bytes_;
  tts::cuda::CopyBandwidth bw_;
};

class TimedSvdWorker : public PromiseWorker {
 public:
  TimedSvdWorker(Napi::Env env, const float* data, tts::QttLayout layout, tts::SvdOptions opt, int device,
                 bool resident)
      : PromiseWorker(env, "ttstore.gpu.timedQttSvd"),
        data_(data),
        layout_(std::move(layout)),
        opt_(opt),
        device_(device),
        resident_(resident) {}
  using PromiseWorker::keep_;

 protected:
  void Run() override { r_ = tts::cuda::timed_qtt_svd(data_, layout_, opt_, device_, resident_); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("seconds", Napi::Number::New(env, r_.seconds));
    o.Set("relativeError", Napi::Number::New(env, r_.relative_error));
    Napi::Array ranks = Napi::Array::New(env, r_.tt.ranks.size());
    for (uint32_t i = 0; i < r_.tt.ranks.size(); ++i)
      ranks.Set(i, Napi::Number::New(env, static_cast<double>(r_.tt.ranks[i])));
    o.Set("ranks", ranks);
    return o;
  }

 private:
  const float* data_;
  tts::QttLayout layout_;
  tts::SvdOptions opt_;
  int device_;
  bool resident_;
  tts::cuda::TimedSvd r_;
};
#endif

// A device index the runtime has; else a rejection-shaped answer (the caller decides 400/503).
int ToDevice(Napi::Env env, Napi::Value v) { return static_cast<int>(ToInteger(env, v, "device", 0, 1 << 20)); }

Napi::Value Place(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int device = ToDevice(env, info[0]);
  const int64_t id = ToInteger(env, info[1], "id", -((int64_t{1} << 53) - 1), (int64_t{1} << 53) - 1);
#ifdef TTS_HAVE_CUDA
  std::string why;
  const int n = CudaDeviceCount(&why);
  auto answer = [&](const char* error, const std::string& message) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("error", error);
    o.Set("message", message);
    Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
    d.Resolve(o);
    return d.Promise();
  };
  if (n == 0) return answer("gpu_unavailable", "no usable CUDA device (" + why + ")");
  if (ActiveBackend() != BackendKind::Cuda) {
    return answer("gpu_unavailable", "the engine runs on the CPU backend (SVC_GATE_ENGINE_BACKEND=cpu)");
  }
  if (device >= n) {
    return answer("invalid_device", "device cuda:" + std::to_string(device) + " does not exist (this server has " +
                                        std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + ")");
  }
  auto w = std::make_unique<PlaceWorker>(env, device, id);
  w->tt_ = ToTrain(env, info[2], "tt", w->keep_);
  return Launch(std::move(w));
#else
  (void)device;
  (void)id;
  Napi::Object o = Napi::Object::New(env);
  o.Set("error", "gpu_unsupported");
  o.Set("message", "this build has no CUDA backend");
  Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
  d.Resolve(o);
  return d.Promise();
#endif
}

Napi::Value Evict(const Napi::CallbackInfo& info) {
  const int64_t id = ToInteger(info.Env(), info[0], "id", -((int64_t{1} << 53) - 1), (int64_t{1} << 53) - 1);
#ifdef TTS_HAVE_CUDA
  return Napi::Boolean::New(info.Env(), tts::cuda::Residency::instance().evict(id));
#else
  (void)id;
  return Napi::Boolean::New(info.Env(), false);
#endif
}

Napi::Value Resident(const Napi::CallbackInfo& info) {
  const int device = ToDevice(info.Env(), info[0]);
  const int64_t id = ToInteger(info.Env(), info[1], "id", -((int64_t{1} << 53) - 1), (int64_t{1} << 53) - 1);
#ifdef TTS_HAVE_CUDA
  return Napi::Boolean::New(info.Env(), tts::cuda::Residency::instance().resident(device, id));
#else
  (void)device;
  (void)id;
  return Napi::Boolean::New(info.Env(), false);
#endif
}

Napi::Value SetBudget(const Napi::CallbackInfo& info) {
  const int64_t bytes = ToInteger(info.Env(), info[0], "bytes", 0, (int64_t{1} << 53) - 1);
#ifdef TTS_HAVE_CUDA
  tts::cuda::Residency::instance().set_budget(bytes);
#else
  (void)bytes;
#endif
  return info.Env().Undefined();
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int device = ToDevice(env, info[0]);
  Napi::Object o = Napi::Object::New(env);
#ifdef TTS_HAVE_CUDA
  const tts::cuda::ResidencyStats s = tts::cuda::Residency::instance().stats(device);
#else
  (void)device;
  struct {
    int64_t entries = 0, bytes = 0, budget_bytes = 0, evictions = 0;
  } s;
#endif
  o.Set("entries", Napi::Number::New(env, static_cast<double>(s.entries)));
  o.Set("bytes", Napi::Number::New(env, static_cast<double>(s.bytes)));
  o.Set("budgetBytes", Napi::Number::New(env, static_cast<double>(s.budget_bytes)));
  o.Set("evictions", Napi::Number::New(env, static_cast<double>(s.evictions)));
  return o;
}

Napi::Value CopyBandwidth(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int device = ToDevice(env, info[0]);
  const int64_t bytes = ToInteger(env, info[1], "bytes", 1, int64_t{1} << 40);
#ifdef TTS_HAVE_CUDA
  return Launch(std::make_unique<BandwidthWorker>(env, device, bytes));
#else
  (void)device;
  (void)bytes;
  ThrowCoded(env, kGpuUnsupportedCode, "this build has no CUDA backend");
#endif
}

Napi::Value TimedQttSvd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#ifdef TTS_HAVE_CUDA
  std::vector<int64_t> shape = ToShape(env, info[1]);
  Bytes data = ToArrayBytes(env, info[0], "data", tts::DType::F32, shape);
  tts::SvdOptions opt = ToSvdOptions(env, info[2]);
  const int device = ToDevice(env, info[3]);
  const bool resident = info[4].ToBoolean().Value();
  tts::QttLayout layout = tts::make_layout(shape, tts::LayoutKind::RowMajor);
  auto w = std::make_unique<TimedSvdWorker>(env, reinterpret_cast<const float*>(data.data), std::move(layout), opt,
                                            device, resident);
  w->keep_.Add(env, info[0]);
  return Launch(std::move(w));
#else
  ThrowCoded(env, kGpuUnsupportedCode, "this build has no CUDA backend");
#endif
}

}  // namespace

void RegisterGpu(Napi::Env env, Napi::Object exports) {
  exports.Set("setBackend", Napi::Function::New(env, Guarded<SetBackend>, "setBackend"));
  Napi::Object gpu = Napi::Object::New(env);
  gpu.Set("place", Napi::Function::New(env, Guarded<Place>, "place"));
  gpu.Set("evict", Napi::Function::New(env, Guarded<Evict>, "evict"));
  gpu.Set("resident", Napi::Function::New(env, Guarded<Resident>, "resident"));
  gpu.Set("setBudget", Napi::Function::New(env, Guarded<SetBudget>, "setBudget"));
  gpu.Set("stats", Napi::Function::New(env, Guarded<Stats>, "stats"));
  gpu.Set("copyBandwidth", Napi::Function::New(env, Guarded<CopyBandwidth>, "copyBandwidth"));
  gpu.Set("timedQttSvd", Napi::Function::New(env, Guarded<TimedQttSvd>, "timedQttSvd"));
  exports.Set("gpu", gpu);
}

}  // namespace tts_addon
