// Printing tensors as TensorFlow's eager repr with numpy's str() of the values.
//
// The array layout follows numpy's `_formatArray` (75-column lines, a hanging
// indent per nesting level, `...` after 3 edge items per axis for arrays of
// more than 1000 elements) and the float layout follows numpy's
// `FloatingFormat` in its default 'maxprec' mode (at most 8 fractional digits,
// the shortest digits that round-trip, decimal points aligned; numpy 2.3+
// thresholds for scientific notation). Scalars print as numpy's str() of
// the scalar, which for float64 is Python's repr ("6.0", "True").

#include <troupe/core/tensor.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/core/float_digits.hpp>

namespace troupe {

using internal::Decimal;
using internal::Positional;
using internal::exponent_text;
using internal::non_finite_text;
using internal::positional;
using internal::scientific;
using internal::trim_trailing_zeros;

namespace {

constexpr int line_width = 75;
constexpr int64_t summary_threshold = 1000;
constexpr int64_t edge_items = 3;
constexpr int max_fraction_digits = 8;

/// numpy's str() of a float scalar: shortest digits, positional with ".0"
/// added when integral for 1e-4 <= |x| < 10^precision (1e16 for float64,
/// which is exactly Python's repr), scientific otherwise.
std::string scalar_float_text(double value, DType dtype) {
  if (!std::isfinite(value))
    return non_finite_text(value);
  const std::string sign = std::signbit(value) ? "-" : "";
  const double magnitude = std::fabs(value);
  double upper = 1e16;
  switch (dtype) {
    case DType::float16: upper = 1e3; break;
    case DType::bfloat16: upper = 1e2; break;
    case DType::float32: upper = 1e6; break;
    default: break;
  }
  if (magnitude == 0 || (magnitude >= 1e-4 && magnitude < upper)) {
    const Positional p = positional(magnitude, dtype, -1);
    return sign + p.integer + "." + (p.fraction.empty() ? "0" : p.fraction);
  }
  const Decimal d = scientific(magnitude, dtype, -1, -1);
  std::string mantissa = d.digits.substr(0, 1);
  if (d.digits.size() > 1)
    mantissa += "." + d.digits.substr(1);
  return sign + mantissa + "e" + exponent_text(d.exponent, 2);
}

// -- element formats ----------------------------------------------------------------

/// numpy's FloatingFormat (maxprec, precision 8, sign '-') fitted to the shown values.
class FloatFormat {
public:
  FloatFormat(const std::vector<double>& values, DType dtype) : dtype_(dtype) {
    std::vector<double> finite;
    for (double v : values)
      if (std::isfinite(v))
        finite.push_back(v);
    choose_notation(finite);
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exponential_) {
      fit_scientific(finite);
    } else {
      for (double v : finite) {
        const Positional p = positional(std::fabs(v), dtype_, max_fraction_digits);
        pad_left_ =
          std::max(pad_left_, static_cast<int>(p.integer.size()) + (std::signbit(v) ? 1 : 0));
        pad_right_ = std::max(pad_right_, static_cast<int>(p.fraction.size()));
      }
    }
    if (finite.size() != values.size()) {
      // Widen the column so that "nan" and "-inf" line up with the numbers.
      const bool negative_inf =
        std::any_of(values.begin(), values.end(), [](double v) { return std::isinf(v) && v < 0; });
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (negative_inf ? 1 : 0) - offset});
    }
  }

  [[nodiscard]] std::string operator()(double value) const {
    if (!std::isfinite(value)) {
      const std::string text = non_finite_text(value);
      const auto width = static_cast<std::size_t>(pad_left_ + pad_right_ + 1);
      return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
    }
    const std::string sign = std::signbit(value) ? "-" : "";
    std::string integer;
    std::string fraction;
    std::string suffix;
    if (exponential_) {
      // Values with fewer digits than the widest get their exact digits
      // extended (numpy's min_digits), so the column lines up.
      const Decimal d = scientific(std::fabs(value), dtype_, precision_, precision_);
      integer = sign + d.digits.substr(0, 1);
      fraction = d.digits.substr(1);
      fraction.resize(static_cast<std::size_t>(precision_), '0');
      suffix = "e" + exponent_text(d.exponent, exponent_digits_);
    } else {
      const Positional p = positional(std::fabs(value), dtype_, max_fraction_digits);
      integer = sign + p.integer;
      fraction = p.fraction;
      fraction.resize(static_cast<std::size_t>(pad_right_), ' ');
    }
    if (static_cast<int>(integer.size()) < pad_left_)
      integer.insert(0, static_cast<std::size_t>(pad_left_) - integer.size(), ' ');
    return integer + "." + fraction + suffix;
  }

