// The one shape every asynchronous call takes: validate on the main thread, run the core on a libuv
// worker thread, settle a Promise back on the main thread. Nothing the core throws escapes: an
// InvalidArgument rejects with a RangeError (code ERR_TTS_INVALID), anything else with an Error
// (code ERR_TTS_INTERNAL).
#pragma once

#include "napi_env.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "args.hpp"
#include "ttstore/tt.hpp"

namespace tts_addon {

// Runs `f` off the main thread; whatever it throws becomes Invalid (tts::InvalidArgument) or
// Internal, with a non-empty message. Never throws.
enum class Failure { None, Invalid, Internal };
Failure CaptureFailure(const std::function<void()>& f, std::string& message);

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* name);
  // Queues the work and hands back its Promise. The worker deletes itself once settled.
  Napi::Promise Start();

 protected:
  virtual void Run() = 0;                         // worker thread: no JS values here
  virtual Napi::Value Result(Napi::Env env) = 0;  // main thread, after a successful Run
  KeepAlive keep_;                                // inputs and outputs the worker touches

 private:
  void Execute() final;
  void OnOK() final;
  void OnError(const Napi::Error& e) final;

  Napi::Promise::Deferred deferred_;
  Failure failure_ = Failure::None;
  std::string message_;
};

// Queues a worker built by the caller; if queueing fails the worker is freed, not leaked.
template <typename W>
Napi::Promise Launch(std::unique_ptr<W> w) {
  Napi::Promise p = w->Start();
  w.release();  // deletes itself after settling
  return p;
}

// An Error with a code, for rejections and for exceptions thrown by the sync entry points.
Napi::Error MakeError(Napi::Env env, bool invalid, const std::string& message);

// Wraps an export so that no C++ exception leaves it other than as a JS exception: the core's
// InvalidArgument becomes a RangeError with code ERR_TTS_INVALID, anything else an Error with code
// ERR_TTS_INTERNAL.
template <Napi::Value (*F)(const Napi::CallbackInfo&)>
Napi::Value Guarded(const Napi::CallbackInfo& info) {
  try {
    return F(info);
  } catch (const Napi::Error&) {
    throw;
  } catch (const tts::InvalidArgument& e) {
    throw MakeError(info.Env(), true, e.what());
  } catch (const std::bad_alloc&) {
    throw MakeError(info.Env(), false, "out of memory");
  } catch (const std::exception& e) {
    throw MakeError(info.Env(), false, e.what());
  }
}

// A tensor train's cores packed on the worker thread into one heap block of float32 or float64,
// so that the main thread only wraps it (no copy there): one external ArrayBuffer, one view per core.
struct PackedTrain {
  std::vector<int64_t> modes, ranks;
  std::vector<size_t> offsets;  // element offset of each core; offsets[d] = total elements
  bool f32 = false;
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> block;

  static PackedTrain Pack(const tts::TensorTrain& tt);
  Napi::Object ToJs(Napi::Env env);  // gives the block to the ArrayBuffer
};

Napi::Object FingerprintToJs(Napi::Env env, const tts::Fingerprint& fp);

// An output array malloc'd on a worker thread (allocating and first touching a large one on the main
// thread would stall the event loop), handed to JavaScript without a copy where the runtime allows.
struct OutputBytes {
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data;
  size_t length = 0;

  void Allocate(size_t n);               // worker thread; throws std::bad_alloc
  Napi::Uint8Array ToJs(Napi::Env env);  // main thread: gives the block to an ArrayBuffer
};

}  // namespace tts_addon
