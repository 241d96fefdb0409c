#include <troupe/strategies/tpu_extended.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_scope.hpp>

namespace troupe {

namespace {

std::string tpu_name(int ordinal) {
  return "TPU:" + std::to_string(ordinal);
}

// This host's task in the slice: its worker index in a TF_CONFIG cluster, else 0.
int host_task(Runtime& runtime) {
  return runtime.impl().tpu_hosts() > 1 ? runtime.task_index() : 0;
}

} // namespace

TPUExtended::TPUExtended(Runtime& runtime, Topology topology, std::optional<DeviceAssignment> assignment,
                         int steps_per_run)
  : runtime_(runtime), topology_(std::move(topology)), assignment_(std::move(assignment)),
    steps_per_run_(steps_per_run) {
  if (steps_per_run_ < 1)
    fail(Errc::invalid_argument, "TPUStrategy: steps_per_run must be at least 1 (the steps the host hands the "
                                 "TPU cores per round trip), got " + std::to_string(steps_per_run_));
  const int task = host_task(runtime_);
  const int hosts = topology_.num_tasks();
  const int cores_here = topology_.num_tpus_per_task();
  std::vector<int> local_replicas;
  if (!assignment_) {
    // TensorFlow's default: one replica per core, in task then ordinal order.
    num_replicas_ = hosts * cores_here;
    for (int i = 0; i < cores_here; ++i) {
      local_replicas.push_back(task * cores_here + i);
      logical_devices_.push_back({runtime_.resolve_device(tpu_name(i))});
    }
  } else {
    if (!(assignment_->topology() == topology_))
      fail(Errc::invalid_argument, "TPUStrategy: the device assignment was built for another topology than the "
                                   "initialized TPU system's; build it from initialize_tpu_system's Topology");
    num_replicas_ = assignment_->num_replicas();
    cores_per_replica_ = assignment_->num_cores_per_replica();
    local_replicas = assignment_->lookup_replicas(task, 0);
    for (const int r : local_replicas) {
      std::vector<DeviceSpec> cores;
      for (int c = 0; c < cores_per_replica_; ++c) {
        const auto coordinates = assignment_->coordinates(r, c);
        if (topology_.task_ordinal_at_coordinates(coordinates) != task)
          fail(Errc::invalid_argument, "TPUStrategy: replica " + std::to_string(r) + "'s logical core "
                                         + std::to_string(c) + " is on another host (" + assignment_->tpu_device(r, c, "worker")
                                         + ") than its first core: a replica's cores must be on one host here");
        cores.push_back(runtime_.resolve_device(tpu_name(assignment_->tpu_ordinal(r, c))));
      }
      logical_devices_.push_back(std::move(cores));
    }
  }
  // Replica ids count every host's replicas: this host's must be the
  // contiguous block task * n .. task * n + n - 1, as for multi-worker strategies.
  const int local = static_cast<int>(local_replicas.size());
  for (int i = 0; i < local; ++i)
    if (local_replicas[static_cast<size_t>(i)] != task * local + i || local * hosts != num_replicas_)
      fail(Errc::invalid_argument, "TPUStrategy: the device assignment gives host " + std::to_string(task)
                                     + " replicas that are not the block " + std::to_string(task * local) + ".."
                                     + std::to_string(task * local + local - 1)
                                     + " of equal blocks per host, which this emulation needs across hosts; pass "
                                       "no device assignment (one replica per core, host by host) or a "
                                       "core_assignment that lists each host's cores together");
  std::vector<std::string> names;
  for (const auto& cores : logical_devices_) {
    devices_.push_back(cores.front());
    names.push_back(cores.front().short_name());
  }
  internal::WorkerPlacement placement;
  if (hosts > 1) {
    auto cluster = runtime_.impl().membership();
    if (!cluster)
      fail(Errc::failed_precondition, "TPUStrategy: a slice of " + std::to_string(hosts)
                                        + " hosts needs the Runtime of a TF_CONFIG cluster task");
    placement = {cluster->rank, static_cast<int>(cluster->task_names.size()), cluster};
  }
  replicas_ = std::make_unique<internal::LocalReplicasExtended>("TPUStrategy", runtime_, names, CommunicationOptions{},
                                                                placement);
  if (hosts > 1)
    cross_device_ops_ = std::make_unique<internal::CollectiveAllReduce>(*this, placement.cluster->task_names);
  else
    cross_device_ops_ = std::make_unique<internal::ReductionToOneDevice>(local);
}

TPUExtended::~TPUExtended() = default;

void TPUExtended::start() {
  share_container(*replicas_, container_strategy());
  replicas_->start();
}

int TPUExtended::num_workers() const {
  return replicas_->num_workers();
}

int TPUExtended::worker_index() const {
  return replicas_->worker_index();
}

const std::vector<DeviceSpec>& TPUExtended::logical_devices(int replica) const {
  if (replica < 0 || static_cast<size_t>(replica) >= logical_devices_.size())
    fail(Errc::out_of_range, "TPUStrategy: local replica " + std::to_string(replica) + " does not exist; this host has "
                               + std::to_string(logical_devices_.size()) + " replicas");
  return logical_devices_[static_cast<size_t>(replica)];
}

std::vector<std::exception_ptr> TPUExtended::call_for_each_replica(const std::function<void(int)>& body) {
  // Every hand-over from the host to the cores goes through here.
  round_trips_.fetch_add(1);
  steps_.fetch_add(static_cast<uint64_t>(steps_in_round_trip_));
  return replicas_->call_for_each_replica(body);
}

std::vector<PerReplica<Element>> TPUExtended::take_steps(DistributedIterator& iterator, int iterations,
                                                         const char* method) const {
  detail::require_cross_replica(container_strategy(), method);
  if (iterations < 1)
    fail(Errc::invalid_argument, std::string("TPUStrategy.extended.") + method + ": iterations must be at least 1, got "
                                   + std::to_string(iterations));
  // All n steps' inputs in one request to the input actor, which keeps the
  // next n ready while the cores run these.
  auto steps = iterator.get_next_steps(iterations);
  for (const auto& step : steps)
    if (static_cast<int>(step.size()) != static_cast<int>(devices_.size()))
      fail(Errc::invalid_argument, std::string("TPUStrategy.extended.") + method + ": the iterator gives "
                                     + std::to_string(step.size()) + " replicas' inputs per step, but this host has "
                                     + std::to_string(devices_.size())
                                     + " replicas: iterate a dataset distributed by this strategy");
  return steps;
}

void TPUExtended::run_steps(int steps, const std::function<void(int, int)>& body) {
  steps_in_round_trip_ = steps;
  struct Reset {
    int& steps;
    ~Reset() { steps = 1; }
  } reset{steps_in_round_trip_};
  const int first = worker_index() * static_cast<int>(devices_.size());
  container_strategy().run([&] {
    const int replica = get_replica_context().replica_id_in_sync_group() - first;
    for (int step = 0; step < steps; ++step)
      body(replica, step);
  });
}

} // namespace troupe
