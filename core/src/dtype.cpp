#include <troupe/core/dtype.hpp>

#include <array>
#include <bit>
#include <string>

#include <Eigen/Core>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

// Our structs and Eigen's are both a bare uint16_t; Eigen does the IEEE
// round-to-nearest-even, NaN, infinity and subnormal handling for us.
static_assert(sizeof(float16) == sizeof(Eigen::half));
static_assert(sizeof(bfloat16) == sizeof(Eigen::bfloat16));

struct NamedDType {
  std::string_view name;
  DType dtype;
};

// Canonical names first (in enum order): the error message lists those.
constexpr std::array<NamedDType, 8> canonical_names{{
  {"bool", DType::bool_},
  {"int32", DType::int32},
  {"int64", DType::int64},
  {"float16", DType::float16},
  {"bfloat16", DType::bfloat16},
  {"float32", DType::float32},
  {"float64", DType::float64},
  {"uint8", DType::uint8},
}};

// Spellings tf.as_dtype also accepts.
constexpr std::array<NamedDType, 3> aliases{{
  {"half", DType::float16},
  {"float", DType::float32},
  {"double", DType::float64},
}};

} // namespace

// -- float16 / bfloat16 -------------------------------------------------------

float16::float16(float value) : bits(std::bit_cast<uint16_t>(Eigen::half(value))) {}

float16::operator float() const {
  return static_cast<float>(std::bit_cast<Eigen::half>(bits));
}

bfloat16::bfloat16(float value)
  : bits(std::bit_cast<uint16_t>(Eigen::bfloat16(value))) {}

bfloat16::operator float() const {
  return static_cast<float>(std::bit_cast<Eigen::bfloat16>(bits));
}

// -- DType --------------------------------------------------------------------

std::string_view name(DType dtype) noexcept {
  for (const auto& entry : canonical_names)
    if (entry.dtype == dtype)
      return entry.name;
  return "unknown";
}

std::size_t size_of(DType dtype) noexcept {
  switch (dtype) {
    case DType::bool_: return sizeof(bool);
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::float16: return 2;
    case DType::bfloat16: return 2;
    case DType::float32: return 4;
    case DType::float64: return 8;
    case DType::uint8: return 1;
  }
  return 0;
}

bool is_integer(DType dtype) noexcept {
  return dtype == DType::int32 || dtype == DType::int64 || dtype == DType::uint8;
}

DType true_division_dtype(DType dtype) noexcept {
  switch (dtype) {
    case DType::int32:
    case DType::int64: return DType::float64;
    case DType::uint8: return DType::float32;
    default: return dtype;
  }
}

bool is_floating(DType dtype) noexcept {
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64: return true;
    case DType::bool_:
    case DType::int32:
    case DType::int64:
    case DType::uint8: return false;
  }
  return false;
}

DType parse_dtype(std::string_view text) {
  for (const auto& entry : canonical_names)
    if (entry.name == text)
      return entry.dtype;
  for (const auto& entry : aliases)
    if (entry.name == text)
      return entry.dtype;
  std::string message = "unknown dtype \"";
  message.append(text);
  message += "\"; valid dtypes are";
  const char* sep = " ";
  for (const auto& entry : canonical_names) {
    message += sep;
    message.append(entry.name);
    sep = ", ";
  }
  fail(Errc::invalid_argument, message);
}

} // namespace troupe
