#pragma once

#include <vector>

#include <troupe/datasets/element.hpp>

namespace troupe {

/// Splits one global batch into per-replica batches as TensorFlow's
/// experimental_distribute_dataset does: with b rows (axis 0 of every
/// component) and n replicas, replica i gets rows
/// [i * ceil(b / n), min((i + 1) * ceil(b / n), b)), so trailing replicas may
/// get an empty batch (shape (0, ...)). The pieces share the batch's buffers.
///
/// TensorFlow's documented results: range(6).batch(4) on 2 replicas gives
/// [0 1]/[2 3], then [4]/[5]; range(8).batch(4) on 3 replicas gives the third
/// replica [] every step. Components must have a batch axis with the same
/// number of rows; otherwise Error(invalid_argument) says to batch first.
[[nodiscard]] std::vector<Element> split_global_batch(const Element& batch, int num_replicas);

} // namespace troupe
