#include "staging.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_raii.hpp"
#include "ttstore/internal/threads.hpp"

namespace tts::cuda::detail {
namespace {

constexpr int64_t kChunk = int64_t{32} << 20;
constexpr int64_t kPiece = int64_t{1} << 20;  // one host thread's share of a chunk at a time
constexpr std::size_t kKeptPairs = 2;         // pinned memory kept between calls: 2 x 64 MiB

struct Pair {
  Pair() : buf{PinnedBuffer(kChunk), PinnedBuffer(kChunk)} {}
  PinnedBuffer buf[2];
};

// Pinned buffers outlive the calls that use them: allocating and pinning 64 MiB costs more than
// copying it.
std::mutex pool_mu;
std::vector<std::unique_ptr<Pair>>& pool() {
  static auto* p = new std::vector<std::unique_ptr<Pair>>();  // never destroyed: no CUDA calls at exit
  return *p;
}

std::unique_ptr<Pair> take() {
  {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (!pool().empty()) {
      std::unique_ptr<Pair> p = std::move(pool().back());
      pool().pop_back();
      return p;
    }
  }
  return std::make_unique<Pair>();
}

void give(std::unique_ptr<Pair> p) {
  std::lock_guard<std::mutex> lock(pool_mu);
  if (pool().size() < kKeptPairs) pool().push_back(std::move(p));
}

void parallel_copy(void* dst, const void* src, int64_t bytes) {
  const int64_t pieces = (bytes + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static) num_threads(tts::detail::threads())
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t off = i * kPiece;
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(kPiece, bytes - off));
  }
}

}  // namespace

void upload_pageable(void* dst, const void* src, int64_t bytes, cudaStream_t stream) {
  if (bytes <= kChunk / 4) {  // small: the driver's own staging is as fast
    TTS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    TTS_CUDA(cudaStreamSynchronize(stream));
    return;
  }
  std::unique_ptr<Pair> pair = take();
  Event drained[2];
  bool in_use[2] = {false, false};
  for (int64_t off = 0, i = 0; off < bytes; off += kChunk, ++i) {
    const int b = static_cast<int>(i & 1);
    const int64_t len = std::min(kChunk, bytes - off);
    if (in_use[b]) drained[b].wait();  // the copy engine is done with this buffer
    parallel_copy(pair->buf[b].get(), static_cast<const char*>(src) + off, len);
    TTS_CUDA(cudaMemcpyAsync(static_cast<char*>(dst) + off, pair->buf[b].get(), len, cudaMemcpyHostToDevice, stream));
    drained[b].record(stream);
    in_use[b] = true;
  }
  TTS_CUDA(cudaStreamSynchronize(stream));
  give(std::move(pair));
}

}  // namespace tts::cuda::detail