private:
  /// numpy switches to scientific notation for large or very small values,
  /// or when they span more than three orders of magnitude.
  void choose_notation(const std::vector<double>& finite) {
    double max_value = 0;
    double min_value = 0;
    bool any = false;
    for (double v : finite) {
      const double magnitude = std::fabs(v);
      if (magnitude == 0)
        continue;
      max_value = any ? std::max(max_value, magnitude) : magnitude;
      min_value = any ? std::min(min_value, magnitude) : magnitude;
      any = true;
    }
    if (any)
      exponential_ =
        max_value >= large_threshold() || min_value < 1e-4 || ratio(max_value, min_value) > 1000;
  }

  /// 10^min(8, decimal precision of the dtype) (numpy 2.3+), so that digits
  /// the dtype cannot hold are not printed as if they were significant.
  [[nodiscard]] double large_threshold() const {
    switch (dtype_) {
      case DType::float16: return 1e3;
      case DType::bfloat16: return 1e2;
      case DType::float32: return 1e6;
      default: return 1e8;
    }
  }

  /// max / min computed in the dtype's own precision, as numpy does.
  [[nodiscard]] double ratio(double max_value, double min_value) const {
    const double exact = max_value / min_value;
    switch (dtype_) {
      case DType::float16: return static_cast<float>(float16{static_cast<float>(exact)});
      case DType::bfloat16: return static_cast<float>(bfloat16{static_cast<float>(exact)});
      case DType::float32: return static_cast<float>(exact);
      default: return exact;
    }
  }

  void fit_scientific(const std::vector<double>& finite) {
    for (double v : finite) {
      Decimal d = scientific(std::fabs(v), dtype_, max_fraction_digits, -1);
      trim_trailing_zeros(d.digits);
      precision_ = std::max(precision_, std::max(0, static_cast<int>(d.digits.size()) - 1));
      exponent_digits_ = std::max(exponent_digits_, std::to_string(std::abs(d.exponent)).size());
      pad_left_ = std::max(pad_left_, std::signbit(v) ? 2 : 1);
    }
    pad_right_ = static_cast<int>(exponent_digits_) + 2 + precision_;
  }

  DType dtype_;
  bool exponential_ = false;
  int pad_left_ = 0;
  int pad_right_ = 0;
  int precision_ = 0;               // fractional digits in scientific notation
  std::size_t exponent_digits_ = 2; // numpy prints at least two
};

/// The element at flat `index` of `tensor` as a double (exact for every float dtype).
double real_at(const Tensor& tensor, int64_t index) {
  return visit_dtype(tensor.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    const T value = reinterpret_cast<const T*>(tensor.raw_data())[index];
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return static_cast<float>(value);
    else
      return static_cast<double>(value);
  });
}

/// The element at flat `index` of an integer or bool tensor.
int64_t integer_at(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::bool_: return reinterpret_cast<const bool*>(tensor.raw_data())[index] ? 1 : 0;
    case DType::int32: return reinterpret_cast<const int32_t*>(tensor.raw_data())[index];
    case DType::uint8: return reinterpret_cast<const uint8_t*>(tensor.raw_data())[index];
    default: return reinterpret_cast<const int64_t*>(tensor.raw_data())[index];
  }
}

/// Formats the elements of one array at a common width, fitted to the shown elements.
class ElementFormat {
public:
  ElementFormat(const Tensor& tensor, const std::vector<int64_t>& shown) : tensor_(tensor) {
    if (is_floating(tensor.dtype())) {
      std::vector<double> values;
      values.reserve(shown.size());
      for (int64_t index : shown)
        values.push_back(real_at(tensor, index));
      float_format_.emplace(values, tensor.dtype());
    } else if (tensor.dtype() != DType::bool_) {
      for (int64_t index : shown)
        int_width_ = std::max(int_width_, std::to_string(integer_at(tensor, index)).size());
    }
  }

  [[nodiscard]] std::string operator()(int64_t index) const {
    if (float_format_)
      return (*float_format_)(real_at(tensor_, index));
    if (tensor_.dtype() == DType::bool_)
      // " True" lines up with "False".
      return integer_at(tensor_, index) != 0 ? " True" : "False";
    std::string text = std::to_string(integer_at(tensor_, index));
    return std::string(int_width_ - text.size(), ' ') + text;
  }

private:
  const Tensor& tensor_;
  std::optional<FloatFormat> float_format_;
  std::size_t int_width_ = 0;
};

// -- array layout ---------------------------------------------------------------------

/// numpy's `_formatArray` with separator ' ' and a 75-column line.
class ArrayLayout {
public:
  explicit ArrayLayout(const Tensor& tensor)
    : tensor_(tensor), dims_(tensor.shape().dims()), strides_(dims_.size(), 1),
      summarise_(tensor.num_elements() > summary_threshold) {
    for (int axis = static_cast<int>(dims_.size()) - 2; axis >= 0; --axis)
      strides_[axis] = strides_[axis + 1] * dims_[axis + 1];
  }

