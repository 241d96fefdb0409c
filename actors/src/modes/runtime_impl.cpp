// The threaded, cluster and embedded modes of RuntimeImpl (the simulation
// mode is in simulation_runtime.cpp).

#include <troupe/actors/modes/runtime_impl.hpp>

#include <troupe/actors/ps/ps_cluster.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <caf/io/middleman.hpp>

#include <troupe/actors/replicas/agreement_group.hpp>
#include <troupe/actors/gpu/gpu_devices.hpp>
#include <troupe/actors/modes/scheduler_config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/timeline.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/net/cluster_resolver.hpp>

namespace troupe::internal {

namespace {

// A TPU slice's hosts are the cluster's worker tasks (TPUClusterResolver's
// "worker" job); a task of another job owns no cores.
int tpu_hosts_of(const ClusterResolver& resolver, int slice_cores) {
  const auto spec = resolver.cluster_spec();
  if (slice_cores == 0 || spec.empty())
    return 1;
  if (resolver.task_type() != "worker")
    fail(Errc::invalid_argument, "logical_tpu_cores = " + std::to_string(slice_cores) + " on task "
                                   + resolver.task_type() + ":" + std::to_string(resolver.task_id())
                                   + ": a TPU slice's cores belong to the cluster's worker tasks; leave "
                                   "logical_tpu_cores at 0 on other tasks");
  return spec.num_tasks("worker");
}

} // namespace

void RuntimeImpl::check_devices(int logical_cpu_devices, int logical_tpu_cores) {
  if (logical_cpu_devices < 1)
    fail(Errc::invalid_argument, "logical_cpu_devices must be at least 1, got "
                                   + std::to_string(logical_cpu_devices));
  // The TPU v2/v3 slices: one chip of 1 or 2 cores, then 2, 4, 8, 16 chips.
  for (const int allowed : {0, 1, 2, 4, 8, 16, 32})
    if (logical_tpu_cores == allowed)
      return;
  fail(Errc::invalid_argument, "logical_tpu_cores must be 0 (no TPU) or a TPU slice's core count 1, 2, 4, 8, 16 "
                               "or 32, got " + std::to_string(logical_tpu_cores));
}

void RuntimeImpl::init_tpu_cores(int slice_cores, int hosts) {
  if (slice_cores == 0)
    return;
  if (hosts < 1 || slice_cores % hosts != 0)
    fail(Errc::invalid_argument, "logical_tpu_cores = " + std::to_string(slice_cores) + " cannot be split over "
                                   + std::to_string(hosts) + " worker tasks: each host owns the same number of "
                                   "cores; use a multiple of the worker count");
  tpu_slice_cores_ = slice_cores;
  tpu_hosts_ = hosts;
  const int local = slice_cores / hosts;
  for (int i = 0; i < local; ++i)
    devices_.push_back(DeviceSpec::local("TPU", i));
  TROUPE_LOG(warning, "tpu") << "TPU:0..TPU:" << local - 1 << " are emulated TPU cores (CPU threads laid out as a "
                             << slice_cores << "-core TPU slice" << (hosts > 1 ? " over " + std::to_string(hosts) + " hosts" : "")
                             << "); no TPU hardware is used";
}

RuntimeImpl::RuntimeImpl(const RuntimeOptions& options) {
  check_devices(options.logical_cpu_devices, options.logical_tpu_cores);
  auto config = make_config();
  configure_scheduler(*config, options);
  start(std::move(config));
  init_devices(options.logical_cpu_devices);
  init_tpu_cores(options.logical_tpu_cores, 1);
  init_gpus(options);
}

RuntimeImpl::RuntimeImpl(const LocalCluster& cluster) {
  check_ps_cluster_shape(cluster.workers, cluster.ps, cluster.devices_per_worker, "LocalCluster");
  auto config = make_config();
  configure_scheduler(*config, RuntimeOptions{.logical_cpu_devices = cluster.devices_per_worker, .threads = cluster.threads});
  start(std::move(config));
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
  : resolver_(std::move(resolver)) {
  if (!resolver_)
    fail(Errc::invalid_argument, "Runtime: the cluster resolver is null; pass ClusterResolver::from_env()");
  check_devices(options.logical_cpu_devices, options.logical_tpu_cores);
  auto config = make_config();
  configure_scheduler(*config, options);
  const bool multi_task = resolver_->cluster_spec().num_tasks_total() > 1;
  if (multi_task) {
    configure_cluster_scheduler(*config, options, *resolver_);
    config->load<caf::io::middleman>();
    configure_peer_timeouts(*config);
  }
  start(std::move(config));
  init_devices(options.logical_cpu_devices);
  // Checked before the cluster forms; the cores come after, so that their log
  // line names this task.
  const int tpu_hosts = tpu_hosts_of(*resolver_, options.logical_tpu_cores);
  if (multi_task) {
    cluster_ = std::make_unique<ClusterNode>(system(), resolver_);
    // In the timeline, each task is the process of its member index (chief, workers, ps).
    const auto me = cluster_->task_type() + ":" + std::to_string(cluster_->task_index());
    const auto& members = cluster_->members();
    if (auto i = std::find(members.begin(), members.end(), me); i != members.end())
      set_trace_task(static_cast<int>(i - members.begin()), me);
    // A cluster with parameter servers: this task's part of it.
    if (!cluster_->tasks_of("ps").empty() && cluster_->is_member())
      ps_cluster_ = std::make_unique<PsCluster>(*this, *cluster_, options.logical_cpu_devices);
  }
  init_tpu_cores(options.logical_tpu_cores, tpu_hosts);
  init_gpus(options);
}

RuntimeImpl::RuntimeImpl(caf::actor_system& system, const RuntimeOptions& options) {
  check_devices(options.logical_cpu_devices, options.logical_tpu_cores);
  attach(system);
  init_devices(options.logical_cpu_devices);
  init_tpu_cores(options.logical_tpu_cores, 1);
  init_gpus(options);
}

RuntimeImpl::~RuntimeImpl() {
  // The agreement group and the parameter-server cluster's tasks (whose
  // workers hold per-worker iterators) are the runtime's own users: they go first.
  agreement_.reset();
  ps_cluster_.reset();
  gpus_.reset();
  if (const int users = this->users(); users > 0) {
    std::fprintf(stderr,
                 "troupe: a Runtime was destroyed while %d strategies or distributed-dataset iterators still "
                 "use it; destroy them before their Runtime (declare the Runtime first). Stopping, since "
                 "the actor system would otherwise wait for their actors forever.\n",
                 users);
    std::abort();
  }
  drain();
  // Its events so far reach the file now, not only when the process exits.
  Timeline::process().flush();
}

std::optional<CollectiveMembership> RuntimeImpl::membership() const {
  if (cluster_)
    return cluster_->membership();
  return simulated_membership_;
}

AgreementGroup& RuntimeImpl::agreement_group() {
  const auto cluster = membership();
  if (!cluster)
    fail(Errc::internal, "the agreement group exists only in a runtime that joined a cluster of several tasks");
  if (!cluster->participates())
    fail(Errc::failed_precondition, "task " + cluster->resolver->task_type() + ":"
                                      + std::to_string(cluster->resolver->task_id())
                                      + " takes no part in collectives (only the chief and the workers do): make "
                                        "MultiWorkerMirroredStrategy on those tasks, or ParameterServerStrategy");
  if (!agreement_)
    agreement_ = std::make_unique<AgreementGroup>(*this, devices_.front(), *cluster);
  return *agreement_;
}

void RuntimeImpl::init_devices(int logical_cpu_devices) {
  for (int i = 0; i < logical_cpu_devices; ++i)
    devices_.push_back(DeviceSpec::local("CPU", i));
}

void RuntimeImpl::init_gpus(const RuntimeOptions& options) {
  GpuDevices::check_options(options);
  // A simulation steps actors in virtual time; a GPU finishes in real time.
  if (simulation())
    return;
  gpus_ = GpuDevices::start(*this, options);
  if (gpus_)
    for (const auto& name : gpus_->names())
      devices_.push_back(DeviceSpec::from_string(name));
}

} // namespace troupe::internal
