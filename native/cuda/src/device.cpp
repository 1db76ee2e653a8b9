// Devices: how many the runtime can use (0, never an exception, without a driver or a device), their
// facts, the index check every entry point makes, and the copy bandwidths bench:gpu prints.
#include <algorithm>
#include <chrono>

#include "cuda_raii.hpp"

namespace tts::cuda {

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA runtime reports no devices";
  return n;
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const int n = device_count();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.total_bytes = static_cast<int64_t>(p.totalGlobalMem);
    d.major = p.major;
    d.minor = p.minor;
    out.push_back(std::move(d));
  }
  return out;
}

namespace detail {

void require_device(int device) {
  std::string why;
  const int n = device_count(&why);
  if (n == 0) throw Unavailable("no usable CUDA device (" + why + ")");
  if (device < 0 || device >= n) {
    throw InvalidArgument("device cuda:" + std::to_string(device) + " does not exist (this server has " +
                          std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + ")");
  }
}

}  // namespace detail

CopyBandwidth copy_bandwidth(int device, int64_t bytes) {
  detail::require_device(device);
  detail::DeviceScope scope(device);
  detail::Stream stream;
  detail::PinnedBuffer host(static_cast<std::size_t>(bytes));
  detail::DeviceBuffer<unsigned char> a(bytes), b(bytes);
  std::fill_n(static_cast<unsigned char*>(host.get()), bytes, static_cast<unsigned char>(1));
  TTS_CUDA(cudaMemsetAsync(a.get(), 0, bytes, stream.get()));
  auto best = [&](auto copy) {
    double t = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      detail::Event e0, e1;
      e0.record(stream.get());
      copy();
      e1.record(stream.get());
      t = std::min(t, e1.since(e0));
    }
    return static_cast<double>(bytes) / t / 1e9;
  };
  CopyBandwidth out;
  out.h2d_gbps =
      best([&] { TTS_CUDA(cudaMemcpyAsync(a.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get())); });
  out.d2h_gbps =
      best([&] { TTS_CUDA(cudaMemcpyAsync(host.get(), a.get(), bytes, cudaMemcpyDeviceToHost, stream.get())); });
  out.d2d_gbps =
      best([&] { TTS_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get())); });
  return out;
}

}  // namespace tts::cuda
