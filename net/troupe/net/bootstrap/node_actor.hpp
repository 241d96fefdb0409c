#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/timespan.hpp>
#include <caf/response_promise.hpp>

#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/node_actor_handle.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>
#include <troupe/net/handshake.hpp>
#include <troupe/net/link/data_plane_messages.hpp>
#include <caf/meta/type_name.hpp>

namespace troupe::internal {

/// Edge -> node: the handshake with peer `hello.rank` (reached by the edge
/// through dial_node) succeeded; `peer` is its node actor.
struct NodePeerMsg {
  NodeActorHandle peer;
  HelloMsg hello;
};

/// Edge -> node (request): answered with every peer's hello once all are
/// known, or after `wait` with an error naming the tasks that never came.
struct NodeAwaitMsg {
  caf::timespan wait;
};

/// Node -> itself: the NodeAwaitMsg deadline passed.
struct NodeDeadlineMsg {};

/// Node -> itself: time to say which tasks it still waits for.
struct NodeProgressMsg {};

/// Edge -> node (request): answered with why the cluster cannot form (a
/// process started as an awaited task was refused), or an empty string.
struct NodeDoomedMsg {};

/// Edge -> node: tell `listener` the verdict on every member that is lost or
/// leaves (TaskLostMsg), those decided before included. Any actor may listen
/// (a plain actor): the node reaches it with anon_send, so it reads no sender.
struct NodeWatchMsg {
  caf::actor listener;
};

/// Edge -> node: this process rejoined a formed cluster (a reply said
/// HelloMsg::rejoined). It has no data plane, so the control connections
/// decide every member's loss, and the cluster counts as formed.
struct NodeRejoinedMsg {};

/// Gate -> node: ControlPlaneGate refused a dialer that claimed member
/// `claimed_rank` (not proven) for another cluster token, spec or TROUPE_TLS, or for a
/// mix-up of ports or builds (neither flag). A process of another cluster
/// claiming an awaited task dooms the forming cluster, as its hello would.
struct NodeGateRefusalMsg {
  std::string address;   ///< where it dialled from
  int32_t claimed_rank = -1;
  int32_t pid = 0;       ///< as it stated
  bool other_token = false;
  bool other_spec = false;
  bool other_tls = false;
  uint64_t spec_fingerprint = 0; ///< as it stated
  std::string why;
};

/// Edge -> node: answer NodeLookupMsg{name} with `actor` (a null actor
/// withdraws the name).
struct NodePublishMsg {
  std::string name;
  caf::actor actor;
};

/// Edge -> node (request, answered with true once every peer acknowledged,
/// or after `wait`): send every member NodeFarewellMsg{job_error}.
struct NodeSayFarewellMsg {
  std::string job_error;
  caf::timespan wait;
};

/// The group id under which the node actor registers with the data plane
/// (LinkRegisterMsg) to hear its verdicts on chief and worker tasks; no
/// collective group uses it (theirs count up from 0 and from 2^32).
inline constexpr uint64_t loss_watch_group_id = ~uint64_t{0};

/// What a NodeActor is spawned with.
struct NodeSetup {
  HelloMsg me;
  std::vector<std::string> task_names; ///< per member index (ClusterMembers)
  std::vector<std::string> addresses;  ///< per member index, as TF_CONFIG lists them
  int participants = 0;                ///< members 0..participants-1 have a data plane
  DataPlaneBrokerHandle data_plane;    ///< told when a peer is lost; null on a parameter server
  std::chrono::steady_clock::time_point join_started;
  double init_timeout_seconds = 120;   ///< TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS
  /// The job whose tasks may rejoin once the cluster formed ("worker" in a
  /// cluster with parameter servers); empty: none (Handshake::admit_restarted).
  std::string restartable_job;
};

/// How often a task waiting for its peers says which ones it still waits
/// for: every 10 s, or 4 times within a shorter init timeout.
[[nodiscard]] std::chrono::steady_clock::duration join_progress_interval(double init_timeout_seconds);

/// "worker:0 waiting ... (10 s of 120 s)": the part in parentheses.
[[nodiscard]] std::string join_progress(std::chrono::steady_clock::time_point join_started,
                                        double init_timeout_seconds);

/// The control-plane actor of one cluster process, published on the task's
/// address behind its ControlPlaneGate (only dialers that proved the cluster
/// token reach it). Tasks of higher rank reach it with dial_node and send a
/// HelloMsg; its Handshake (net/handshake.hpp) accepts a hello only when the
/// cluster spec fingerprint equals its own and the rank is free (else it
/// answers with an error naming the difference, and logs the refused
/// process); the gate tells it of dialers refused for their token or spec
/// (NodeGateRefusalMsg), which it treats alike. It then monitors
/// the peer's node actor. With CAF's heartbeat and connection timeout set
/// (RuntimeImpl), a dead or frozen peer's proxy goes down; the node then
/// reports the peer lost to the data plane, which fails its collectives.
///
/// Every member (chief, workers, parameter servers: ClusterMembers) reaches
/// every member of lower index, so the control connections form a full mesh.
/// Who decides that a member is lost (TaskLostMsg to the watchers):
/// - a chief or worker seen from a chief or worker: the data plane, as for
///   collectives (the node's news is only a hint; see DataPlaneBroker);
/// - a parameter server, or any member seen from a parameter server (which
///   has no data plane): the control connection; it left when its node
///   actor exited normally (user_shutdown), else it is lost.
///
/// While the edge waits (NodeAwaitMsg) the node logs, every
/// join_progress_interval, the tasks it still waits for. A process that
/// presents itself as an awaited task but carries another cluster token or
/// spec fails the wait at once (Handshake::dooms_the_cluster): it was started
/// as that task with other settings, so the right one is not coming. A second
/// process as a task that already joined (a duplicate, or a restart after the
/// first died) is refused and named; the cluster goes on with the first.
/// The exception: in a formed cluster with parameter servers, a worker whose
/// process left or was lost is taken back. The node then settles the old
/// process's verdict (TaskLostMsg) if the data plane has not yet, tells the
/// watchers TaskJoinedMsg, and decides the new process's loss by the control
/// connection (it has no data plane; the data plane's later verdicts on that
/// rank concern the old process and are dropped).
class NodeActor final : public NodeActorHandle::base {
public:
  NodeActor(caf::actor_config& cfg, NodeSetup setup);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.node"; }

