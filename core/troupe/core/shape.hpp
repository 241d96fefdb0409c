#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

#include <troupe/core/fwd.hpp>

namespace troupe {

/// The dimensions of a Tensor; rank 0 is a scalar. Prints as TensorFlow does: `()`, `(3,)`, `(2, 2)`.
class Shape {
public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  // -- properties -------------------------------------------------------------

  [[nodiscard]] int rank() const noexcept { return static_cast<int>(dims_.size()); }
  [[nodiscard]] int64_t num_elements() const noexcept;
  [[nodiscard]] int64_t operator[](int axis) const { return dims_.at(static_cast<size_t>(axis)); }
  [[nodiscard]] const std::vector<int64_t>& dims() const noexcept { return dims_; }

  /// The same shape with dimension `axis` set to `size`.
  [[nodiscard]] Shape with_dim(int axis, int64_t size) const;

  /// Normalises a possibly negative axis (-1 = last); throws Error(invalid_argument)
  /// naming the axis and the rank when it is out of range.
  [[nodiscard]] int normalize_axis(int axis) const;

  /// "(2, 2)".
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const Shape&, const Shape&) = default;

private:
  std::vector<int64_t> dims_;
};

std::ostream& operator<<(std::ostream& out, const Shape& shape);

} // namespace troupe
