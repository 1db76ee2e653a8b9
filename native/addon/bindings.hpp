// The functions the addon exports, one file per operation. Each takes JS arguments, validates them
// on the main thread and either answers at once (info, layoutFor, setThreads, retainFreedMemory) or
// returns a Promise settled by a worker (everything that touches array data or core values).
#pragma once

#include "napi_env.hpp"

namespace tts_addon {

Napi::Value Info(const Napi::CallbackInfo& info);        // {version, backend, blas, threads, cudaDevices}
Napi::Value LayoutFor(const Napi::CallbackInfo& info);   // (shape, layout?) -> {layout, modes}
Napi::Value SetThreads(const Napi::CallbackInfo& info);  // (n) -> undefined; 0 = all cores
// (modes, ranks, target) -> {contraction, reconstruction, resplit, resplitElements, max, withinLimits}: tts::train_work
Napi::Value TrainWork(const Napi::CallbackInfo& info);
// (trimThresholdBytes, mmapThresholdBytes) -> applied: glibc malloc's settings for the process
Napi::Value RetainFreedMemory(const Napi::CallbackInfo& info);

Napi::Value Compress(const Napi::CallbackInfo&
                         info);  // (data, dtype, shape, {tolerance, maxRank?, layout?, gathered?, gatheredSumSquares?})
Napi::Value Widen(
    const Napi::CallbackInfo& info);  // (src, dtype, dst: Float64Array, dstOffset, lanes?: Float64Array(16))
Napi::Value Reconstruct(const Napi::CallbackInfo& info);  // (tt, shape, layout, dtype, reference?)
Napi::Value Fingerprint(const Napi::CallbackInfo& info);  // (tt, shape, layout, reference, dtype)

// Parts of an entry (selection.cpp): (shape, selection, train?) -> {shape, work}, synchronous checks;
// (tt, shape, layout, dtype, selection) and (data, dtype, shape, selection) -> Promise<Uint8Array>
Napi::Value Selection(const Napi::CallbackInfo& info);
Napi::Value ReconstructSelection(const Napi::CallbackInfo& info);
Napi::Value SelectDense(const Napi::CallbackInfo& info);

Napi::Value Dot(const Napi::CallbackInfo& info);       // (a, b)
Napi::Value Norm(const Napi::CallbackInfo& info);      // (a)
Napi::Value Distance(const Napi::CallbackInfo& info);  // (a, b)
Napi::Value DotBatch(const Napi::CallbackInfo& info);  // (q, candidates[])
Napi::Value Round(const Napi::CallbackInfo& info);     // (tt, {tolerance, maxRank?})

Napi::Value Solvers(const Napi::CallbackInfo& info);  // () -> string[]
// (solver, params, onProgress?, onSnapshot?, onPaused?) -> {result, cancel, pause, resume}; runs on
// a thread of its own
Napi::Value Simulate(const Napi::CallbackInfo& info);
Napi::Value CheckSimulation(const Napi::CallbackInfo& info);  // (solver, params) -> undefined, or throws
Napi::Value SolverParams(const Napi::CallbackInfo& info);     // () -> {solvers: {name: [spec]}, limits}

// exports.limits: {maxRank, maxTrainWork, maxRebuildWorkPerValue, maxTurnWork}, the bounds of ttstore/limits.hpp.
void RegisterLimits(Napi::Env env, Napi::Object exports);

// exports.OperandPool: query operands in native memory under numeric ids (operand_pool.cpp).
void RegisterOperandPool(Napi::Env env, Napi::Object exports);

// exports.setBackend and exports.gpu: backend choice and GPU core placement (gpu.cpp).
void RegisterGpu(Napi::Env env, Napi::Object exports);

}  // namespace tts_addon
