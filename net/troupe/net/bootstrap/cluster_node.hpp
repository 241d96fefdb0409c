#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/actor.hpp>
#include <caf/timespan.hpp>

#include <troupe/net/bootstrap/cluster_directory.hpp>
#include <troupe/net/bootstrap/cluster_members.hpp>
#include <troupe/net/bootstrap/collective_membership.hpp>
#include <troupe/net/bootstrap/node_actor_handle.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>
#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/link/data_plane_messages.hpp>
#include <troupe/net/link/link_messages.hpp>

namespace caf {
class actor_system;
} // namespace caf

namespace troupe::internal {

class ControlPlaneGate;

/// This process as one task of a cluster: its node actor (control plane,
/// published on the task's address behind a ControlPlaneGate), its
/// data-plane broker, and the handshake with every other member of the
/// cluster.
///
/// The members are the chief, the workers and the parameter servers, in the
/// stable order of ClusterMembers (chief, workers by index, ps by index).
/// Only the chief and the workers take part in collectives: they alone have a
/// rank, a data plane and a place in task_names(), exactly as in a cluster
/// without parameter servers, so that MultiWorkerMirroredStrategy never waits
/// for a ps task. Evaluator tasks (and tasks of other jobs) are no members:
/// they join nothing, and nobody waits for them.
///
/// The constructor blocks the calling (user-facing) thread until every member
/// has joined: it opens its gate (only a dialer that proves the cluster token
/// reaches the node), reaches every member of lower index with dial_node
/// (retrying until TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS; a peer that refuses
/// this process's token or spec fails it at once, naming the difference),
/// exchanges hellos (the refusing task names what differs), waits for the members of higher index
/// to do the same, then (chief and workers) connects the data plane. In a
/// cluster with parameter servers, a worker process restarted after the
/// cluster formed is taken back in place of its lost one: the first member it
/// reaches says so (HelloMsg::rejoined), and it then reaches every member
/// itself and has no data plane (link() is null; no collectives run there). Errors
/// name the tasks that never came and what to check. The destructor says bye
/// to the other tasks (so that they see a normal exit, not a lost peer) and
/// waits, bounded, for the last bytes to leave.
class ClusterNode final : public ClusterDirectory {
public:
  ClusterNode(caf::actor_system& system, std::shared_ptr<const ClusterResolver> resolver);
  ~ClusterNode() override;
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // -- collectives (chief and workers) -------------------------------------------

  /// Whether this task takes part in collectives (chief or worker).
  [[nodiscard]] bool participates() const noexcept { return rank_ >= 0; }
  /// This task's rank among the chief and workers (-1 for ps and evaluator tasks).
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// The chief and workers, in rank order: "chief:0", "worker:0", ...
  [[nodiscard]] const std::vector<std::string>& task_names() const noexcept { return task_names_; }
  /// The data-plane link the collective groups of multi-worker strategies use
  /// (a null handle on a ps task).
  [[nodiscard]] DataPlaneHandle link() const noexcept { return data_plane_; }
  /// Over UCX: the transport collective groups send their frames through
  /// directly (one thread hand-off less than link()); null over TCP.
  [[nodiscard]] std::shared_ptr<FrameSender> frame_sender() const noexcept { return frame_sender_; }
  [[nodiscard]] const std::shared_ptr<const ClusterResolver>& resolver() const noexcept { return resolver_; }
  /// The above as one value, what a multi-worker strategy keeps.
  [[nodiscard]] CollectiveMembership membership() const {
    return {rank_, task_names_, data_plane_, frame_sender_, resolver_};
  }

  // -- membership (chief, workers, parameter servers) ----------------------------

  /// This task's job ("chief", "worker", "ps", "evaluator") and index in it.
  [[nodiscard]] const std::string& task_type() const noexcept override { return task_type_; }
  [[nodiscard]] int task_index() const noexcept override { return task_index_; }
  /// Whether this task joined the cluster (chief, worker or ps; not an evaluator).
  [[nodiscard]] bool is_member() const noexcept { return member_index_ >= 0; }
  /// Every member, in order: "chief:0", "worker:0", ..., "ps:0", ...
  [[nodiscard]] const std::vector<std::string>& members() const noexcept override { return members_.names(); }
  /// The members of `job` ("ps" -> {"ps:0", "ps:1"}); empty when it has none.
  [[nodiscard]] std::vector<std::string> tasks_of(std::string_view job) const override {
    return members_.tasks_of(job);
  }

  /// The node actor of member `task` ("ps:1"; this task's own for itself):
  /// the actor other tasks' actors are reached through (lookup()).
  /// Error(invalid_argument) naming the members when `task` is none, or when
  /// this task is no member.
  [[nodiscard]] NodeActorHandle node_of(std::string_view task) const;

  /// Makes `actor` reachable by every member under `name` (at most
  /// NodeLookupMsg::max_name_bytes bytes): lookup(this task, name) finds it.
  /// A null actor withdraws the name. Error(failed_precondition) when this
  /// task is no member.
  void publish(const std::string& name, const caf::actor& actor) override;

  /// The actor that member `task` published under `name`, waiting up to
  /// `timeout` for it to be published; Error(timeout) naming the task and the
  /// name when it is not, Error(peer_lost) when the task is gone.
  [[nodiscard]] caf::actor lookup(std::string_view task, const std::string& name,
                                  caf::timespan timeout) const override;

  /// `listener` receives a TaskLostMsg for every member that is lost or leaves
  /// from now on, and at once for those already decided; each member once.
  /// These are the failure detector's verdicts (TROUPE_PEER_TIMEOUT_SECONDS).
  /// A worker of a parameter-server cluster that rejoins after its verdict
  /// (a restarted process) comes as a TaskJoinedMsg, carrying its new node
  /// actor; its next loss comes as a TaskLostMsg again. node_of() and
  /// lookup() keep the node each member joined with first.
  /// Does nothing on a task that is no member.
  void watch_losses(const caf::actor& listener) override;

  /// Tells every other member that this task leaves, and with which job
  /// error (empty: its job ended well): their verdict on it says it left, and
  /// carries the error (TaskLostMsg::job_error). Said once: the first call
  /// counts, and the chief's destructor says it (without error) when nobody did.
  /// Blocks until each one acknowledged, at most about a second (a member
  /// that does not answer is not waited for).
  void say_farewell(const std::string& job_error) override;

private:
  void join();
  void stop_actors();

  caf::actor_system& system_;
  std::shared_ptr<const ClusterResolver> resolver_;
  std::string task_type_;
  int task_index_ = -1;
  ClusterMembers members_;
  int member_index_ = -1;
  int rank_ = -1;
  std::vector<std::string> task_names_;
  std::map<int, NodeActorHandle> nodes_; ///< every member's node actor, by member index
  NodeActorHandle node_;
  std::unique_ptr<ControlPlaneGate> gate_; ///< the task's control port
  DataPlaneBrokerHandle data_plane_;
  std::shared_ptr<FrameSender> frame_sender_;
  bool farewell_said_ = false;
};

} // namespace troupe::internal
