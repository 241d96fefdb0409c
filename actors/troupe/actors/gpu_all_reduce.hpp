#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <troupe/actors/completion.hpp>
#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The all-reduce of float32 GPU tensors between the replicas of one process,
/// without NCCL: every replica reduces its 1/N slice of every tensor on its
/// own GPU's stream, reading the other replicas' inputs directly (logical
/// GPUs of one card share its memory; separate cards need peer access), and
/// writes the slice into every replica's output. Reads N·S and writes N·S in
/// all, spread over the N streams.
///
/// The collective group builds the plan once every replica contributed and
/// hands it to each replica, whose fiber runs its share (`run`): it waits for
/// every replica's stream to be past its inputs, enqueues its kernels, waits
/// for its own stream, then for the other replicas. Only fibers wait (they
/// suspend); no thread blocks on a stream. A failure on one replica fails the
/// collective on every replica, naming it.
class GpuAllReduce {
public:
  /// Checks the inputs (float32, every replica on a GPU that the others can
  /// read) and allocates each replica's outputs on its device; throws
  /// Error(not_supported / invalid_argument) naming what does not fit.
  GpuAllReduce(ReduceOp op, std::vector<std::vector<Tensor>> inputs, std::vector<DeviceSpec> devices);

  /// Whether any of `inputs` lives on a GPU (the group then builds this plan).
  [[nodiscard]] static bool wanted(const std::vector<std::vector<Tensor>>& inputs) noexcept;

  /// Replica `replica`'s share, on its fiber; returns its outputs. `await`
  /// suspends the calling fiber until a completion is set.
  [[nodiscard]] std::vector<Tensor> run(int replica, const std::function<void(const Completion&)>& await);

private:
  void record_failure(int replica, const std::string& why);

  ReduceOp op_;
  std::vector<std::vector<Tensor>> inputs_;    // [replica][tensor]
  std::vector<DeviceSpec> devices_;            // [replica]
  std::vector<std::vector<Tensor>> outputs_;   // [replica][tensor]
  std::vector<std::vector<float*>> output_data_;
  std::atomic<int> running_;
  Completion all_done_;
  std::mutex mutex_;
  std::string failure_;
};

} // namespace troupe::internal