  [[nodiscard]] std::string format() const {
    std::vector<int64_t> shown;
    collect(0, 0, shown);
    const ElementFormat element{tensor_, shown};
    return recurse(element, 0, 0, " ", line_width);
  }

private:
  [[nodiscard]] bool summarised(int axis) const {
    return summarise_ && 2 * edge_items < dims_[axis];
  }

  /// The flat indices that will be printed (the formats fit these alone).
  void collect(int axis, int64_t offset, std::vector<int64_t>& out) const {
    if (axis == static_cast<int>(dims_.size())) {
      out.push_back(offset);
      return;
    }
    for (int64_t i = 0; i < dims_[axis]; ++i) {
      if (summarised(axis) && i == edge_items)
        i = dims_[axis] - edge_items;
      collect(axis + 1, offset + i * strides_[axis], out);
    }
  }

  /// Appends `word` to `line`, first moving `line` into `s` when it would pass `width`.
  static void extend_line(std::string& s, std::string& line, const std::string& word,
                          std::size_t width, const std::string& indent) {
    // Wrapping a line that holds only the indent would not help.
    if (line.size() + word.size() > width && line.size() > indent.size()) {
      line.erase(line.find_last_not_of(' ') + 1);
      s += line + "\n";
      line = indent;
    }
    line += word;
  }

  [[nodiscard]] std::string recurse(const ElementFormat& element, int axis, int64_t offset,
                                    const std::string& indent, int width) const {
    const int axes_left = static_cast<int>(dims_.size()) - axis;
    if (axes_left == 0)
      return element(offset);
    const std::string next_indent = indent + ' ';
    const int64_t length = dims_[axis];
    const bool summary = summarised(axis);
    const int64_t leading = summary ? edge_items : 0;
    const int64_t trailing = summary ? edge_items : length;
    auto child = [&](int64_t i) {
      return recurse(element, axis + 1, offset + i * strides_[axis], next_indent, width - 1);
    };
    std::string s;
    if (axes_left == 1) {
      const auto element_width = static_cast<std::size_t>(width - 1); // room for "]"
      std::string line = indent;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, child(i), element_width, indent);
        line += ' ';
      }
      if (summary) {
        extend_line(s, line, "...", element_width, indent);
        line += ' ';
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, child(length - i), element_width, indent);
        line += ' ';
      }
      extend_line(s, line, child(length - 1), element_width, indent);
      s += line;
    } else {
      // Blank lines between blocks grow with the number of axes below.
      const std::string line_sep(static_cast<std::size_t>(axes_left - 1), '\n');
      for (int64_t i = 0; i < leading; ++i)
        s += indent + child(i) + line_sep;
      if (summary)
        s += indent + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i)
        s += indent + child(length - i) + line_sep;
      s += indent + child(length - 1);
    }
    return "[" + s.substr(indent.size()) + "]";
  }

  const Tensor& tensor_;
  const std::vector<int64_t>& dims_;
  std::vector<int64_t> strides_;
  bool summarise_;
};

std::string format_scalar(const Tensor& tensor) {
  if (tensor.dtype() == DType::bool_)
    return integer_at(tensor, 0) != 0 ? "True" : "False";
  if (is_floating(tensor.dtype()))
    return scalar_float_text(real_at(tensor, 0), tensor.dtype());
  return std::to_string(integer_at(tensor, 0));
}

} // namespace

std::string format_values(const Tensor& tensor) {
  if (!tensor.valid())
    fail(Errc::invalid_argument,
         "format_values: called on an empty Tensor handle (default-constructed)");
  // GPU memory is printed from a host copy, as TensorFlow's numpy() does.
  if (!tensor.on_host())
    return format_values(tensor.to(Tensor::default_device()));
  if (tensor.rank() == 0)
    return format_scalar(tensor);
  if (tensor.num_elements() == 0)
    return "[]";
  return ArrayLayout{tensor}.format();
}

std::ostream& operator<<(std::ostream& out, const Tensor& tensor) {
  // Printing must not throw (it runs in error paths and logs), so an empty
  // handle prints as such.
  if (!tensor.valid())
    return out << "<Tensor: empty handle>";
  std::string values;
  try {
    values = format_values(tensor);
  } catch (const Error& e) {
    // The copy of a GPU tensor to the host can fail (its Runtime is gone).
    return out << "<Tensor: shape=" << tensor.shape().to_string() << ", dtype=" << name(tensor.dtype())
               << ", on " << tensor.device().short_name() << ", unreadable: " << e.what() << '>';
  }
  out << "<Tensor: shape=" << tensor.shape().to_string() << ", dtype=" << name(tensor.dtype())
      << ", value=";
  if (values.find('\n') != std::string::npos)
    out << '\n';
  return out << values << '>';
}

std::string to_string(const Tensor& tensor) {
  std::ostringstream out;
  out << tensor;
  return out.str();
}

} // namespace troupe
