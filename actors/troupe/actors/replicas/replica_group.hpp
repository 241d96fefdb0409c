#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <troupe/collectives/cross_worker_collectives.hpp>
#include <troupe/actors/fwd.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/net/link/frame_sender.hpp>
#include <troupe/net/link/link_messages.hpp>

namespace troupe::internal {

struct RunJob;

/// How a ReplicaGroup runs its collectives.
struct GroupOptions {
  double timeout_seconds = 60;         ///< a collective fails on every replica after this
  double stall_warning_seconds = 10;   ///< then a warning names who has not contributed
  std::size_t split_bytes = 256 << 10; ///< all-reduces larger than this are split over replicas
  std::size_t stack_bytes = 1024 << 10; ///< fiber stack per replica
  /// Multi-worker groups: this worker's place among the workers (collectives
  /// then span every worker, through the data-plane link given to the group).
  std::optional<CrossWorkerSetup> cluster;
  /// The group's id (a collective key's first part, and the frames' `group`
  /// across workers). Unset: the runtime's next local id, which only a group
  /// without `cluster` may take; a multi-worker group needs the id every
  /// worker gives it (its cluster strategy's position, see
  /// RuntimeImpl::next_cluster_group_id). Workers of one simulated cluster
  /// share one runtime but need one id.
  std::optional<uint64_t> group_id;
  /// How collectives of GPU tensors run (NCCL, or AUTO's choice); a
  /// multi-worker group takes its cluster setup's.
  CommunicationImplementation implementation = CommunicationImplementation::AUTO;
  /// Collectives of GPU tensors through NCCL: small tensors are packed into
  /// buffers of at most this many bytes (0: none); a multi-worker group
  /// takes its cluster setup's.
  int64_t bytes_per_pack = 0;
  /// Multi-worker groups over UCX: the transport the group hands its frames
  /// to itself (ClusterNode::frame_sender); null: through the link actor.
  std::shared_ptr<FrameSender> direct_link;
};

/// The replica actors of one strategy in this process and the actor that
/// coordinates their collectives. Each replica runs the strategy's per-replica
/// function on its own fiber; see docs/protocol.md.
class ReplicaGroup {
public:
  /// Spawns one replica actor per device. `frames[i]` is the strategy's context
  /// frame that replica i installs while its function runs.
  ///
  /// With `options.cluster`, `link` is the data-plane link actor of this
  /// worker (required then).
  ReplicaGroup(Runtime& runtime, std::vector<DeviceSpec> devices, std::vector<void*> frames,
               GroupOptions options, const DataPlaneHandle& link = {});
  /// The same, for groups the runtime itself owns (its AgreementGroup).
  ReplicaGroup(Executor& runtime, std::vector<DeviceSpec> devices, std::vector<void*> frames,
               GroupOptions options, const DataPlaneHandle& link = {});
  ~ReplicaGroup();
  ReplicaGroup(const ReplicaGroup&) = delete;
  ReplicaGroup& operator=(const ReplicaGroup&) = delete;

  [[nodiscard]] int size() const noexcept;
  [[nodiscard]] ReplicaHandle& handle(int replica);

  /// Calls `body(i)` on replica i's fiber for every i and blocks the calling
  /// (non-actor) thread until all have finished. Returns each replica's
  /// exception (null when it succeeded). One run at a time: a concurrent call
  /// is Error(failed_precondition). If waiting fails (a simulation deadlock),
  /// the replicas are stopped and later runs fail.
  std::vector<std::exception_ptr> run(const std::function<void(int)>& body);

  /// The two halves of run(), for driving several groups at once (the
  /// workers of a simulated cluster in one process): start() hands `body`
  /// (which must outlive the run) to the replicas and returns at once;
  /// finish() waits for that run and returns what run() returns.
  [[nodiscard]] std::shared_ptr<RunJob> start(const std::function<void(int)>& body);
  std::vector<std::exception_ptr> finish(const std::shared_ptr<RunJob>& job);

private:
  void stop_actors();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace troupe::internal
