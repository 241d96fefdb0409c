#pragma once

#include <memory>

#include <troupe/actors/gpu/nccl_backend.hpp>

namespace troupe::internal {

/// The backend over libnccl (built only when NCCL is found).
[[nodiscard]] std::unique_ptr<NcclBackend> make_cuda_nccl_backend();

} // namespace troupe::internal
