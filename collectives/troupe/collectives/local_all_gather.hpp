#pragma once

#include <vector>

#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The local all-gather: for each tensor index, the participants' tensors
/// concatenated along `axis` in participant order. One copy per input; every
/// participant then shares the outputs. Inputs must already have compatible
/// fingerprints (equal except along `axis`).
[[nodiscard]] std::vector<Tensor>
local_all_gather(const std::vector<std::vector<Tensor>>& inputs, int axis);

} // namespace troupe::internal
