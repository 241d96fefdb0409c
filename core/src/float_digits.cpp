#include <troupe/core/float_digits.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace troupe::internal {

namespace {

// -- decimal digits of one float (numpy's Dragon4) ------------------------------
//
// numpy picks digits with Steele & White's Dragon4 as modified by Juckett and
// Burger & Dybvig: the shortest digits that identify the value among its
// neighbours, optionally cut at a precision or extended to a minimum count
// with the value's exact digits. std::to_chars cannot extend or cut that
// way, so the few routines below do the same exact integer arithmetic.

/// An unsigned integer of any size: the exact arithmetic Dragon4 needs.
class BigUint {
public:
  explicit BigUint(uint64_t value = 0) {
    for (; value != 0; value >>= 32)
      blocks_.push_back(static_cast<uint32_t>(value));
  }

  [[nodiscard]] static BigUint pow2(int exponent) {
    BigUint result{1};
    result.shift_left(exponent);
    return result;
  }

  void multiply(uint32_t factor) {
    uint64_t carry = 0;
    for (auto& block : blocks_) {
      const uint64_t product = uint64_t{block} * factor + carry;
      block = static_cast<uint32_t>(product);
      carry = product >> 32;
    }
    if (carry != 0)
      blocks_.push_back(static_cast<uint32_t>(carry));
  }

  void multiply_pow10(int exponent) {
    for (; exponent >= 9; exponent -= 9)
      multiply(1'000'000'000);
    for (; exponent > 0; --exponent)
      multiply(10);
  }

  void shift_left(int bits) {
    if (blocks_.empty())
      return;
    blocks_.insert(blocks_.begin(), static_cast<std::size_t>(bits / 32), 0);
    if (const int rest = bits % 32; rest != 0) {
      uint32_t carry = 0;
      for (auto& block : blocks_) {
        const uint32_t next = block >> (32 - rest);
        block = (block << rest) | carry;
        carry = next;
      }
      if (carry != 0)
        blocks_.push_back(carry);
    }
  }

  void add(const BigUint& other) {
    blocks_.resize(std::max(blocks_.size(), other.blocks_.size()), 0);
    uint64_t carry = 0;
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const uint64_t sum =
        uint64_t{blocks_[i]} + (i < other.blocks_.size() ? other.blocks_[i] : 0) + carry;
      blocks_[i] = static_cast<uint32_t>(sum);
      carry = sum >> 32;
    }
    if (carry != 0)
      blocks_.push_back(static_cast<uint32_t>(carry));
  }

  /// *this -= other; requires *this >= other.
  void subtract(const BigUint& other) {
    int64_t borrow = 0;
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      int64_t diff =
        int64_t{blocks_[i]} - (i < other.blocks_.size() ? other.blocks_[i] : 0) - borrow;
      borrow = diff < 0 ? 1 : 0;
      blocks_[i] = static_cast<uint32_t>(diff + (borrow << 32));
    }
    while (!blocks_.empty() && blocks_.back() == 0)
      blocks_.pop_back();
  }

  /// The quotient digit of *this / divisor (at most 9), leaving the remainder in *this.
  uint32_t divide_digit(const BigUint& divisor) {
    uint32_t digit = 0;
    while (compare(*this, divisor) >= 0) {
      subtract(divisor);
      ++digit;
    }
    return digit;
  }

  friend int compare(const BigUint& a, const BigUint& b) {
    if (a.blocks_.size() != b.blocks_.size())
      return a.blocks_.size() < b.blocks_.size() ? -1 : 1;
    for (std::size_t i = a.blocks_.size(); i-- > 0;)
      if (a.blocks_[i] != b.blocks_[i])
        return a.blocks_[i] < b.blocks_[i] ? -1 : 1;
    return 0;
  }

private:
  std::vector<uint32_t> blocks_; // little-endian, no leading zero blocks
};

