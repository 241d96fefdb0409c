#pragma once

#include <memory>

#include <troupe/actors/gpu/gpu_backend.hpp>

namespace troupe::internal {

/// The backend over CUDA's runtime API (built only when CUDA is found).
[[nodiscard]] std::unique_ptr<GpuBackend> make_cuda_gpu_backend();

} // namespace troupe::internal
