#pragma once

// Argument checks shared by the kernels of core/ (internal to troupe_core).

#include <string>

#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// "float32 tensor of shape (2, 3)": how errors name an operand.
[[nodiscard]] std::string describe(const Tensor& t);

/// Error(invalid_argument) when `t` is an empty handle, naming `op` and `what`.
void require_valid(const Tensor& t, const char* op, const char* what = "an operand");

} // namespace troupe::internal
