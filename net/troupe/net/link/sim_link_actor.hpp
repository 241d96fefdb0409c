#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>

#include <troupe/net/link/link_dispatch.hpp>
#include <troupe/net/link/link_messages.hpp>
#include <troupe/net/link/sim_network.hpp>
#include <caf/meta/type_name.hpp>
#include <troupe/core/local_only.hpp>

namespace troupe::internal {

struct SimPeersMsg;
struct SimWireMsg;
struct SimCutMsg;
struct SimLeaveMsg;

/// A simulated link: the data plane's interface, plus its peers, the wire
/// between links and the test's cut.
using SimLinkActorHandle =
  DataPlaneHandle::extend<caf::reacts_to<SimPeersMsg>, caf::reacts_to<SimWireMsg>, caf::reacts_to<SimCutMsg>,
                          caf::reacts_to<SimLeaveMsg>>;

/// Test/simulation: the peers of a simulated cluster (one link actor per rank).
struct SimPeersMsg {
  std::vector<SimLinkActorHandle> links;
};

/// Between simulated links: a frame on the simulated wire.
struct SimWireMsg {
  int from = 0;
  FrameHeader header;
  FrameBytes bytes;
};

/// Test/simulation: cut this link from rank `rank` (as if that process died).
struct SimCutMsg {
  int rank = 0;
  std::string why;
};

/// Simulation: this link's task ended its program, as a process that exits:
/// a bye frame goes to every peer after its other frames, and each counts the
/// task as left (not lost).
struct SimLeaveMsg {};

/// The data-plane link of one worker of a simulated cluster: several workers
/// in one process (and one actor system, so the simulation scheduler orders
/// every frame by seed) that exchange frames as messages between their links
/// instead of over sockets. Frames are copied on send, as a socket would, and
/// frames between two links stay in order (one CAF mailbox per link). A cut
/// drops frames to and from that rank and reports it lost to every group.
///
/// With a SimNetwork, every frame goes through its seeded faults (delays in
/// virtual time, drops, duplicates, reordering, partitions, kills), and the
/// link gives the network's loss verdicts at their virtual times.
class SimLinkActor final : public SimLinkActorHandle::base {
public:
  SimLinkActor(caf::actor_config& cfg, int rank, std::shared_ptr<SimNetwork> network = nullptr);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.sim_link"; }

private:
  void send_frame(int to, SimWireMsg msg);

  int rank_;
  std::shared_ptr<SimNetwork> network_;
  /// Per peer: the latest virtual time a delayed frame to it arrives; a frame
  /// sent before then is delayed too, so that it cannot pass that one.
  std::map<int, caf::actor_clock::time_point> pending_until_;
  std::vector<SimLinkActorHandle> peers_;
  LinkDispatch dispatch_;
};

// A simulated wire shares its frame's bytes: local-only.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimPeersMsg& x) {
  return f(caf::meta::type_name("troupe::SimPeersMsg"), x.links);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimWireMsg& x) {
  return inspect_local_only(f, "troupe::SimWireMsg", x.from);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimLeaveMsg&) {
  return f(caf::meta::type_name("troupe::SimLeaveMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimCutMsg& x) {
  return f(caf::meta::type_name("troupe::SimCutMsg"), x.rank, x.why);
}

} // namespace troupe::internal
