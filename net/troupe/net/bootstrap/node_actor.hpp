#pragma once

#include <map>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/timespan.hpp>
#include <caf/response_promise.hpp>

#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/handshake.hpp>

namespace troupe::internal {

/// Edge -> node: the handshake with peer `hello.rank` (reached by the edge
/// through remote_actor) succeeded; `peer` is its node actor.
struct NodePeerMsg {
  caf::actor peer;
  HelloMsg hello;
};

/// Edge -> node (request): answered with every peer's hello once all are
/// known, or after `wait` with an error naming the tasks that never came.
struct NodeAwaitMsg {
  caf::timespan wait;
};

/// Node -> itself: the NodeAwaitMsg deadline passed.
struct NodeDeadlineMsg {};

/// What a NodeActor is spawned with.
struct NodeSetup {
  HelloMsg me;
  std::vector<std::string> task_names; ///< per rank
  caf::actor data_plane;               ///< told when a peer is lost
};

/// The control-plane actor of one cluster process, published on the task's
/// address (CAF middleman). Tasks of higher rank reach it with remote_actor
/// and send a HelloMsg; its Handshake (net/handshake.hpp) accepts a hello only
/// when the cluster spec fingerprint and cluster token hash equal its own
/// (else it answers with an error naming the difference, and logs the
/// refused process), then monitors
/// the peer's node actor. With CAF's heartbeat and connection timeout set
/// (RuntimeImpl), a dead or frozen peer's proxy goes down; the node then
/// reports the peer lost to the data plane, which fails its collectives.
class NodeActor final : public caf::event_based_actor {
public:
  NodeActor(caf::actor_config& cfg, NodeSetup setup);

  caf::behavior make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.node"; }

private:
  caf::result<HelloMsg> on_hello(const HelloMsg& hello);
  void add_peer(const caf::actor& peer, const HelloMsg& hello);
  void check_complete();

  NodeSetup setup_;
  Handshake handshake_;
  std::map<int, HelloMsg> peers_;
  std::map<caf::actor_addr, int> rank_of_;
  std::vector<caf::response_promise> waiting_;
  /// Processes refused at the handshake, for the error that names missing tasks.
  std::vector<std::string> refused_;
};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NodePeerMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NodeAwaitMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NodeDeadlineMsg)
