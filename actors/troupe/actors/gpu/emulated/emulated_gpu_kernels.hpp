#pragma once

#include <troupe/ops/gpu_kernels.hpp>

namespace troupe::testing {

/// GPU kernels for emulated GPUs (EmulatedGpuBackend), named "emulated (host)":
/// each entry runs synchronously on the calling thread over host memory, which
/// is what emulated device memory is, and follows the contract of
/// ops/troupe/ops/gpu_kernels.hpp (a label out of range gives NaN, not an
/// error). Where it is cheap they call troupe's CPU kernels, so results match
/// the CPU ops. With a ScopedGpuKernels, tests of the GPU ops check dispatch
/// and shapes without a GPU; the real CUDA kernels are compared to the CPU ops
/// on a GPU in tests/gpu.
[[nodiscard]] const internal::GpuKernels& emulated_gpu_kernels();

} // namespace troupe::testing
