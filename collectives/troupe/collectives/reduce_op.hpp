#pragma once

#include <string_view>

#include <troupe/collectives/fwd.hpp>

namespace troupe {

/// How values from different replicas are combined (tf.distribute.ReduceOp).
enum class ReduceOp : unsigned char {
  SUM,   ///< elementwise sum
  MEAN,  ///< elementwise sum divided by the number of values (integers truncate)
};

/// "SUM" or "MEAN".
[[nodiscard]] std::string_view name(ReduceOp op) noexcept;

/// Parses "sum"/"SUM"/"mean"/"MEAN" (TensorFlow accepts either case); throws
/// Error(invalid_argument) quoting anything else.
[[nodiscard]] ReduceOp parse_reduce_op(std::string_view text);

} // namespace troupe
