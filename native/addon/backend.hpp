// The engine's backend, chosen once at start (setBackend): the CPU core, or the CUDA backend where
// the addon was built with it (TTS_HAVE_CUDA) and a device is usable. The heavy calls go through
// these functions, so compress/reconstruct/score need no #ifdef of their own. A CUDA call that finds
// the device unusable (out of memory, a lost device) falls back to the CPU for that call.
#pragma once

#include <string>
#include <vector>

#include "ttstore/query.hpp"
#include "ttstore/selection.hpp"
#include "ttstore/tt.hpp"

namespace tts_addon {

enum class BackendKind { Cpu, Cuda };

bool CudaCompiled();
int CudaDeviceCount(std::string* why = nullptr);  // 0 without CUDA, a driver or a device
BackendKind ActiveBackend();
const char* BackendName(BackendKind k);  // "cpu" | "cuda"
// "auto" | "cpu" | "cuda"; returns the backend now active. "cuda" without a usable device throws
// std::runtime_error with the reason.
BackendKind SelectBackend(const std::string& choice);

// `more`: see tts::compress; the CUDA sweep gathers on the device and ignores it.
tts::CompressResult BackendCompress(const tts::ArrayView& a, const tts::QttLayout& layout, const tts::SvdOptions& opt,
                                    const tts::CompressOptions& more = {});
tts::Fingerprint BackendReconstruct(const tts::TensorTrain& tt, const tts::QttLayout& layout,
                                    const tts::MutableArrayView& out, const tts::ArrayView& ref);
// <q, c_j> for the candidates whose cores are resident on a device (GPU core placement), NaN for
// the rest; all NaN on the CPU backend.
// tts::reconstruct_selection on the active backend: the CUDA kernel for lists of at least
// kGpuMinSelectValues points when its ranks fit (SelectionOnDevice), else (regions and levels, and
// whenever the device cannot) the CPU core.
void BackendReconstructSelection(const tts::TensorTrain& tt, const tts::QttLayout& layout, const tts::Selection& s,
                                 const tts::MutableArrayView& out);
std::vector<double> BackendResidentDots(const tts::Operand& q, const std::vector<int64_t>& ids);

}  // namespace tts_addon
