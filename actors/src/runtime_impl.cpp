// The threaded, cluster and embedded modes of RuntimeImpl (the simulation
// mode is in simulation_runtime.cpp).

#include <troupe/actors/runtime_impl.hpp>

#include <troupe/actors/fiber_waiter.hpp>
#include <troupe/actors/ps_cluster.hpp>

#include <cstdio>
#include <cstdlib>

#include <caf/io/middleman.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <troupe/actors/agreement_group.hpp>
#include <troupe/actors/scheduler_config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/net/cluster_resolver.hpp>

namespace troupe::internal {

void RuntimeImpl::check_devices(int logical_cpu_devices) {
  if (logical_cpu_devices < 1)
    fail(Errc::invalid_argument, "logical_cpu_devices must be at least 1, got "
                                   + std::to_string(logical_cpu_devices));
}

RuntimeImpl::RuntimeImpl(const RuntimeOptions& options) : config_(make_config()) {
  check_devices(options.logical_cpu_devices);
  configure_scheduler(*config_, options);
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  init_devices(options.logical_cpu_devices);
}

RuntimeImpl::RuntimeImpl(const LocalCluster& cluster) : config_(make_config()) {
  check_ps_cluster_shape(cluster.workers, cluster.ps, cluster.devices_per_worker, "LocalCluster");
  configure_scheduler(*config_, RuntimeOptions{cluster.devices_per_worker, cluster.threads});
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  init_devices(cluster.devices_per_worker);
  start_ps_cluster(cluster.workers, cluster.ps, cluster.devices_per_worker, "LocalCluster");
}

void RuntimeImpl::check_ps_cluster_shape(int workers, int ps, int devices_per_worker, const char* mode) {
  if (workers < 0 || ps < 0 || devices_per_worker < 1)
    fail(Errc::invalid_argument, std::string(mode) + "{.workers = " + std::to_string(workers) + ", .ps = "
                                   + std::to_string(ps) + ", .devices_per_worker = "
                                   + std::to_string(devices_per_worker)
                                   + "}: workers and ps must be 0 or more and devices_per_worker 1 or more");
}

void RuntimeImpl::start_ps_cluster(int workers, int ps, int devices_per_worker, const char* mode) {
  check_ps_cluster_shape(workers, ps, devices_per_worker, mode);
  // An empty job is ParameterServerStrategy's error to give, with TensorFlow's text.
  ps_cluster_ = std::make_unique<PsCluster>(*this, PsClusterShape{workers, ps, devices_per_worker});
}

RuntimeImpl::RuntimeImpl(std::shared_ptr<const ClusterResolver> resolver, const RuntimeOptions& options)
  : config_(make_config()), resolver_(std::move(resolver)) {
  if (!resolver_)
    fail(Errc::invalid_argument, "Runtime: the cluster resolver is null; pass ClusterResolver::from_env()");
  check_devices(options.logical_cpu_devices);
  configure_scheduler(*config_, options);
  const bool multi_task = resolver_->cluster_spec().num_tasks_total() > 1;
  if (multi_task) {
    configure_cluster_scheduler(*config_, options, *resolver_);
    config_->load<caf::io::middleman>();
    configure_peer_timeouts(*config_);
  }
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  init_devices(options.logical_cpu_devices);
  if (multi_task) {
    cluster_ = std::make_unique<ClusterNode>(*system_, resolver_);
    // A cluster with parameter servers: this task's part of it.
    if (!cluster_->tasks_of("ps").empty() && cluster_->is_member())
      ps_cluster_ = std::make_unique<PsCluster>(*this, *cluster_, options.logical_cpu_devices);
  }
}

RuntimeImpl::RuntimeImpl(caf::actor_system& system, const RuntimeOptions& options)
  : system_(&system), rng_(0) {
  check_devices(options.logical_cpu_devices);
  coordinator_ = dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler());
  init_devices(options.logical_cpu_devices);
}

RuntimeImpl::~RuntimeImpl() {
  // The agreement group and the parameter-server cluster's tasks (whose
  // workers hold per-worker iterators) are the runtime's own users: they go first.
  agreement_.reset();
  ps_cluster_.reset();
  if (const int users = users_.load(); users > 0) {
    std::fprintf(stderr,
                 "troupe: a Runtime was destroyed while %d strategies or distributed-dataset iterators still "
                 "use it; destroy them before their Runtime (declare the Runtime first). Stopping, since "
                 "the actor system would otherwise wait for their actors forever.\n",
                 users);
    std::abort();
  }
  drain();
}

AgreementGroup& RuntimeImpl::agreement_group() {
  if (!cluster_)
    fail(Errc::internal, "the agreement group exists only in a runtime that joined a cluster of several tasks");
  if (!cluster_->participates())
    fail(Errc::failed_precondition, "task " + cluster_->task_type() + ":" + std::to_string(cluster_->task_index())
                                      + " takes no part in collectives (only the chief and the workers do): make "
                                        "MultiWorkerMirroredStrategy on those tasks, or ParameterServerStrategy");
  if (!agreement_)
    agreement_ = std::make_unique<AgreementGroup>(*this, *cluster_);
  return *agreement_;
}

void RuntimeImpl::init_devices(int logical_cpu_devices) {
  for (int i = 0; i < logical_cpu_devices; ++i)
    devices_.push_back(DeviceSpec::local("CPU", i));
}

void RuntimeImpl::wait(const Completion& done, const char* what) {
  // On an actor's fiber: suspend it, so the actor's thread (the simulation's
  // only thread, or a scheduler thread others need) stays free.
  if (auto* fiber = FiberWaiter::current()) {
    if (!done.done())
      fiber->await(done);
    return;
  }
  if (coordinator_)
    simulate_until(done, what);
  else
    done.wait();
}

} // namespace troupe::internal
