#pragma once

#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>

#include <troupe/net/link/link_dispatch.hpp>
#include <troupe/net/link/link_messages.hpp>
#include <caf/meta/type_name.hpp>
#include <troupe/core/local_only.hpp>

namespace troupe::internal {

struct SimPeersMsg;
struct SimWireMsg;
struct SimCutMsg;

/// A simulated link: the data plane's interface, plus its peers, the wire
/// between links and the test's cut.
using SimLinkActorHandle =
  DataPlaneHandle::extend<caf::reacts_to<SimPeersMsg>, caf::reacts_to<SimWireMsg>, caf::reacts_to<SimCutMsg>>;

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

/// The data-plane link of one worker of a simulated cluster: several workers
/// in one process (and one actor system, so the simulation scheduler orders
/// every frame by seed) that exchange frames as messages between their links
/// instead of over sockets. Frames are copied on send, as a socket would, and
/// frames between two links stay in order (one CAF mailbox per link). A cut
/// drops frames to and from that rank and reports it lost to every group.
class SimLinkActor final : public SimLinkActorHandle::base {
public:
  SimLinkActor(caf::actor_config& cfg, int rank);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.sim_link"; }

private:
  int rank_;
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
typename Inspector::result_type inspect(Inspector& f, SimCutMsg& x) {
  return f(caf::meta::type_name("troupe::SimCutMsg"), x.rank, x.why);
}

} // namespace troupe::internal
