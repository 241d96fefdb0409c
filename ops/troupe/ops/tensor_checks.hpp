#pragma once

// Argument checks shared by the kernels of ops/ (internal to troupe_ops).

#include <string>

#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// "float32 tensor of shape (2, 3)": how errors name an operand.
[[nodiscard]] std::string describe(const Tensor& t);

/// Error(invalid_argument) when `t` is an empty handle, naming `op` and `what`.
void require_valid(const Tensor& t, const char* op, const char* what = "an operand");

/// Error(not_supported) unless `t` is float16, bfloat16, float32 or float64.
void require_floating(const Tensor& t, const char* op, const char* what);

/// Error(not_supported) for a bool `t`.
void require_numeric(const Tensor& t, const char* op, const char* what);

/// Error(dtype_mismatch) naming both operands when `a` and `b` differ in dtype.
void require_same_dtype(const Tensor& a, const char* what_a, const Tensor& b, const char* what_b,
                        const char* op);

/// Error(shape_mismatch) naming both operands when `a` and `b` differ in shape.
void require_same_shape(const Tensor& a, const char* what_a, const Tensor& b, const char* what_b,
                        const char* op);

/// Error(invalid_argument) naming both devices when `written`, an operand an
/// in-place update writes, and `other` live on different devices.
void require_same_device(const Tensor& written, const char* written_name, const Tensor& other,
                         const char* other_name, const char* op);

} // namespace troupe::internal
