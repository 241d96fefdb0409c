#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/datasets/fwd.hpp>

namespace troupe {

class Tensor;

/// The dtype and (partially known) shape of a component (tf.TensorSpec):
/// a dimension of -1 is unknown, as `None` in TensorFlow (e.g. the batch
/// dimension of a batch without drop_remainder).
struct TensorSpec {
  Shape shape;
  DType dtype = DType::float32;

  /// The spec of `tensor` (every dimension known).
  [[nodiscard]] static TensorSpec of(const Tensor& tensor);
  /// True when `tensor` has this dtype and matches every known dimension.
  [[nodiscard]] bool is_compatible_with(const Tensor& tensor) const;
  /// "TensorSpec(shape=(None, 784), dtype=float32)".
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

/// The spec of a dataset's elements: one TensorSpec per component, and
/// whether the element is a tuple.
struct ElementSpec {
  std::vector<TensorSpec> components;
  bool tuple = false;

  /// "TensorSpec(...)" or "(TensorSpec(...), TensorSpec(...))".
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const ElementSpec&, const ElementSpec&) = default;
};

std::ostream& operator<<(std::ostream& out, const TensorSpec& spec);
std::ostream& operator<<(std::ostream& out, const ElementSpec& spec);

} // namespace troupe
