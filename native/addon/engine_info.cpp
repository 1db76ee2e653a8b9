// The synchronous entry points: cheap, no array data.
#include "args.hpp"
#include "backend.hpp"
#include "bindings.hpp"

namespace tts_addon {

Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  tts::EngineInfo e = tts::engine_info();
  Napi::Object o = Napi::Object::New(env);
  o.Set("version", e.version);
  o.Set("backend", BackendName(ActiveBackend()));  // the core says "cpu"; setBackend may pick cuda
  o.Set("blas", e.blas);
  o.Set("threads", Napi::Number::New(env, e.threads));
  o.Set("cudaDevices", Napi::Number::New(env, CudaDeviceCount()));  // 0 without CUDA, a driver or a device
  o.Set("cudaCompiled", Napi::Boolean::New(env, CudaCompiled()));
  return o;
}

Napi::Value LayoutFor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<int64_t> shape = ToShape(env, info[0]);
  tts::QttLayout layout = ToLayout(env, shape, info[1]);
  Napi::Array modes = Napi::Array::New(env, layout.modes.size());
  for (uint32_t i = 0; i < layout.modes.size(); ++i) {
    modes.Set(i, Napi::Number::New(env, static_cast<double>(layout.modes[i])));
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("layout", tts::layout_name(layout.kind));
  o.Set("modes", modes);
  return o;
}

Napi::Value TrainWork(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t kMaxSize = (int64_t{1} << 53) - 1;
  const std::vector<int64_t> modes = ToIntegerList(env, info[0], "modes", 1, kMaxSize);
  const std::vector<int64_t> ranks = ToIntegerList(env, info[1], "ranks", 1, kMaxSize);
  const std::vector<int64_t> target = ToIntegerList(env, info[2], "target", 1, kMaxSize);
  tts::TrainWork w;
  try {
    w = tts::train_work(modes, ranks, target);
  } catch (const tts::InvalidArgument& e) {
    ThrowRangeError(env, e.what());
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("contraction", Napi::Number::New(env, w.contraction));
  o.Set("reconstruction", Napi::Number::New(env, w.reconstruction));
  o.Set("resplit", Napi::Number::New(env, w.resplit));
  o.Set("resplitElements", Napi::Number::New(env, w.resplit_elements));
  o.Set("max", Napi::Number::New(env, w.max()));
  o.Set("withinLimits", Napi::Boolean::New(env, w.within_limits()));
  return o;
}

void RegisterLimits(Napi::Env env, Napi::Object exports) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("maxRank", Napi::Number::New(env, static_cast<double>(tts::kMaxRank)));
  o.Set("maxTrainWork", Napi::Number::New(env, tts::kMaxTrainWork));
  o.Set("maxRebuildWorkPerValue", Napi::Number::New(env, tts::kMaxRebuildWorkPerValue));
  o.Set("maxTurnWork", Napi::Number::New(env, tts::kMaxTurnWork));
  o.Set("lightTurnWork", Napi::Number::New(env, tts::kLightTurnWork));
  o.Set("maxSelectionWorkPerValue", Napi::Number::New(env, tts::kMaxSelectionWorkPerValue));
  exports.Set("limits", o);
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  tts::set_threads(static_cast<int>(ToInteger(env, info[0], "threads", 0, 4096)));
  return env.Undefined();
}

}  // namespace tts_addon
