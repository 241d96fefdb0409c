#include <troupe/actors/modes/simulated_task_actor.hpp>

#include <caf/all.hpp>

#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/replicas/replica_handle.hpp>

namespace troupe::internal {

SimulatedTaskActor::SimulatedTaskActor(caf::actor_config& cfg, std::function<void()> body,
                                       std::shared_ptr<SimTaskOutcome> outcome, std::function<void()> on_return,
                                       FunctionRegistry* functions, std::size_t stack_bytes)
  : SimulatedTaskActorHandle::base(cfg), FiberHost(stack_bytes, [this, body = std::move(body)] {
      body();
      returned_ = true;
    }),
    outcome_(std::move(outcome)), on_return_(std::move(on_return)), functions_(functions) {
}

SimulatedTaskActor::behavior_type SimulatedTaskActor::make_behavior() {
  return {
    [this](SimTaskStartMsg) {
      if (outcome_->killed)
        return;
      ensure_fiber();
      resume();
    },
    [this](SimTaskKillMsg) {
      if (outcome_->finished.done())
        return; // it returned before its kill
      outcome_->killed = true;
      outcome_->finished.set();
    },
    [this](FiberWakeMsg) {
      if (unpark() && !outcome_->killed)
        resume();
    },
  };
}

void SimulatedTaskActor::resume() {
  // The task's strategy scope (the current frame) is its own: every task
  // runs on this one thread, so it is swapped in and out around each resume.
  const bool yielded = resume_fiber(caf::actor_cast<caf::actor>(this), [this](auto switch_in) {
    void* outer = current_frame();
    set_current_frame(frame_);
    // What the program registers (remote_function, per-worker datasets) is its task's.
    FunctionRegistry::Installer registry(functions_);
    switch_in();
    frame_ = current_frame();
    set_current_frame(outer);
  });
  if (!yielded)
    return; // waits for a completion: FiberWakeMsg continues
  if (returned_) {
    outcome_->finished.set();
    on_return_();
  }
}

void SimulatedTaskActor::on_exit() {
  // Unwinds a suspended function (a killed task, a hang) while this actor
  // still exists. Installed as the waiter, so that what its destructors
  // drain is left to the simulation's loop.
  FiberWaiter::Installer waiter(this);
  drop_fiber();
}

} // namespace troupe::internal
