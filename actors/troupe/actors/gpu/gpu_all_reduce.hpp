#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/fibers/fiber_collective.hpp>
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
/// hands it to each replica, whose fiber runs its share (`run`). Streams wait
/// for each other through events, never the host for a stream:
/// 1. each replica records "my input is written" on its stream;
/// 2. once all have (a rendezvous of the fibers), each stream waits for the
///    others' input events, sums its slice, copies it into every output and
///    records "my slices are written";
/// 3. once all have, each stream waits for the others' slices; the replica
///    returns its output while the GPUs still work, and whatever it enqueues
///    next runs after the all-reduce. Inputs may be freed then: their
///    readers are behind the events of step 3.
/// Only fibers wait (they suspend, for the device actors to enqueue, not for
/// the GPU). A failure on one replica fails the collective on every replica,
/// naming it.
class GpuAllReduce final : public FiberCollective {
public:
  /// Checks the inputs (float32, every replica on a GPU that the others can
  /// read) and creates the events (each replica allocates its outputs in
  /// run()); throws Error(not_supported / invalid_argument) naming what does
  /// not fit.
  GpuAllReduce(ReduceOp op, std::vector<std::vector<Tensor>> inputs, std::vector<DeviceSpec> devices);

  /// Replica `replica`'s share, on its fiber; returns its outputs. `await`
  /// suspends the calling fiber until a completion is set.
  [[nodiscard]] std::vector<Tensor> run(int replica, const std::function<void(const Completion&)>& await) override;

private:
  /// The events of one all-reduce, destroyed with the last launch that uses them.
  struct Events;

  /// All replicas arrive before any goes on.
  struct Rendezvous {
    explicit Rendezvous(int parties) : waiting(parties) {}
    std::atomic<int> waiting;
    Completion all_arrived;
  };

  void arrive(Rendezvous& rendezvous, const std::function<void(const Completion&)>& await);
  /// After a failure that left some replica's kernels unwaitable: `replica`'s
  /// buffers are never freed (they may still be used by that stream).
  void keep_buffers_forever(int replica);
  void record_failure(int replica, const std::string& why);
  /// Throws the first failure of any replica, if there was one.
  void rethrow_failure();

  ReduceOp op_;
  std::vector<std::vector<Tensor>> inputs_;    // [replica][tensor]
  std::vector<DeviceSpec> devices_;            // [replica]
  std::vector<std::vector<Tensor>> outputs_;   // [replica][tensor]
  std::vector<std::vector<float*>> output_data_;  // [replica], each written by its replica only
  std::unique_ptr<std::atomic<bool>[]> slices_written_;  // [replica]: its step 2 was enqueued
  std::shared_ptr<Events> events_;
  Rendezvous inputs_recorded_;
  Rendezvous slices_recorded_;
  std::mutex mutex_;
  std::string failure_;
};

} // namespace troupe::internal
