#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The local shared-memory all-reduce of replicas in one process.
///
/// Every participant's tensors already live in this process, so the reduction
/// reads each input once and writes one output that all participants then
/// share without copying. The work is cut into `parts` (contiguous element
/// ranges, cache-line aligned) so that each participating replica reduces one
/// part on its own thread:
///   1. the group actor builds the plan once every participant has contributed;
///   2. each replica runs `run_part(p)` for its part p (or the group runs all
///      parts itself when the tensors are small);
///   3. when every part is done, `outputs` hold the result for everyone.
/// Its floor is reading n·S and writing S bytes at memory bandwidth.
class LocalAllReduce {
public:
  /// Plans the reduction of `inputs[participant][tensor]` into fresh outputs,
  /// split into at most `max_parts` parts of at least `min_part_bytes` each.
  /// Inputs must already have matching fingerprints. `into_first`: the
  /// outputs are the first participant's tensors, written in their own memory
  /// (an in-place collective, whose callers handed troupe the only handles).
  LocalAllReduce(ReduceOp op, std::vector<std::vector<Tensor>> inputs, size_t max_parts,
                 size_t min_part_bytes, bool into_first = false);

  /// Number of parts the work was cut into (>= 1).
  [[nodiscard]] size_t num_parts() const noexcept { return parts_.size(); }

  /// Reduces part `part`; parts may run concurrently on different threads.
  void run_part(size_t part) const;

  /// The reduced tensors (valid once every part has run).
  [[nodiscard]] const std::vector<Tensor>& outputs() const noexcept { return outputs_; }

private:
  struct Span {
    size_t tensor;
    int64_t begin;
    int64_t end;
  };

  ReduceOp op_;
  std::vector<std::vector<Tensor>> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<std::byte*> output_data_;
  std::vector<std::vector<Span>> parts_;
  bool streaming_ = false;
};

} // namespace troupe::internal
