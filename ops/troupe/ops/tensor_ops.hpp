#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include <troupe/core/tensor.hpp>

namespace troupe {

/// Elementwise arithmetic, as TensorFlow's math ops. Both operands must have
/// the same dtype and either the same shape or one of them rank 0 (scalar
/// broadcasting); otherwise Error(dtype_mismatch / shape_mismatch) names both
/// operands. Integer results wrap around on overflow (uint8: modulo 256, so
/// 200 + 100 is 44 and negate(1) is 255, as numpy). Integer division truncates
/// toward zero (C++ semantics; TF's `//` floors) and division by zero is
/// Error(invalid_argument). The result is a new tensor on the left operand's device.
[[nodiscard]] Tensor add(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor subtract(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor multiply(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor divide(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor negate(const Tensor& a);

/// A rank-0 tensor of `dtype` holding `value`. As TensorFlow does for Python
/// scalars, a value that `dtype` cannot represent exactly (2.5 for int32, 256
/// or -1 for uint8) is Error(invalid_argument) naming the value and the dtype.
[[nodiscard]] Tensor scalar_like(double value, DType dtype);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return subtract(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return multiply(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return divide(a, b); }
inline Tensor operator-(const Tensor& a) { return negate(a); }

template <class S>
concept Scalar = std::is_arithmetic_v<S>;

// Scalars take the tensor's dtype, as `tf.constant([1, 2]) * 2` does.
template <Scalar S> Tensor operator+(const Tensor& a, S s) { return add(a, scalar_like(static_cast<double>(s), a.dtype())); }
template <Scalar S> Tensor operator+(S s, const Tensor& a) { return add(scalar_like(static_cast<double>(s), a.dtype()), a); }
template <Scalar S> Tensor operator-(const Tensor& a, S s) { return subtract(a, scalar_like(static_cast<double>(s), a.dtype())); }
template <Scalar S> Tensor operator-(S s, const Tensor& a) { return subtract(scalar_like(static_cast<double>(s), a.dtype()), a); }
template <Scalar S> Tensor operator*(const Tensor& a, S s) { return multiply(a, scalar_like(static_cast<double>(s), a.dtype())); }
template <Scalar S> Tensor operator*(S s, const Tensor& a) { return multiply(scalar_like(static_cast<double>(s), a.dtype()), a); }
template <Scalar S> Tensor operator/(const Tensor& a, S s) { return divide(a, scalar_like(static_cast<double>(s), a.dtype())); }
template <Scalar S> Tensor operator/(S s, const Tensor& a) { return divide(scalar_like(static_cast<double>(s), a.dtype()), a); }

/// Joins tensors along `axis` (negative counts from the end). All inputs must
/// have the same dtype and rank and agree in every other dimension; the error
/// names the first input that does not.
[[nodiscard]] Tensor concat(const std::vector<Tensor>& values, int axis);

/// Sum along `axis` (removing it), or of all elements when `axis` is unset.
/// The result keeps the dtype, as tf.reduce_sum, so integer sums wrap (uint8 modulo 256).
[[nodiscard]] Tensor reduce_sum(const Tensor& x, std::optional<int> axis = std::nullopt);
/// Mean along `axis` or of all elements. Integer dtypes truncate, as tf.reduce_mean;
/// a uint8 mean is of the exact (unwrapped) sum, as TensorFlow computes it in uint64.
[[nodiscard]] Tensor reduce_mean(const Tensor& x, std::optional<int> axis = std::nullopt);

// -- comparison helpers (tests, examples) ------------------------------------------

/// True when dtype, shape and every element are equal (bitwise for floats, except -0 == +0).
[[nodiscard]] bool array_equal(const Tensor& a, const Tensor& b);
/// True when shapes match and |a - b| <= atol + rtol * |b| elementwise (numpy.allclose).
[[nodiscard]] bool all_close(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                             double atol = 1e-8);

} // namespace troupe
