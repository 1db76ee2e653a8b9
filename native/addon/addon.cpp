// Module registration. Every export is wrapped so that no C++ exception can leave a call other
// than as a JS exception: the core's InvalidArgument becomes a RangeError with code
// ERR_TTS_INVALID, anything else an Error with code ERR_TTS_INTERNAL.
#include "napi_env.hpp"

#include <new>

#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

template <Napi::Value (*F)(const Napi::CallbackInfo&)>
void Export(Napi::Env env, Napi::Object exports, const char* name) {
  exports.Set(name, Napi::Function::New(env, Guarded<F>, name));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Export<Info>(env, exports, "info");
  Export<LayoutFor>(env, exports, "layoutFor");
  Export<TrainWork>(env, exports, "trainWork");
  Export<SetThreads>(env, exports, "setThreads");
  Export<RetainFreedMemory>(env, exports, "retainFreedMemory");
  Export<Compress>(env, exports, "compress");
  Export<Widen>(env, exports, "widen");
  Export<Reconstruct>(env, exports, "reconstruct");
  Export<Fingerprint>(env, exports, "fingerprint");
  Export<Selection>(env, exports, "selection");
  Export<ReconstructSelection>(env, exports, "reconstructSelection");
  Export<SelectDense>(env, exports, "selectDense");
  Export<Norm>(env, exports, "norm");
  // Test-only: no service calls these (src/engine's EngineTestCalls); the engine tests check the
  // core's contractions and rounding through them.
  Export<Dot>(env, exports, "dot");
  Export<Distance>(env, exports, "distance");
  Export<DotBatch>(env, exports, "dotBatch");
  Export<Round>(env, exports, "round");
  Export<Solvers>(env, exports, "solvers");
  Export<Simulate>(env, exports, "simulate");
  Export<CheckSimulation>(env, exports, "checkSimulation");
  Export<SolverParams>(env, exports, "solverParams");
  RegisterLimits(env, exports);
  RegisterOperandPool(env, exports);
  RegisterGpu(env, exports);
  return exports;
}

}  // namespace
}  // namespace tts_addon

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return tts_addon::Init(env, exports); }
NODE_API_MODULE(ttstore, InitModule)
