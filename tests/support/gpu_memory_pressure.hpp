#pragma once

#include <cstdint>
#include <utility>

#include <troupe/troupe.hpp>

#include "support/test_values.hpp"

namespace troupe::testing {

/// Accumulates, on GPU:0 and on the host, sums over tensors of 7 size
/// classes (1 to 2.5 MiB): under a limit of about 14 MiB each new class must
/// first return cached blocks of the others to the driver while kernels that
/// used them may still be queued (at most about 10 MiB are in use at once).
/// Returns (the GPU's result, the host's), which must agree.
inline std::pair<Tensor, Tensor> accumulate_under_memory_pressure() {
  const Tensor x = test_values({1 << 18}, 30);  // 1 MiB
  Tensor on_host = Tensor::zeros({1 << 18}, DType::float32);
  Tensor on_gpu = on_host.to("GPU:0");
  for (int i = 0; i < 40; ++i) {
    const int64_t elements = (int64_t{1} << 18) + (int64_t{i % 7} << 16);
    const Tensor values = test_values({elements}, 31 + static_cast<uint64_t>(i));
    on_gpu = on_gpu + x.to("GPU:0") * 0.5f + reduce_sum(relu(values.to("GPU:0") * 2.0f));
    on_host = on_host + x * 0.5f + reduce_sum(relu(values * 2.0f));
  }
  return {on_gpu, on_host};
}

} // namespace troupe::testing
