#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/actors/fibers/fiber_collective.hpp>
#include <troupe/actors/gpu/nccl_messages.hpp>
#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/communication_options.hpp>
#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// How one collective group runs the collectives of GPU tensors of its
/// local replicas, and the NCCL communicator they use.
///
/// NCCL when the strategy asks for it (CommunicationImplementation::NCCL),
/// or by default (AUTO) when every replica has its own physical GPU and
/// NCCL is available; else, in one process, the all-reduce that reads the
/// other replicas' GPU memory (GpuAllReduce), since NCCL refuses two ranks
/// on one GPU (logical GPUs of one card). The choice is logged once.
///
/// The communicator spans every replica of the group on every worker (rank
/// = global replica id); it is created by the device actors at its first
/// collective and named by a generation: after a collective on it failed,
/// every local rank is aborted and the next collective makes a new one.
class GpuCollectives {
public:
  struct Setup {
    uint64_t group = 0;
    std::vector<DeviceSpec> devices;  ///< this worker's replicas
    CommunicationImplementation implementation = CommunicationImplementation::AUTO;
    int64_t bytes_per_pack = 0;
    std::chrono::nanoseconds timeout{0};
    int first_rank = 0;   ///< global id of this worker's first replica
    int ranks = 1;        ///< replicas over all workers
    bool across_workers = false;
  };

  /// How a failed NCCL group of collective `key` is reported back to the
  /// group's actor (which calls failed(), and tells the other workers).
  using CommunicatorFailed =
    std::function<void(const CollectiveKey& key, const std::string& name, const std::string& why)>;

  GpuCollectives(Setup setup, CommunicatorFailed communicator_failed);

  /// Whether any of `inputs` ([replica][tensor]) lives on a GPU.
  [[nodiscard]] static bool wanted(const std::vector<std::vector<Tensor>>& inputs) noexcept;

  /// Why NCCL cannot run between replicas on `devices` (a device that is not
  /// a GPU of a troupe Runtime, two on one card, no NCCL), or "" when it can.
  [[nodiscard]] static std::string nccl_unusable_reason(const std::vector<DeviceSpec>& devices);

  /// Whether this group's GPU collectives run through NCCL; throws
  /// Error(not_supported) naming why NCCL was asked for and cannot run.
  [[nodiscard]] bool uses_nccl();

  /// The communicator the next NCCL collective uses (rank: this worker's
  /// first replica's). Across workers, rank 0 makes it and the others
  /// adopt() rank 0's.
  [[nodiscard]] NcclCommunicatorSpec communicator();
  /// Across workers: the communicator rank 0 announces, as bytes for its
  /// announce frame (AnnouncePayload::communicator).
  [[nodiscard]] std::string announce();
  /// The communicator rank 0 announced; Error(data_loss) when the bytes do
  /// not read as one.
  void adopt(const std::string& announced);
  /// The name in announce()'s bytes; Error(data_loss) when they do not read as one.
  [[nodiscard]] static std::string announced_name(const std::string& announced);
  /// The communicator this group gave up last ("" if none).
  [[nodiscard]] const std::string& last_dropped() const noexcept { return last_dropped_; }

  /// The plan the local replicas run, through NCCL: see NcclCollective.
  /// `gather_rows`: all_gather, per rank, per tensor, its rows.
  [[nodiscard]] std::shared_ptr<FiberCollective> nccl_plan(const CollectiveKey& key, CollectiveKind kind, ReduceOp op,
                                                           int axis,
                                                           std::vector<std::vector<Tensor>> inputs,
                                                           std::vector<std::vector<int64_t>> gather_rows,
                                                           const std::string& what);

  /// A collective on communicator `name` failed on a replica (or a peer is
  /// gone): abort it on every local device; the next collective makes another.
  void failed(const std::string& name, const std::string& why);
  /// The current communicator cannot complete (a worker is lost): failed() for it.
  void abandon(const std::string& why);
  /// The group goes away: every local rank of the current communicator is
  /// freed once its collectives finished (they are not cut short).
  void close();
  /// The current communicator's name ("" when there is none).
  [[nodiscard]] std::string current_name() const { return current_ ? current_->name : std::string{}; }

private:
  Setup setup_;
  CommunicatorFailed communicator_failed_;
  std::optional<bool> uses_nccl_;
  std::optional<NcclCommunicatorSpec> current_;
  uint64_t generation_ = 0;
  std::string last_dropped_;
};

} // namespace troupe::internal
