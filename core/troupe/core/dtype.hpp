#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <troupe/core/fwd.hpp>

namespace troupe {

/// IEEE 754 half precision, stored as its 16 bits (layout-compatible with Eigen::half).
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float value);
  explicit operator float() const;
};

/// bfloat16 (the upper 16 bits of a float32), stored as its bits.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float value);
  explicit operator float() const;
};

/// The element types a Tensor can hold (TensorFlow's names; `bool_` because
/// `bool` is a C++ keyword; it prints as "bool"). The numeric values travel in
/// serialised Tensors, so new dtypes are appended, never inserted.
enum class DType : unsigned char {
  bool_,
  int32,
  int64,
  float16,
  bfloat16,
  float32,
  float64,
  uint8,
};

/// The last DType value (for range checks of serialised codes).
inline constexpr DType last_dtype = DType::uint8;

/// TensorFlow's name of the dtype ("float32").
[[nodiscard]] std::string_view name(DType dtype) noexcept;

/// Bytes per element.
[[nodiscard]] std::size_t size_of(DType dtype) noexcept;

/// True for float16, bfloat16, float32 and float64.
[[nodiscard]] bool is_floating(DType dtype) noexcept;

/// True for int32, int64 and uint8.
[[nodiscard]] bool is_integer(DType dtype) noexcept;

/// The dtype of TensorFlow's true division (tf.math.truediv) of `dtype`
/// values: float64 for int32 and int64, float32 for uint8; other dtypes
/// keep theirs. A MEAN of integers across replicas has this dtype (1 and 2
/// average to 1.5), as in tf.distribute.
[[nodiscard]] DType true_division_dtype(DType dtype) noexcept;

/// Parses a dtype name ("float32", "int64", "bool", ...); throws Error(invalid_argument) quoting it.
[[nodiscard]] DType parse_dtype(std::string_view text);

/// The DType of the C++ element type T (a compile error for others).
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::bool_;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::int32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::int64;
  else if constexpr (std::is_same_v<T, float16>)
    return DType::float16;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return DType::bfloat16;
  else if constexpr (std::is_same_v<T, float>)
    return DType::float32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::float64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::uint8;
  else
    static_assert(sizeof(T) == 0, "troupe::Tensor holds bool, int32_t, int64_t, float16, "
                                  "bfloat16, float, double or uint8_t");
}

/// Calls `fn(T{})` with the C++ element type of `dtype` (a value of that type, for deduction).
template <class Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::bool_: return fn(bool{});
    case DType::int32: return fn(int32_t{});
    case DType::int64: return fn(int64_t{});
    case DType::float16: return fn(float16{});
    case DType::bfloat16: return fn(bfloat16{});
    case DType::float32: return fn(float{});
    case DType::uint8: return fn(uint8_t{});
    case DType::float64: break;
  }
  return fn(double{});
}

} // namespace troupe
