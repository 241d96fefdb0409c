// The simulation modes of RuntimeImpl: CAF's test coordinator, stepped by a
// seeded random choice of the next runnable actor (Executor::start_simulated),
// and one task of a SimulatedCluster on such a coordinator.

#include <troupe/actors/modes/runtime_impl.hpp>

#include <algorithm>

#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/replicas/agreement_group.hpp>      // complete for the members a throwing constructor destroys
#include <troupe/actors/gpu/gpu_devices.hpp>          // the same
#include <troupe/actors/modes/scheduler_config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp> // complete for the members a throwing constructor destroys
#include <troupe/net/cluster_resolver.hpp>

namespace troupe::internal {

RuntimeImpl::RuntimeImpl(const Simulation& simulation) {
  check_devices(simulation.logical_cpu_devices, simulation.logical_tpu_cores);
  auto config = make_config();
  config->set("scheduler.policy", caf::atom("testing"));
  start_simulated(std::move(config), simulation.seed);
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

RuntimeImpl::RuntimeImpl(const SimulatedTask& task) : resolver_(task.resolver) {
  check_devices(task.logical_cpu_devices, task.tpu_slice_cores);
  attach_to(*task.host);
  simulated_membership_ = task.membership;
  simulated_directory_ = task.directory;
  simulated_functions_ = std::make_unique<FunctionRegistry>();
  set_functions(simulated_functions_.get());
  set_trace_task(task.member, task.name);
  init_devices(task.logical_cpu_devices);
  if (task.tpu_slice_cores != 0)
    init_tpu_cores(task.tpu_slice_cores, resolver_->cluster_spec().num_tasks("worker"));
}

void RuntimeImpl::leave_ps_cluster(bool by_exception) {
  if (ps_cluster_)
    ps_cluster_->end_program(by_exception);
  ps_cluster_.reset();
}

void RuntimeImpl::join_ps_cluster() {
  if (simulated_directory_ && !ps_cluster_)
    ps_cluster_ = std::make_unique<PsCluster>(
      *this, *simulated_directory_,
      static_cast<int>(std::count_if(devices_.begin(), devices_.end(),
                                     [](const DeviceSpec& d) { return d.device_type() == "CPU"; })));
}

} // namespace troupe::internal
