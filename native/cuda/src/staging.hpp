// Private: host-to-device copies of pageable memory through pinned staging buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tts::cuda::detail {

// Copies `bytes` from pageable host memory at `src` to device memory at `dst` on `stream` and waits
// for it. A pageable cudaMemcpy stages through one small driver buffer at a fraction of the link's
// speed; here host threads fill one pinned chunk while the copy engine drains the other.
void upload_pageable(void* dst, const void* src, int64_t bytes, cudaStream_t stream);

}  // namespace tts::cuda::detail
