#pragma once

// The node actor's typed interface, apart from its messages: the hello
// (net/bootstrap/cluster_types.hpp) carries the sender's node actor, so the
// handle is declared before the messages it names are complete.

#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/net/link/link_messages.hpp>

namespace troupe::internal {

// From other tasks' node actors (net/bootstrap/cluster_types.hpp).
struct HelloMsg;
struct NodeLookupMsg;
struct NodeFarewellMsg;

// From its own edge (ClusterNode) and its timers (net/bootstrap/node_actor.hpp).
struct NodePeerMsg;
struct NodeAwaitMsg;
struct NodeDeadlineMsg;
struct NodeProgressMsg;
struct NodeDoomedMsg;
struct NodeWatchMsg;
struct NodeRejoinedMsg;
struct NodePublishMsg;
struct NodeSayFarewellMsg;

// From its ControlPlaneGate (net/bootstrap/node_actor.hpp).
struct NodeGateRefusalMsg;

/// A task's node actor (NodeActor): hellos, lookups and farewells of the
/// other tasks, its edge's calls and timers, and the data plane's verdicts
/// (it registers as a link receiver). Other tasks' node actors arrive as
/// plain actors (dial_node) and are cast to it.
using NodeActorHandle = caf::typed_actor<
  caf::replies_to<HelloMsg>::with<HelloMsg>, caf::replies_to<NodeLookupMsg>::with<caf::actor>,
  caf::replies_to<NodeFarewellMsg>::with<bool>, caf::reacts_to<NodePeerMsg>,
  caf::replies_to<NodeAwaitMsg>::with<std::vector<HelloMsg>>, caf::reacts_to<NodeDeadlineMsg>,
  caf::reacts_to<NodeProgressMsg>, caf::replies_to<NodeDoomedMsg>::with<std::string>, caf::reacts_to<NodeWatchMsg>,
  caf::reacts_to<NodeRejoinedMsg>, caf::reacts_to<NodePublishMsg>, caf::replies_to<NodeSayFarewellMsg>::with<bool>,
  caf::reacts_to<NodeGateRefusalMsg>, caf::reacts_to<LinkFrameMsg>, caf::reacts_to<PeerLostMsg>>;

} // namespace troupe::internal
