#include <troupe/actors/runtime/executor.hpp>

#include <troupe/actors/ps/function_registry.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include <caf/abstract_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <troupe/actors/fibers/fiber_waiter.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/timeline.hpp>

namespace troupe::internal {

Executor::~Executor() = default;

void Executor::start(std::unique_ptr<caf::actor_system_config> config) {
  config_ = std::move(config);
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
}

void Executor::start_simulated(std::unique_ptr<caf::actor_system_config> config, uint64_t seed) {
  rng_.seed(seed);
  start(std::move(config));
  coordinator_ = &dynamic_cast<caf::scheduler::test_coordinator&>(system_->scheduler());
}

void Executor::attach(caf::actor_system& system) {
  system_ = &system;
  rng_.seed(0);
  coordinator_ = dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler());
}

void Executor::attach_to(Executor& host) {
  system_ = host.system_;
  coordinator_ = host.coordinator_;
  stepper_ = host.stepper_;
}

FunctionRegistry& Executor::functions() const noexcept {
  return functions_ != nullptr ? *functions_ : FunctionRegistry::process();
}

void Executor::wait(const Completion& done, const char* what) {
  // On an actor's fiber: suspend it, so the actor's thread (the simulation's
  // only thread, or a scheduler thread others need) stays free.
  if (auto* fiber = FiberWaiter::current()) {
    if (!done.done())
      fiber->await(done);
    done.settle();  // the caller may destroy `done` next
    return;
  }
  if (coordinator_) {
    stepper_->simulate_until(done, what);
    done.settle();
  } else {
    done.wait();
  }
}

void Executor::step_once() {
  auto& jobs = coordinator_->jobs;
  std::uniform_int_distribution<size_t> pick(0, jobs.size() - 1);
  auto chosen = jobs.begin() + static_cast<std::ptrdiff_t>(pick(rng_));
  std::rotate(jobs.begin(), chosen, chosen + 1);
  // Actor ids are handed out in spawn order, so the trace is reproducible.
  uint64_t id = 0;
  if (auto* actor = dynamic_cast<caf::abstract_actor*>(jobs.front()))
    id = actor->id();
  trace_hash_ = (trace_hash_ ^ id) * 1099511628211ull;
  ++steps_;
  coordinator_->run_once();
}

void Executor::simulate_until(const Completion& done, const char* what) {
  // No deadline and no step bound: it returns once `done` is set, or throws.
  (void)simulate_until(done, caf::actor_clock::time_point::max(), std::numeric_limits<uint64_t>::max(), what);
}

bool Executor::simulate_until(const Completion& done, caf::actor_clock::time_point deadline, uint64_t max_steps,
                              const char* what) {
  if (stepper_ != this)
    return stepper_->simulate_until(done, deadline, max_steps, what);
  auto& clock = coordinator_->clock();
  uint64_t steps_left = max_steps;
  while (!done.done()) {
    if (!coordinator_->jobs.empty()) {
      if (steps_left-- == 0)
        return false;
      step_once();
    } else if (!clock.schedule().empty() && clock.schedule().begin()->first > deadline)
      return false;
    else if (coordinator_->has_pending_timeout())
      coordinator_->trigger_timeout();
    else
      fail(Errc::deadlock, std::string("simulation deadlock while waiting for ") + what
                             + ": no actor can run and no timer is pending");
  }
  done.settle();
  return true;
}

caf::actor_clock::time_point Executor::now() const {
  return coordinator_ ? coordinator_->clock().now() : caf::actor_clock::clock_type::now();
}

void Executor::set_trace_task(int pid, const std::string& task) {
  trace_pid_ = pid;
  Timeline::process().name_process(pid, task);
}

void Executor::drain() {
  if (!coordinator_ || FiberWaiter::current() != nullptr)
    return;
  if (stepper_ != this) {
    stepper_->drain();
    return;
  }
  while (!coordinator_->jobs.empty())
    step_once();
}

} // namespace troupe::internal
