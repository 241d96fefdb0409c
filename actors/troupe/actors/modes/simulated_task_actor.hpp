#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include <caf/meta/type_name.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/fibers/fiber_host.hpp>
#include <troupe/actors/fibers/fiber_waiter.hpp>

namespace troupe::internal {

class FunctionRegistry;

/// Starts a simulated task's function.
struct SimTaskStartMsg {};
/// A kill fault: the task runs no further step of its function.
struct SimTaskKillMsg {};

/// How a simulated task ended: `finished` is set once its function returned
/// (or threw) or it was killed; `killed` says which.
struct SimTaskOutcome {
  Completion finished;
  bool killed = false;
};

using SimulatedTaskActorHandle =
  caf::typed_actor<caf::reacts_to<SimTaskStartMsg>, caf::reacts_to<SimTaskKillMsg>, caf::reacts_to<FiberWakeMsg>>;

/// One task of a SimulatedCluster: runs the user's function (the task's
/// main program) on a fiber, so that its blocking troupe calls suspend it
/// and the simulation's one thread steps every task's actors meanwhile.
/// The outcome is finished when the function returned (or threw: `body`
/// catches and records that itself) or when a kill came first; a killed
/// task's fiber is never resumed again. On exit a suspended fiber is
/// unwound, destroying the function's locals.
class SimulatedTaskActor final : public SimulatedTaskActorHandle::base, public FiberHost {
public:
  /// `on_return` runs once the function returned (not when it was killed):
  /// the task's process would exit then.
  /// `functions`: the task's program's registry, current while it runs.
  SimulatedTaskActor(caf::actor_config& cfg, std::function<void()> body, std::shared_ptr<SimTaskOutcome> outcome,
                     std::function<void()> on_return, FunctionRegistry* functions, std::size_t stack_bytes);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.simulated_task"; }

private:
  void resume();

  std::shared_ptr<SimTaskOutcome> outcome_;
  std::function<void()> on_return_;
  FunctionRegistry* functions_;
  void* frame_ = nullptr; ///< the function's strategy scope while it is suspended
  bool returned_ = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimTaskStartMsg&) {
  return f(caf::meta::type_name("troupe::SimTaskStartMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimTaskKillMsg&) {
  return f(caf::meta::type_name("troupe::SimTaskKillMsg"));
}

} // namespace troupe::internal
