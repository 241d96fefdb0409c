#include <troupe/core/shape.hpp>

#include <ostream>

#include <troupe/core/errors.hpp>

namespace troupe {

int64_t Shape::num_elements() const noexcept {
  // A zero dim empties the shape whatever the others: checked first, so that
  // huge other dims cannot overflow the product on the way.
  for (auto d : dims_)
    if (d == 0)
      return 0;
  int64_t n = 1; // a scalar holds one element
  for (auto d : dims_)
    n *= d;
  return n;
}

Shape Shape::with_dim(int axis, int64_t size) const {
  auto index = static_cast<size_t>(normalize_axis(axis));
  if (size < 0)
    fail(Errc::invalid_argument, "dimension " + std::to_string(size) + " for axis "
                                   + std::to_string(axis) + " of shape " + to_string()
                                   + " must not be negative");
  Shape result = *this;
  result.dims_[index] = size;
  return result;
}

int Shape::normalize_axis(int axis) const {
  const int r = rank();
  if (axis >= -r && axis < r)
    return axis < 0 ? axis + r : axis;
  std::string message = "axis " + std::to_string(axis)
                        + " is out of range for a tensor of rank " + std::to_string(r);
  if (r == 0)
    message += " (a scalar has no axes)";
  else
    message += " (valid: " + std::to_string(-r) + ".." + std::to_string(r - 1) + ")";
  fail(Errc::invalid_argument, message);
}

std::string Shape::to_string() const {
  // Python's tuple syntax, as TensorFlow prints shapes: (), (3,), (2, 2).
  std::string out = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += std::to_string(dims_[i]);
  }
  if (dims_.size() == 1)
    out += ',';
  out += ')';
  return out;
}

std::ostream& operator<<(std::ostream& out, const Shape& shape) {
  return out << shape.to_string();
}

} // namespace troupe
