#pragma once

#include <cstddef>
#include <memory>

#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>
#include <troupe/ops/gpu_kernels.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpu_backend.hpp>
#include <troupe/actors/gpu/emulated/emulated_gpu_kernels.hpp>
#include <troupe/actors/gpu/emulated/emulated_nccl_backend.hpp>

namespace troupe::testing {

/// Installs `gpus` emulated GPUs of `memory` bytes each, and their host
/// kernels, for the Runtimes a test creates while it lives.
struct EmulatedGpus {
  explicit EmulatedGpus(int gpus, std::size_t memory = std::size_t{64} << 20)
    : kernels(emulated_gpu_kernels()) {
    auto owned = std::make_unique<EmulatedGpuBackend>(gpus, memory);
    backend = owned.get();
    scope = std::make_unique<internal::ScopedGpuBackend>(std::move(owned));
  }
  EmulatedGpuBackend* backend;
  std::unique_ptr<internal::ScopedGpuBackend> scope;
  internal::ScopedGpuKernels kernels;
};

/// Installs an emulated NCCL for the emulated GPUs, for the Runtimes a test
/// creates while it lives (without it, NCCL is the build's: unavailable
/// without a GPU).
struct EmulatedNccl {
  EmulatedNccl() {
    auto owned = std::make_unique<EmulatedNcclBackend>();
    backend = owned.get();
    scope = std::make_unique<internal::ScopedNcclBackend>(std::move(owned));
  }
  EmulatedNcclBackend* backend;
  std::unique_ptr<internal::ScopedNcclBackend> scope;
};

} // namespace troupe::testing
