#pragma once

// Decimal digits of binary floats exactly as numpy chooses them (Dragon4),
// for printing tensors with numpy's str(). Internal to troupe_core.

#include <cstddef>
#include <string>

#include <troupe/core/dtype.hpp>

namespace troupe::internal {

/// A finite non-negative value as `d.ddd x 10^exponent`.
struct Decimal {
  std::string digits;
  int exponent = 0;
};

/// Integer and fraction digits of a positional form.
struct Positional {
  std::string integer;
  std::string fraction;
};

/// numpy's positional digits of `magnitude` (>= 0, exactly representable in
/// `dtype`): unique, at most `max_fraction` fractional digits (-1: no limit),
/// trailing zeros trimmed.
[[nodiscard]] Positional positional(double magnitude, DType dtype, int max_fraction);

/// numpy's scientific digits: unique with at most `max_fraction` and at least
/// `min_fraction` digits after the first (-1: no bound); the exponent of "0" is 0.
[[nodiscard]] Decimal scientific(double magnitude, DType dtype, int max_fraction, int min_fraction);

/// "+05", "-12": the exponent with a sign and at least `min_digits` digits.
[[nodiscard]] std::string exponent_text(int exponent, std::size_t min_digits);

/// "nan", "inf" or "-inf".
[[nodiscard]] std::string non_finite_text(double value);

/// Drops trailing '0' characters.
void trim_trailing_zeros(std::string& digits);

} // namespace troupe::internal
