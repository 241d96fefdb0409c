// The simulation mode of RuntimeImpl: CAF's test coordinator, stepped by a
// seeded random choice of the next runnable actor.

#include <troupe/actors/modes/runtime_impl.hpp>

#include <algorithm>

#include <caf/abstract_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/replicas/agreement_group.hpp>      // complete for the members a throwing constructor destroys
#include <troupe/actors/gpu/gpu_devices.hpp>          // the same
#include <troupe/actors/modes/scheduler_config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp> // complete for the members a throwing constructor destroys

namespace troupe::internal {

RuntimeImpl::RuntimeImpl(const Simulation& simulation)
  : config_(make_config()), rng_(simulation.seed) {
  check_devices(simulation.logical_cpu_devices, simulation.logical_tpu_cores);
  config_->set("scheduler.policy", caf::atom("testing"));
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  coordinator_ = &dynamic_cast<caf::scheduler::test_coordinator&>(system_->scheduler());
  init_devices(simulation.logical_cpu_devices);
  if (simulation.workers != 0 || simulation.ps != 0) {
    check_ps_cluster_shape(simulation.workers, simulation.ps, simulation.devices_per_worker, "Simulation");
    if (simulation.logical_cpu_devices != 1 && simulation.logical_cpu_devices != simulation.devices_per_worker)
      fail(Errc::invalid_argument, "Simulation: a parameter-server cluster's devices are devices_per_worker ("
                                     + std::to_string(simulation.devices_per_worker)
                                     + "); leave logical_cpu_devices unset");
    devices_.clear();
    check_devices(simulation.devices_per_worker);
    init_devices(simulation.devices_per_worker);
    start_ps_cluster(simulation.workers, simulation.ps, simulation.devices_per_worker, "Simulation");
  }
  init_tpu_cores(simulation.logical_tpu_cores, 1);
}

void RuntimeImpl::step_once() {
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

void RuntimeImpl::simulate_until(const Completion& done, const char* what) {
  while (!done.done()) {
    if (!coordinator_->jobs.empty())
      step_once();
    else if (coordinator_->has_pending_timeout())
      coordinator_->trigger_timeout();
    else
      fail(Errc::deadlock, std::string("simulation deadlock while waiting for ") + what
                             + ": no actor can run and no timer is pending");
  }
}

void RuntimeImpl::drain() {
  if (!coordinator_)
    return;
  while (!coordinator_->jobs.empty())
    step_once();
}

} // namespace troupe::internal
