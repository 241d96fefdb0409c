#pragma once

// A shape seen around one axis, as reductions along an axis walk it
// (internal to troupe_ops).

#include <cstdint>
#include <utility>
#include <vector>

#include <troupe/core/shape.hpp>

namespace troupe::internal {

/// `shape` as [outer, length, inner] around `axis` (negative counts from the
/// end; Shape::normalize_axis checks it), and the shape without that axis.
struct AxisSplit {
  int64_t outer = 1;   ///< elements of the axes before it, multiplied
  int64_t length = 1;  ///< the axis's size
  int64_t inner = 1;   ///< elements of the axes after it, multiplied
  Shape kept;          ///< `shape` without the axis: a reduction's result
};

[[nodiscard]] inline AxisSplit split_at_axis(const Shape& shape, int axis) {
  const int a = shape.normalize_axis(axis);
  const auto& dims = shape.dims();
  AxisSplit split;
  std::vector<int64_t> kept;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (i < a)
      split.outer *= dims[i];
    else if (i > a)
      split.inner *= dims[i];
    if (i != a)
      kept.push_back(dims[i]);
  }
  split.length = dims[a];
  split.kept = Shape{std::move(kept)};
  return split;
}

} // namespace troupe::internal
