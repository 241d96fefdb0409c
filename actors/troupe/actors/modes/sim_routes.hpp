#pragma once

#include <map>
#include <memory>
#include <tuple>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <troupe/net/link/sim_network.hpp>

namespace troupe::internal {

/// The messages between a SimulatedCluster's tasks, through its network.
///
/// Across processes, a task reaches another's actor through a CAF proxy
/// over a socket: its messages arrive late, in order, not at all once
/// either process died, and the answers come back the same way. Here every
/// task's actors share one actor system, so a task reaches another's actor
/// through a route: a stand-in actor that takes any message and delivers it
/// to the target after the network's delay for that pair of tasks
/// (SimNetwork::message_delay, in virtual time), with its sender replaced by
/// the route back, so that the answer crosses the network too. A route dies
/// with its target (its monitors get the target's down message), and a
/// request it cannot deliver is answered with an error, as CAF answers one
/// to an unreachable node.
class SimRoutes : public std::enable_shared_from_this<SimRoutes> {
public:
  SimRoutes(caf::actor_system& system, std::shared_ptr<SimNetwork> network);

  /// The handle by which task `from` reaches `target`, an actor of task `to`
  /// (itself when both are one task, or when `target` is null).
  [[nodiscard]] caf::actor route(int from, int to, const caf::actor& target);
  [[nodiscard]] caf::strong_actor_ptr route(int from, int to, const caf::strong_actor_ptr& target);

  /// Drops every route (at the end of a run).
  void clear() noexcept { routes_.clear(); }

private:
  caf::actor_system& system_;
  std::shared_ptr<SimNetwork> network_;
  /// (from, to, target id) -> its route, made once.
  std::map<std::tuple<int, int, caf::actor_id>, caf::strong_actor_ptr> routes_;
};

} // namespace troupe::internal
