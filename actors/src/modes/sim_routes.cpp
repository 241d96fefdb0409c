// SimRoutes: the stand-in actors by which a SimulatedCluster's tasks reach
// each other's actors through the simulated network.

#include <troupe/actors/modes/sim_routes.hpp>

#include <algorithm>

#include <caf/all.hpp>
#include <caf/make_actor.hpp>
#include <caf/monitorable_actor.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>

namespace troupe::internal {

namespace {

/// A route to itself: its target's down message may go out now.
struct SimRouteDownMsg {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimRouteDownMsg&) {
  return f(caf::meta::type_name("troupe::SimRouteDownMsg"));
}

/// One route: task `from` -> the actor `target` of task `to`.
class SimRemoteActor final : public caf::monitorable_actor {
public:
  SimRemoteActor(caf::actor_config& cfg, caf::strong_actor_ptr target, int from, int to,
                 std::weak_ptr<SimRoutes> routes, std::shared_ptr<SimNetwork> network)
    : caf::monitorable_actor(cfg), target_(std::move(target)), from_(from), to_(to), routes_(std::move(routes)),
      network_(std::move(network)) {
  }

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit*) override {
    if (what->content().match_elements<SimRouteDownMsg>()) {
      cleanup(caf::error{down_reason_}, nullptr);
      return;
    }
    auto routes = routes_.lock();
    auto& clock = home_system().clock();
    const auto now = clock.now();
    const auto delay =
      dead_ || !routes ? std::nullopt : network_->message_delay(from_, to_, network_->since_start(now));
    // Lost with its process or link: gone, as through a CAF proxy whose node
    // is unreachable (a request times out; the loss verdict or the down
    // message tells the sender).
    if (!delay)
      return;
    auto sender = std::move(what->sender);
    const auto mid = what->mid;
    auto stages = std::move(what->stages);
    auto content = what->move_content_to_message();
    // The answer goes back over the network too (a response needs no route:
    // it is on one).
    if (sender && !mid.is_response())
      sender = routes->route(to_, from_, sender);
    // The one wire message that carries an actor to another task: as CAF
    // makes a proxy of it there, the worker answers the coordinator through
    // the route back.
    if (content.match_elements<RunClosureMsg>()) {
      auto& run = content.get_mutable_as<RunClosureMsg>(0);
      run.coordinator = routes->route(to_, from_, run.coordinator);
    }
    clock.schedule_message(now + *delay, target_,
                           caf::make_mailbox_element(std::move(sender), mid, std::move(stages), std::move(content)));
  }

  /// The target terminated: so does its route, with the same reason, once
  /// what the target's task sent this way before has arrived (one ordered
  /// connection carries both, so the down message cannot pass them).
  void target_down(const caf::error& reason) {
    dead_ = true;
    down_reason_ = reason;
    auto& clock = home_system().clock();
    const auto now = clock.now();
    const auto at = std::max(now, network_->start() + network_->last_message_at(to_, from_));
    clock.schedule_message(at, caf::strong_actor_ptr{ctrl()},
                           caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, SimRouteDownMsg{}));
  }

private:
  caf::strong_actor_ptr target_;
  int from_;
  int to_;
  std::weak_ptr<SimRoutes> routes_;
  std::shared_ptr<SimNetwork> network_;
  bool dead_ = false;
  caf::error down_reason_;
};

} // namespace

SimRoutes::SimRoutes(caf::actor_system& system, std::shared_ptr<SimNetwork> network)
  : system_(system), network_(std::move(network)) {
}

caf::strong_actor_ptr SimRoutes::route(int from, int to, const caf::strong_actor_ptr& target) {
  if (!target || from == to)
    return target;
  const auto key = std::make_tuple(from, to, target->id());
  if (auto r = routes_.find(key); r != routes_.end())
    return r->second;
  caf::actor_config cfg;
  auto route = caf::make_actor<SimRemoteActor, caf::strong_actor_ptr>(
    system_.next_actor_id(), system_.node(), &system_, cfg, target, from, to, weak_from_this(), network_);
  caf::weak_actor_ptr weak{route.get()};
  // Attached after it is made: a target that already terminated calls this at once.
  target->get()->attach_functor([weak](const caf::error& reason) {
    if (auto r = caf::actor_cast<caf::strong_actor_ptr>(weak))
      static_cast<SimRemoteActor*>(r->get())->target_down(reason);
  });
  routes_.emplace(key, route);
  return route;
}

caf::actor SimRoutes::route(int from, int to, const caf::actor& target) {
  if (!target)
    return target;
  return caf::actor_cast<caf::actor>(route(from, to, caf::actor_cast<caf::strong_actor_ptr>(target)));
}

} // namespace troupe::internal
