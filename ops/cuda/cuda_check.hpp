#pragma once

// Error checks for the CUDA kernels (private to ops/cuda/): a failed launch
// or runtime call becomes Error(internal) naming the kernel, the GPU and
// CUDA's error, which DeviceMemory::launch turns into the device's poison.

#include <string>

#include <cuda_runtime_api.h>

#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

/// The stream a kernel of `ctx` enqueues on.
inline cudaStream_t stream_of(const GpuLaunchContext& ctx) {
  return static_cast<cudaStream_t>(ctx.stream);
}

/// "<kernel> on GPU <gpu>: <call> failed: ", the start of every message here.
inline std::string failure_prefix(const char* kernel, int gpu, const char* call) {
  return std::string{kernel} + " on GPU " + std::to_string(gpu) + ": " + call + " failed: ";
}

/// Error(internal) "binary_f32 on GPU 0: cudaMallocAsync failed: cudaErrorX (what it means)"
/// when `status` is a failure.
inline void check_cuda(cudaError_t status, const char* kernel, int gpu, const char* call) {
  if (status != cudaSuccess)
    fail(Errc::internal, failure_prefix(kernel, gpu, call) + cudaGetErrorName(status) + " ("
                           + cudaGetErrorString(status) + ")");
}

/// Checks the launch just made on this thread: a bad configuration, a kernel
/// image missing for this card, or an earlier fault that broke the context.
inline void check_launch(const char* kernel, int gpu) {
  check_cuda(cudaGetLastError(), kernel, gpu, "the kernel launch");
}

} // namespace troupe::internal
