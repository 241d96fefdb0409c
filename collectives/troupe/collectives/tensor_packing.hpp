#pragma once

// How a collective's list of tensors travels between workers: all_reduce
// fuses consecutive tensors of one dtype into packs (one flat buffer and one
// algorithm instance each, as TensorFlow's bytes_per_pack); broadcast and
// all_gather send every tensor's bytes as one block.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The indices of the tensors one pack fuses.
struct TensorPack {
  std::vector<std::size_t> tensors;
};

/// Consecutive tensors of one dtype, up to `bytes_per_pack` each (0: no limit).
[[nodiscard]] std::vector<TensorPack> plan_packs(const std::vector<Tensor>& tensors, int64_t bytes_per_pack);

/// The pack's tensors as one flat tensor. A pack of one tensor is reshaped and
/// moved out of `tensors`, so that it is reduced in place when no one else
/// holds its buffer (copy-on-write otherwise).
[[nodiscard]] Tensor flatten(std::vector<Tensor>& tensors, const TensorPack& pack);

/// The pack's tensors cut out of `flat` (views, no copies), shaped as `shapes`, into `out`.
void unflatten(const Tensor& flat, const TensorPack& pack, const std::vector<Shape>& shapes,
               std::vector<Tensor>& out);

/// The pack's tensors copied out of `flat` into the memory of `targets` (an
/// in-place collective's fused pack, whose caller handed troupe the only
/// handles of `targets`); `out` gets those handles.
void unflatten_into(const Tensor& flat, const TensorPack& pack, const std::vector<Tensor>& targets,
                    std::vector<Tensor>& out);

/// Bytes of a block of tensors with the dtypes and shapes of `fp`.
[[nodiscard]] std::size_t block_bytes(const CollectiveFingerprint& fp);

/// Every tensor's bytes, one after the other.
[[nodiscard]] std::shared_ptr<std::vector<std::byte>> to_block(const std::vector<Tensor>& tensors);

/// The tensors of `fp` read from a block of block_bytes(fp) bytes at `data`.
[[nodiscard]] std::vector<Tensor> from_block(const CollectiveFingerprint& fp, const std::byte* data);

} // namespace troupe::internal
