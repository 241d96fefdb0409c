#pragma once

#include <cstddef>
#include <cstdint>

#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/dtype.hpp>

namespace troupe::internal {

/// out[i] = op(inputs[0][i], ..., inputs[n-1][i]) for elements [begin, end).
///
/// One streaming pass: inputs are read once and out is written once, in
/// blocks that stay in L1, so the cost is reading n·S and writing S bytes.
/// With `streaming_stores` the output bypasses the cache (for outputs much
/// larger than the last-level cache). 16-bit floats accumulate in float32.
/// MEAN divides by n (integers truncate; uint8 divides its exact sum, while
/// a uint8 SUM wraps modulo 256). bool is not reducible (the caller rejects it
/// before).
void reduce_elements(DType dtype, ReduceOp op, const std::byte* const* inputs, int num_inputs,
                     std::byte* out, int64_t begin, int64_t end, bool streaming_stores);

/// data[i] /= divisor for `count` elements of a floating dtype, in place:
/// the bits `data / divisor` (ops' divide) gives, computed in the same
/// precision (float32 for the 16-bit floats). The MEAN of an in-place
/// all_reduce across workers. Error(internal) for another dtype.
void divide_elements(DType dtype, std::byte* data, int64_t count, double divisor);

} // namespace troupe::internal