/// A positive binary float as mantissa * 2^exponent, with what Dragon4 needs to know about its
/// neighbours.
struct BinaryFloat {
  uint64_t mantissa = 0;
  int exponent = 0;
  int mantissa_bit = 0;         // index of the highest set bit of mantissa
  bool unequal_margins = false; // the next value down is half as far as the next one up
};

/// |value| decomposed in the format of `dtype` (value must be exactly representable in it).
BinaryFloat decompose(double value, DType dtype) {
  uint64_t bits = 0;
  int fraction_bits = 52;
  int exponent_bias = 1023;
  const auto magnitude = static_cast<float>(std::fabs(value));
  switch (dtype) {
    case DType::float16:
      bits = float16{magnitude}.bits;
      fraction_bits = 10;
      exponent_bias = 15;
      break;
    case DType::bfloat16:
      bits = bfloat16{magnitude}.bits;
      fraction_bits = 7;
      exponent_bias = 127;
      break;
    case DType::float32:
      bits = std::bit_cast<uint32_t>(magnitude);
      fraction_bits = 23;
      exponent_bias = 127;
      break;
    default: bits = std::bit_cast<uint64_t>(std::fabs(value)); break;
  }
  const uint64_t fraction = bits & ((uint64_t{1} << fraction_bits) - 1);
  const auto biased_exponent = static_cast<int>(bits >> fraction_bits);
  BinaryFloat f;
  if (biased_exponent != 0) {
    f.mantissa = fraction | (uint64_t{1} << fraction_bits);
    f.exponent = biased_exponent - exponent_bias - fraction_bits;
    f.mantissa_bit = fraction_bits;
    f.unequal_margins = biased_exponent != 1 && fraction == 0;
  } else {
    f.mantissa = fraction;
    f.exponent = 1 - exponent_bias - fraction_bits;
    f.mantissa_bit = fraction == 0 ? 0 : static_cast<int>(std::bit_width(fraction)) - 1;
  }
  return f;
}

/// How Dragon4's cutoffs count digits.
enum class Cutoff { total_length, fraction_length };

/// numpy's Dragon4 in unique mode: the shortest digits that identify `f`,
/// stopping at `cutoff_max` digits and printing at least `cutoff_min` digits
/// (either -1 for none), counted as `mode` says.
Decimal dragon4(const BinaryFloat& f, Cutoff mode, int cutoff_max, int cutoff_min) {
  if (f.mantissa == 0)
    return {"0", 0};
  // value, scale and margins are scaled so that value / scale is the float
  // and margin / scale is half the distance to its neighbour.
  BigUint value{f.mantissa};
  BigUint scale;
  BigUint margin_low;
  const int extra = f.unequal_margins ? 2 : 1;
  if (f.exponent > 0) {
    value.shift_left(f.exponent + extra);
    scale = BigUint{uint64_t{1} << extra};
    margin_low = BigUint::pow2(f.exponent);
  } else {
    value.shift_left(extra);
    scale = BigUint::pow2(-f.exponent + extra);
    margin_low = BigUint{1};
  }
  auto margin_high = [&] {
    BigUint high = margin_low;
    if (f.unequal_margins)
      high.multiply(2);
    return high;
  };
  const bool is_even = f.mantissa % 2 == 0;

  int digit_exponent = static_cast<int>(
    std::ceil(static_cast<double>(f.mantissa_bit + f.exponent) * 0.30102999566398119521 - 0.69));
  if (cutoff_max >= 0 && mode == Cutoff::fraction_length && digit_exponent <= -cutoff_max)
    digit_exponent = -cutoff_max + 1;
  if (digit_exponent > 0) {
    scale.multiply_pow10(digit_exponent);
  } else if (digit_exponent < 0) {
    value.multiply_pow10(-digit_exponent);
    margin_low.multiply_pow10(-digit_exponent);
  }
  if (compare(value, scale) >= 0) {
    ++digit_exponent; // the estimate was one too low
  } else {
    value.multiply(10);
    margin_low.multiply(10);
  }

  int cutoff_max_exponent = digit_exponent - 1000;
  if (cutoff_max >= 0)
    cutoff_max_exponent =
      std::max(cutoff_max_exponent,
               mode == Cutoff::total_length ? digit_exponent - cutoff_max : -cutoff_max);
  int cutoff_min_exponent = digit_exponent;
  if (cutoff_min >= 0)
    cutoff_min_exponent =
      std::min(cutoff_min_exponent,
               mode == Cutoff::total_length ? digit_exponent - cutoff_min : -cutoff_min);

  Decimal result;
  result.exponent = digit_exponent - 1;
  bool low = false;
  bool high = false;
  uint32_t digit = 0;
  for (;;) {
    --digit_exponent;
    digit = value.divide_digit(scale);
    BigUint value_high = value;
    value_high.add(margin_high());
    // Ties count as identifying when the mantissa is even (round-half-even reading).
    const int low_cmp = compare(value, margin_low);
    const int high_cmp = compare(value_high, scale);
    low = is_even ? low_cmp <= 0 : low_cmp < 0;
    high = is_even ? high_cmp >= 0 : high_cmp > 0;
    if (((low || high) && digit_exponent <= cutoff_min_exponent)
        || digit_exponent == cutoff_max_exponent)
      break;
    result.digits += static_cast<char>('0' + digit);
    value.multiply(10);
    margin_low.multiply(10);
  }

  // Round the last digit: down when only down identifies the value, else to nearest (ties to even).
  bool round_down = low;
  if (low == high) {
    value.multiply(2);
    const int cmp = compare(value, scale);
    round_down = cmp < 0 || (cmp == 0 && digit % 2 == 0);
  }
  if (round_down) {
    result.digits += static_cast<char>('0' + digit);
  } else if (digit < 9) {
    result.digits += static_cast<char>('0' + digit + 1);
  } else {
    // Carry through trailing nines; all nines become "1" one decade up.
    while (!result.digits.empty() && result.digits.back() == '9')
      result.digits.pop_back();
    if (result.digits.empty()) {
      result.digits = "1";
      ++result.exponent;
    } else {
      ++result.digits.back();
    }
  }
  return result;
}

} // namespace

