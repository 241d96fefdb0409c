#pragma once

#include <string>

#include <troupe/actors/gpu/gpu_backend.hpp>

namespace troupe::testing {

/// Why the tests on a real GPU cannot run here, or "" when they can.
inline std::string no_gpu_reason() {
  auto& backend = internal::gpu_backend();
  return backend.device_count() > 0 ? std::string{} : "no GPU: " + backend.unavailable_reason();
}

} // namespace troupe::testing
