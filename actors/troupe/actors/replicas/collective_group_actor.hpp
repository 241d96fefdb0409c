#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <troupe/collectives/cross_worker_collectives.hpp>
#include <troupe/collectives/flight_recorder.hpp>
#include <troupe/collectives/progress_tracker.hpp>
#include <troupe/net/link/frame_sender.hpp>
#include <troupe/net/link/link_messages.hpp>
#include <troupe/actors/replicas/collective_group_messages.hpp>
#include <troupe/actors/gpu/gpu_collectives.hpp>
#include <troupe/actors/replicas/replica_messages.hpp>
#include <troupe/core/device_spec.hpp>

namespace troupe::internal {

/// What a collective group actor is spawned with.
struct GroupSetup {
  uint64_t group_id = 0;
  std::vector<DeviceSpec> devices; ///< one per replica
  caf::timespan timeout;
  caf::timespan stall_warning;
  std::size_t split_bytes = 256 << 10;
  /// Multi-worker strategies: this worker's place in the cluster and its
  /// data-plane link; all_reduce and all_gather then continue across workers.
  std::optional<CrossWorkerSetup> cluster;
  DataPlaneHandle link;
  CommunicationImplementation implementation = CommunicationImplementation::AUTO;
  int64_t bytes_per_pack = 0;
  /// Frames go here, from the group's own thread, when set (UCX); else to `link`.
  std::shared_ptr<FrameSender> direct_link;
  /// The task's process in the timeline (Executor::trace_pid).
  int trace_pid = 0;
};

/// Coordinates the collectives of the replicas of one strategy in one process.
///
/// 1. Each replica sends a ContributionMsg per collective, keyed by
///    (group, run, seq) with its fingerprint.
/// 2. When every replica has contributed: fingerprints are checked (a mismatch
///    fails the collective on every replica, listing what each sent); then
///    all_gather concatenates, merge_call runs its function once, and
///    all_reduce either reduces here (small) or sends each replica one part of
///    a LocalAllReduce plan and waits for every PartDoneMsg.
/// 3. The result goes back to every replica as CollectiveDoneMsg, sharing the
///    output buffers.
/// With a cluster setup (MultiWorkerMirroredStrategy), step 3 waits for the
/// cross-worker half (CrossWorkerCollectives) to combine every worker's local
/// result before the replicas get it; frames of other workers arrive from
/// the link as LinkFrameMsg, lost workers as PeerLostMsg.
/// Collectives of GPU tensors are run by the replicas' fibers on their
/// devices' streams (GpuCollectives: NCCL, or GpuAllReduce), once the
/// fingerprints matched.
/// Failures never hang: a replica that finishes its function without issuing
/// a collective its peers issued (or fails first) fails that collective at
/// once, and a single timer fails collectives that pass their deadline,
/// naming who contributed and who did not (after logging a stall warning).
class CollectiveGroupActor final : public CollectiveGroupActorHandle::base {
public:
  CollectiveGroupActor(caf::actor_config& cfg, GroupSetup setup);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.collective_group"; }

private:
  struct Pending {
    std::vector<std::optional<ContributionMsg>> contributions;
    std::vector<ReplicaActorHandle> senders;
    size_t arrived = 0;
    caf::actor_clock::time_point deadline;
    caf::actor_clock::time_point stall_at;
    bool warned = false;
    // all_reduce split over replicas: parts still running.
    std::shared_ptr<LocalAllReduce> plan;
    size_t parts_left = 0;
    bool cross = false; ///< local part done, waiting for the other workers
    /// For the timeline: when each replica contributed, and the algorithm across workers.
    std::vector<caf::actor_clock::time_point> contributed_at;
    const char* algorithm = nullptr;
    /// Across workers through NCCL: the replicas' inputs, until the workers agreed.
    std::vector<std::vector<Tensor>> gpu_inputs;
    /// An in-place all_reduce: each replica's tensors, whose memory gets the
    /// result (the first replica's is where it is reduced).
    std::vector<std::vector<Tensor>> in_place_targets;
  };

  /// The timeline's span of `key` on every replica's track, ended now.
  void trace_collective(const CollectiveKey& key, const Pending& pending, const char* outcome);
  void on_contribution(ContributionMsg& msg);
  void on_finished(ReplicaFinishedMsg& msg);
  void on_part_done(const PartDoneMsg& msg);
  void on_tick();

  void complete(const CollectiveKey& key, Pending& pending);
  /// The local result is ready: deliver it, or start its cross-worker half.
  void finish_local(const CollectiveKey& key, Pending& pending, std::vector<Tensor> tensors);
  void on_run_finished_everywhere(uint64_t run);
  void reduce(const CollectiveKey& key, Pending& pending);
  /// The replicas' GPU tensors: hands each replica its share of the plan.
  void run_on_fibers(const CollectiveKey& key, Pending& pending, std::shared_ptr<FiberCollective> plan);
  /// all_gather or broadcast of GPU tensors (through NCCL).
  void gpu_collective(const CollectiveKey& key, Pending& pending);
  GpuCollectives& gpu_collectives();
  /// Every worker announced `key` alike: the replicas run it through NCCL.
  void on_agreed(const CollectiveKey& key, const std::vector<std::string>& details,
                 const std::vector<CollectiveFingerprint>& fingerprints);
  void deliver(const CollectiveKey& key, Pending& pending, std::vector<Tensor> tensors,
               MergeValue merge_result);
  void fail(const CollectiveKey& key, Pending& pending, Errc code, const std::string& why,
            std::exception_ptr exception = nullptr);
  /// Fails `key` if some replica already returned from its function without issuing it.
  bool fail_if_skipped(const CollectiveKey& key, Pending& pending);
  void arm_timer();

  /// Logs the flight recorder's block (and appends it to
  /// TROUPE_FLIGHT_RECORDER_DIR's file): something went wrong, `why`.
  void dump_flight_record(const std::string& why);
  /// What open collective `key` waits for, in the flight recorder's words.
  [[nodiscard]] std::string waiting_for(const CollectiveKey& key) const;
  /// The actor clock in nanoseconds (virtual time in simulation).
  [[nodiscard]] int64_t now_ns();

  [[nodiscard]] std::string who_sent_what(const Pending& pending) const;
  /// "replica 2", "replicas 0, 3".
  [[nodiscard]] static std::string replica_list(const std::vector<int>& ids);

  GroupSetup setup_;
  std::map<CollectiveKey, Pending> pending_;
  /// How far each replica got, and the collectives that already failed here.
  ProgressTracker progress_;
  bool timer_armed_ = false;
  std::unique_ptr<CrossWorkerCollectives> cross_;
  std::unique_ptr<GpuCollectives> gpu_;  ///< made at the first collective of GPU tensors
  /// Across workers: the latest collectives handed to NCCL, and their communicator.
  std::map<CollectiveKey, std::string> agreed_on_;
  FlightRecorder recorder_;
};

} // namespace troupe::internal
