#include <troupe/ops/random.hpp>
#include <troupe/ops/portable_math.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <troupe/core/errors.hpp>

// Bitwise reproducibility needs every a * b + c below rounded twice, as
// written: Clang may fuse them into FMAs by default, GCC does not in the
// ISO modes troupe builds with (-std=c++20 implies -ffp-contract=off).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace troupe {

namespace {

std::string number_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string{buffer, result.ptr};
}

std::string dtype_text(DType dtype) {
  return std::string{name(dtype)};
}

/// The largest value of T below `x` (x is finite).
template <class T>
T next_below(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::nextafter(x, -std::numeric_limits<T>::infinity());
  } else {
    // float16 / bfloat16: sign and magnitude in 16 bits.
    const float value = static_cast<float>(x);
    T below;
    if (value > 0)
      below.bits = static_cast<uint16_t>(x.bits - 1);
    else if (value == 0)
      below.bits = 0x8001; // the smallest negative subnormal
    else
      below.bits = static_cast<uint16_t>(x.bits + 1);
    return below;
  }
}

/// `value` rounded to the floating type T (16-bit floats round through float).
template <class T>
T to_floating(double value) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(value);
  else
    return T{static_cast<float>(value)};
}

template <class T>
double to_double(T value) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(value);
  else
    return static_cast<double>(static_cast<float>(value));
}

void require_floating_dtype(DType dtype, const char* op) {
  if (!is_floating(dtype))
    fail(Errc::not_supported, std::string{"RandomGenerator::"} + op + ": dtype " + dtype_text(dtype)
                                + " is not floating; use float32 or float64 (or cast the result)");
}

/// The integer range [low, high) of a uniform integer draw, checked for `dtype`.
bool integral_in(double value, DType dtype) {
  if (std::trunc(value) != value)
    return false;
  switch (dtype) {
    case DType::int32: return value >= -2147483648.0 && value <= 2147483647.0;
    case DType::uint8: return value >= 0 && value <= 255;
    default: return value >= -9223372036854775808.0 && value < 9223372036854775808.0;
  }
}

} // namespace

RandomGenerator::RandomGenerator(uint64_t seed) : engine_(seed) {}

uint64_t RandomGenerator::next_u64() {
  return engine_();
}

double RandomGenerator::next_double() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

Tensor RandomGenerator::uniform(const Shape& shape, double low, double high, DType dtype) {
  if (dtype == DType::bool_)
    fail(Errc::not_supported,
         "RandomGenerator::uniform: cannot draw bool tensors; draw int32 in [0, 2) and compare");
  Tensor result = Tensor::empty(shape, dtype);
  const int64_t n = result.num_elements();
  if (!is_floating(dtype)) {
    const std::string bounds = "[" + number_text(low) + ", " + number_text(high) + ")";
    if (!integral_in(low, dtype) || !integral_in(high, dtype) || !(low < high))
      fail(Errc::invalid_argument, "RandomGenerator::uniform: " + dtype_text(dtype)
                                     + " values need integral bounds low < high within "
                                     + dtype_text(dtype) + ", got " + bounds);
    const auto lo = static_cast<int64_t>(low);
    const uint64_t range =
      static_cast<uint64_t>(static_cast<int64_t>(high)) - static_cast<uint64_t>(lo);
    // Accept draws below the largest multiple of `range`, so that x % range is unbiased.
    const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        T* out = result.mutable_data<T>();
        for (int64_t i = 0; i < n; ++i) {
          uint64_t x = next_u64();
          while (x >= limit)
            x = next_u64();
          out[i] = static_cast<T>(static_cast<uint64_t>(lo) + x % range);
        }
      }
    });
    return result;
  }
  if (!std::isfinite(low) || !std::isfinite(high) || !(low <= high) || !std::isfinite(high - low))
    fail(Errc::invalid_argument, "RandomGenerator::uniform: bounds must be finite with low <= "
                                 "high, got ["
                                   + number_text(low) + ", " + number_text(high) + ")");
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_integral_v<T>) {
      T* out = result.mutable_data<T>();
      const double width = high - low;
      for (int64_t i = 0; i < n; ++i) {
        T value = to_floating<T>(low + width * next_double());
        if (to_double(value) >= high && low < high)
          value = next_below(value);
        out[i] = value;
      }
    }
  });
  return result;
}

Tensor RandomGenerator::normal(const Shape& shape, double mean, double stddev, DType dtype) {
  require_floating_dtype(dtype, "normal");
  if (!std::isfinite(mean) || !std::isfinite(stddev) || stddev < 0)
    fail(Errc::invalid_argument, "RandomGenerator::normal: mean must be finite and stddev finite "
                                 "and >= 0, got mean "
                                   + number_text(mean) + ", stddev " + number_text(stddev));
  Tensor result = Tensor::empty(shape, dtype);
  const int64_t n = result.num_elements();
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_integral_v<T>) {
      T* out = result.mutable_data<T>();
      for (int64_t i = 0; i < n; i += 2) {
        // Marsaglia's polar method: a point uniform in the unit disc gives two
        // independent normals with only sqrt and log (no sin/cos).
        double u = 0;
        double v = 0;
        double s = 0;
        do {
          u = 2.0 * next_double() - 1.0;
          v = 2.0 * next_double() - 1.0;
          s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * portable_log(s) / s);
        out[i] = to_floating<T>(mean + stddev * (u * factor));
        if (i + 1 < n)
          out[i + 1] = to_floating<T>(mean + stddev * (v * factor));
      }
    }
  });
  return result;
}

Tensor RandomGenerator::glorot_uniform(int64_t fan_in, int64_t fan_out, DType dtype) {
  require_floating_dtype(dtype, "glorot_uniform");
  if (fan_in < 1 || fan_out < 1)
    fail(Errc::invalid_argument, "RandomGenerator::glorot_uniform: fan_in and fan_out must be "
                                 "positive (the kernel's input and output sizes), got fan_in "
                                   + std::to_string(fan_in) + ", fan_out "
                                   + std::to_string(fan_out));
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform(Shape{fan_in, fan_out}, -limit, limit, dtype);
}

} // namespace troupe