void trim_trailing_zeros(std::string& digits) {
  while (!digits.empty() && digits.back() == '0')
    digits.pop_back();
}

/// numpy's positional digits: unique, at most `max_fraction` fractional digits
/// (-1: no limit), trailing zeros trimmed.
Positional positional(double magnitude, DType dtype, int max_fraction) {
  const Decimal d = dragon4(decompose(magnitude, dtype), Cutoff::fraction_length, max_fraction, 0);
  Positional result;
  if (d.exponent >= 0) {
    const auto integer_len = static_cast<std::size_t>(d.exponent) + 1;
    result.integer = d.digits.substr(0, std::min(integer_len, d.digits.size()));
    result.integer.resize(integer_len, '0');
    if (d.digits.size() > integer_len)
      result.fraction = d.digits.substr(integer_len);
  } else {
    result.integer = "0";
    result.fraction = std::string(static_cast<std::size_t>(-d.exponent - 1), '0') + d.digits;
  }
  trim_trailing_zeros(result.fraction);
  return result;
}

/// numpy's scientific digits: unique with at most `max_fraction` and at least
/// `min_fraction` digits after the first (-1: no bound); the exponent of "0" is 0.
Decimal scientific(double magnitude, DType dtype, int max_fraction, int min_fraction) {
  return dragon4(decompose(magnitude, dtype), Cutoff::total_length,
                 max_fraction < 0 ? -1 : max_fraction + 1,
                 min_fraction < 0 ? -1 : min_fraction + 1);
}

std::string exponent_text(int exponent, std::size_t min_digits) {
  std::string digits = std::to_string(std::abs(exponent));
  if (digits.size() < min_digits)
    digits.insert(0, min_digits - digits.size(), '0');
  return (exponent < 0 ? "-" : "+") + digits;
}

std::string non_finite_text(double value) {
  if (std::isnan(value))
    return "nan";
  return value < 0 ? "-inf" : "inf";
}

} // namespace troupe::internal
