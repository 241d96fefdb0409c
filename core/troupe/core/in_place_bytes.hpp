#pragma once

#include <cstddef>

#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The host bytes of `tensor` to write an in-place collective's result into,
/// without copy-on-write: the write is meant to land in this very memory
/// (ReplicaContext::all_reduce_in_place).
///
/// Only for a collective whose caller handed troupe the only handle of the
/// buffer: the other handles that exist are the collective's own (its
/// algorithm, its packs, its result), which all stand for the value being
/// reduced. Anywhere else, `mutable_raw_data()` keeps Tensor's value semantics.
[[nodiscard]] inline std::byte* in_place_bytes(const Tensor& tensor) {
  // raw_data() checks the handle and that the host can address the bytes.
  return const_cast<std::byte*>(tensor.raw_data());
}

} // namespace troupe::internal