  /// The code of a hello's refusal when the process has another cluster token
  /// or spec (other refusals are invalid_argument): the refused process then
  /// presents itself to the other members, who fail at once naming the cause.
  static constexpr Errc other_cluster_refusal = Errc::failed_precondition;

private:
  caf::result<HelloMsg> on_hello(const HelloMsg& hello);
  void on_gate_refusal(const NodeGateRefusalMsg& msg);
  /// Refuses `claim` when the handshake says so (logged, kept for the
  /// timeout's error, and dooming the forming cluster when it claims an
  /// awaited task from another cluster): why, or "" when it may join.
  /// `who` names the process; `from` its address, when known.
  std::string refuse(const PeerClaim& claim, const std::string& who, const std::string& from);
  void take_back(const HelloMsg& hello);
  /// Whether the control connection (not the data plane) decides `rank`'s loss.
  [[nodiscard]] bool control_decides(int rank) const;
  void add_peer(const NodeActorHandle& peer, const HelloMsg& hello);
  void check_complete();
  void fail_waiting(Errc code, const std::string& why);
  [[nodiscard]] std::string missing_tasks() const;
  [[nodiscard]] std::optional<RankHolder> holder_of(int rank) const;
  void decide(int rank, std::string why, bool left);
  caf::result<bool> on_say_farewell(const NodeSayFarewellMsg& msg);
  caf::result<caf::actor> on_lookup(const NodeLookupMsg& msg);

  NodeSetup setup_;
  Handshake handshake_;
  std::map<int, HelloMsg> peers_;
  std::set<int> gone_; ///< ranks whose control connection went down
  std::string doomed_; ///< why the cluster cannot form; empty while it can
  bool progress_scheduled_ = false;
  bool formed_ = false;     ///< every member joined (a restarted worker is taken back only then)
  std::set<int> rejoined_;  ///< ranks whose process was restarted and taken back: no data plane
  std::map<caf::actor_addr, int> rank_of_;
  std::vector<caf::response_promise> waiting_;
  /// Processes refused while the cluster formed (the first
  /// max_refusals_kept), for the error that names missing tasks.
  std::vector<std::string> refused_;
  static constexpr std::size_t max_refusals_kept = 16;
  std::vector<caf::actor> watchers_;
  std::map<int, TaskLostMsg> verdicts_; ///< by member index, for watchers that come later
  std::map<int, std::string> farewells_; ///< job errors members said before leaving
  /// Per member, the acknowledgments of this task's farewell still awaited:
  /// a member whose control connection goes down counts as acknowledged (it
  /// is leaving too, and CAF would fail the request only at its deadline).
  std::multimap<int, std::function<void()>> farewell_acks_;
  std::map<std::string, caf::actor> published_;
  /// Lookups of names not published yet, answered when they are.
  std::multimap<std::string, caf::response_promise> lookups_;
};

// The edge's calls to its own node and the node's timers: in-process only
// (no type ID; the peers get the registered NodeFarewellMsg, HelloMsg and
// NodeLookupMsg), but nothing in them ties them to it; they print.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodePeerMsg& x) {
  return f(caf::meta::type_name("troupe::NodePeerMsg"), x.peer, x.hello);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeAwaitMsg& x) {
  return f(caf::meta::type_name("troupe::NodeAwaitMsg"), x.wait);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeDeadlineMsg&) {
  return f(caf::meta::type_name("troupe::NodeDeadlineMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeProgressMsg&) {
  return f(caf::meta::type_name("troupe::NodeProgressMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeDoomedMsg&) {
  return f(caf::meta::type_name("troupe::NodeDoomedMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeWatchMsg& x) {
  return f(caf::meta::type_name("troupe::NodeWatchMsg"), x.listener);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodePublishMsg& x) {
  return f(caf::meta::type_name("troupe::NodePublishMsg"), x.name, x.actor);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeRejoinedMsg&) {
  return f(caf::meta::type_name("troupe::NodeRejoinedMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeGateRefusalMsg& x) {
  return f(caf::meta::type_name("troupe::NodeGateRefusalMsg"), x.address, x.claimed_rank, x.pid, x.other_token,
           x.other_spec, x.other_tls, x.spec_fingerprint, x.why);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeSayFarewellMsg& x) {
  return f(caf::meta::type_name("troupe::NodeSayFarewellMsg"), x.job_error, x.wait);
}

} // namespace troupe::internal
