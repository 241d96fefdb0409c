#pragma once

#include <cstdint>
#include <vector>

#include <troupe/core/tensor.hpp>

namespace troupe::testing {

/// Deterministic float32 values in [-2, 2), multiples of 1/1024 (a few exact
/// zeros among them), the same on every machine.
inline Tensor test_values(const Shape& shape, uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(static_cast<int>((state >> 40) % 4096) - 2048) / 1024.0f;
  }
  return Tensor::from_vector(v, shape);
}

} // namespace troupe::testing
