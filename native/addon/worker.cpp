#include "worker.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace tts_addon {

Napi::Error MakeError(Napi::Env env, bool invalid, const std::string& message) {
  Napi::Error err = invalid ? Napi::RangeError::New(env, message) : Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, invalid ? kInvalidCode : kInternalCode));
  return err;
}

PromiseWorker::PromiseWorker(Napi::Env env, const char* name)
    : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}

Napi::Promise PromiseWorker::Start() {
  Napi::Promise promise = deferred_.Promise();
  Queue();
  return promise;
}

Failure CaptureFailure(const std::function<void()>& f, std::string& message) {
  Failure failure = Failure::None;
  try {
    f();
  } catch (const tts::InvalidArgument& e) {
    failure = Failure::Invalid;
    message = e.what();
  } catch (const std::bad_alloc&) {
    failure = Failure::Internal;
    message = "out of memory";
  } catch (const std::exception& e) {
    failure = Failure::Internal;
    message = e.what();
  } catch (...) {
    failure = Failure::Internal;
    message = "unknown native error";
  }
  if (failure != Failure::None && message.empty()) message = "native error";
  return failure;
}

void PromiseWorker::Execute() {
  tts::CallShare share;  // calls running at once share the cores
  failure_ = CaptureFailure([this] { Run(); }, message_);
}

void PromiseWorker::OnOK() {
  Napi::Env env = Env();
  // Whatever happens here must settle the Promise, and nothing may escape: an exception leaving
  // OnOK ends the process. When the environment is shutting down (a worker thread terminated while
  // this call ran) no JS can run at all, and there is nobody left to tell.
  std::string failure;
  try {
    if (failure_ == Failure::None) {
      deferred_.Resolve(Result(env));
    } else {
      deferred_.Reject(MakeError(env, failure_ == Failure::Invalid, message_).Value());
    }
    return;
  } catch (const Napi::Error& e) {
    failure = e.what();
  } catch (const std::bad_alloc&) {
    failure = "out of memory";
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown native error";
  }
  try {
    deferred_.Reject(MakeError(env, false, failure.empty() ? "native error" : failure).Value());
  } catch (...) {
  }
}

void PromiseWorker::OnError(const Napi::Error& e) {
  // Only reached if the base class recorded an error itself; Execute never lets one through.
  try {
    deferred_.Reject(MakeError(Env(), false, e.Message()).Value());
  } catch (...) {
  }
}

void PackedTrain::Free::operator()(void* p) const { std::free(p); }

PackedTrain PackedTrain::Pack(const tts::TensorTrain& tt) {
  PackedTrain p;
  p.modes = tt.modes;
  p.ranks = tt.ranks;
  p.f32 = tt.f32;
  p.offsets.resize(tt.cores.size() + 1, 0);
  for (size_t k = 0; k < tt.cores.size(); ++k) p.offsets[k + 1] = p.offsets[k] + tt.cores[k].size();
  size_t elem = p.f32 ? sizeof(float) : sizeof(double);
  size_t bytes = p.offsets.back() * elem;
  p.block.reset(std::malloc(bytes > 0 ? bytes : 1));
  if (!p.block) throw std::bad_alloc();
  for (size_t k = 0; k < tt.cores.size(); ++k) {
    const std::vector<double>& c = tt.cores[k];
    if (p.f32) {
      float* dst = static_cast<float*>(p.block.get()) + p.offsets[k];
      for (size_t i = 0; i < c.size(); ++i) dst[i] = static_cast<float>(c[i]);
    } else if (!c.empty()) {
      std::memcpy(static_cast<double*>(p.block.get()) + p.offsets[k], c.data(), c.size() * sizeof(double));
    }
  }
  return p;
}

namespace {
Napi::Array IntArray(Napi::Env env, const std::vector<int64_t>& v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (uint32_t i = 0; i < v.size(); ++i) a.Set(i, Napi::Number::New(env, static_cast<double>(v[i])));
  return a;
}
}  // namespace

Napi::Object PackedTrain::ToJs(Napi::Env env) {
  size_t elem = f32 ? sizeof(float) : sizeof(double);
  size_t bytes = offsets.back() * elem;
  Napi::ArrayBuffer ab;
  if (bytes == 0) {
    ab = Napi::ArrayBuffer::New(env, 0);
  } else {
    void* data = block.get();
    try {
      ab = Napi::ArrayBuffer::New(env, data, bytes, [](Napi::Env, void* p) { std::free(p); });
      block.release();  // owned by the ArrayBuffer from here on
    } catch (const Napi::Error&) {
      // Runtimes that forbid external buffers: one copy on the main thread instead.
      ab = Napi::ArrayBuffer::New(env, bytes);
      std::memcpy(ab.Data(), data, bytes);
    }
  }
  Napi::Array cores = Napi::Array::New(env, offsets.size() - 1);
  for (uint32_t k = 0; k + 1 < offsets.size(); ++k) {
    size_t n = offsets[k + 1] - offsets[k];
    size_t byte_offset = offsets[k] * elem;
    if (f32) {
      cores.Set(k, Napi::Float32Array::New(env, n, ab, byte_offset));
    } else {
      cores.Set(k, Napi::Float64Array::New(env, n, ab, byte_offset));
    }
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("modes", IntArray(env, modes));
  o.Set("ranks", IntArray(env, ranks));
  o.Set("cores", cores);
  return o;
}

Napi::Object FingerprintToJs(Napi::Env env, const tts::Fingerprint& fp) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("frobenius_error", Napi::Number::New(env, fp.frobenius_error));
  o.Set("max_abs_error", Napi::Number::New(env, fp.max_abs_error));
  o.Set("relative_error", Napi::Number::New(env, fp.relative_error));
  return o;
}

void OutputBytes::Free::operator()(uint8_t* p) const { std::free(p); }

void OutputBytes::Allocate(size_t n) {
  length = n;
  if (n == 0) return;
  data.reset(static_cast<uint8_t*>(std::malloc(n)));
  if (!data) throw std::bad_alloc();
}

Napi::Uint8Array OutputBytes::ToJs(Napi::Env env) {
  Napi::ArrayBuffer ab;
  if (length == 0) {
    ab = Napi::ArrayBuffer::New(env, 0);
  } else {
    try {
      ab = Napi::ArrayBuffer::New(env, data.get(), length, [](Napi::Env, void* p) { std::free(p); });
      data.release();  // owned by the ArrayBuffer from here on
    } catch (const Napi::Error&) {
      // Runtimes that forbid external buffers: one copy on the main thread instead.
      ab = Napi::ArrayBuffer::New(env, length);
      std::memcpy(ab.Data(), data.get(), length);
    }
  }
  return Napi::Uint8Array::New(env, length, ab, 0);
}

}  // namespace tts_addon
