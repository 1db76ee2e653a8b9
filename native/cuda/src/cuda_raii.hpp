// Private: checked CUDA runtime calls and RAII owners for every device resource (buffers, pinned
// host buffers, streams, events, the current device). A failed call throws tts::cuda::Unavailable
// naming the call and the runtime's message; destructors never throw.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>

#include "ttstore/cuda.hpp"

namespace tts::cuda::detail {

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what) {
  (void)cudaGetLastError();  // clear a sticky-free error so later calls are not blamed for it
  std::string msg =
      std::string("CUDA ") + what + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  throw Unavailable(msg);
}

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw_cuda(e, what);
}
#define TTS_CUDA(call) ::tts::cuda::detail::check((call), #call)

// Makes `device` current for the scope, then restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    TTS_CUDA(cudaGetDevice(&prev_));
    TTS_CUDA(cudaSetDevice(device));
  }
  ~DeviceScope() { (void)cudaSetDevice(prev_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int prev_ = 0;
};

// count elements of T in device memory (uninitialised).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t count) { reset(count); }
  ~DeviceBuffer() { free(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      free();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reset(int64_t count) {
    free();
    if (count <= 0) return;
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, static_cast<std::size_t>(count) * sizeof(T));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw Unavailable("not enough device memory for " + std::to_string(static_cast<std::size_t>(count) * sizeof(T)) +
                        " bytes (" + cudaGetErrorString(e) + ")");
    }
    p_ = static_cast<T*>(p);
    n_ = count;
  }
  void free() noexcept {
    if (p_) (void)cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* get() const { return p_; }
  int64_t size() const { return n_; }
  int64_t bytes() const { return n_ * static_cast<int64_t>(sizeof(T)); }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
  }

 private:
  T* p_ = nullptr;
  int64_t n_ = 0;
};

// Page-locked host memory (fast, asynchronous copies), pinned for every device.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) {
    TTS_CUDA(cudaHostAlloc(&p_, bytes, cudaHostAllocPortable));
    n_ = bytes;
  }
  ~PinnedBuffer() {
    if (p_) (void)cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return n_; }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

class Stream {
 public:
  Stream() { TTS_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) (void)cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { TTS_CUDA(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { TTS_CUDA(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) (void)cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { TTS_CUDA(cudaEventRecord(e_, s)); }
  void wait() const { TTS_CUDA(cudaEventSynchronize(e_)); }
  // Seconds from `start` to this event (both recorded and complete).
  double since(const Event& start) const {
    TTS_CUDA(cudaEventSynchronize(e_));
    float ms = 0;
    TTS_CUDA(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms / 1e3;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// Throws Unavailable unless `device` is a usable device index (InvalidArgument when it is out of
// range of the devices present).
void require_device(int device);

}  // namespace tts::cuda::detail
