#include <troupe/strategies/cluster_coordinator.hpp>

#include <troupe/actors/ps/coordinator_handle.hpp>
#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/core/errors.hpp>

namespace troupe {

namespace internal {

std::shared_ptr<const RegisteredFunction>
register_remote_function(std::string name, std::type_index signature,
                         std::function<std::vector<uint8_t>(const std::vector<uint8_t>&)> invoke) {
  return FunctionRegistry::current().add(std::move(name), signature, std::move(invoke));
}

std::shared_ptr<void> worker_resource(uint64_t id, std::type_index type, const char* type_name) {
  auto* worker = WorkerContext::current();
  if (!worker)
    fail(Errc::failed_precondition, "a PerWorker argument is only available inside a scheduled function, on a worker");
  return worker->resource(id, type, type_name);
}

void fail_not_codable(const std::string& what) {
  fail(Errc::data_loss, "cannot read " + what + ": a parameter that only a PerWorker argument can fill got a value");
}

void fail_remote_value_argument(const std::string& function, std::size_t position) {
  fail(Errc::invalid_argument, "ClusterCoordinator.schedule of '" + function + "': argument "
                                 + std::to_string(position)
                                 + " is a RemoteValue, which cannot be passed to a scheduled function; "
                                   "fetch() it and pass the value");
}

} // namespace internal

struct ClusterCoordinator::Impl {
  internal::PsCluster* cluster = nullptr;
  std::unique_ptr<internal::CoordinatorHandle> handle;
};

namespace {

internal::PsCluster& cluster_of(ParameterServerStrategy& strategy) {
  auto* cluster = strategy.runtime().impl().ps_cluster();
  if (!cluster)
    fail(Errc::internal, "ClusterCoordinator: the strategy's runtime has no parameter-server cluster");
  return *cluster;
}

} // namespace

ClusterCoordinator::ClusterCoordinator(ParameterServerStrategy& strategy)
  : strategy_(&strategy), impl_(std::make_unique<Impl>()) {
  auto& cluster = cluster_of(strategy);
  // On a worker or ps task the same program only registers its per-worker
  // datasets; the chief schedules.
  if (!cluster.is_coordinator())
    return;
  internal::CoordinatorOptions options;
  options.parameter_servers = cluster.parameter_servers();
  options.parameter_server_names = cluster.parameter_server_names();
  impl_->handle = std::make_unique<internal::CoordinatorHandle>(strategy.runtime().executor(), &cluster, std::move(options));
  cluster.attach_coordinator(impl_->handle->actor());
  impl_->cluster = &cluster;
}

ClusterCoordinator::~ClusterCoordinator() {
  if (impl_->cluster)
    impl_->cluster->detach_coordinator();
}

internal::Executor& ClusterCoordinator::executor() const noexcept {
  return strategy_->runtime().executor();
}

internal::PsCluster* ClusterCoordinator::ps_cluster() const noexcept {
  return impl_->cluster;
}

internal::CoordinatorHandle& ClusterCoordinator::handle(const char* method) const {
  if (!impl_->handle)
    fail(Errc::failed_precondition,
         std::string("ClusterCoordinator.") + method + " on task " + strategy_->runtime().task_type() + ":"
           + std::to_string(strategy_->runtime().task_index())
           + ": only the chief schedules; a worker or ps task calls Runtime::serve() after making the same "
             "strategy, variables, per-worker datasets and functions");
  return *impl_->handle;
}

std::pair<uint64_t, std::shared_ptr<internal::ClosureOutcome>>
ClusterCoordinator::schedule_bytes(const std::shared_ptr<const internal::RegisteredFunction>& registration,
                                   const std::string& name, std::vector<uint8_t> args) {
  auto& coordinator = handle("schedule");
  // A worker runs what the registry holds under the name now: a handle from
  // an earlier registration of that name would run the wrong function.
  if (internal::FunctionRegistry::current().find(name) != registration)
    fail(Errc::failed_precondition, "ClusterCoordinator.schedule of '" + name + "': the function was registered "
                                      "again under this name after this handle was made, so a worker would run "
                                      "the newer one; schedule the handle the latest remote_function returned");
  auto closure = coordinator.schedule(internal::ClosureSpec{name, std::move(args)});
  return {closure.id, std::move(closure.outcome)};
}

void ClusterCoordinator::join() {
  handle("join").join();
}

bool ClusterCoordinator::done() {
  return handle("done").done();
}

PerWorkerDataset ClusterCoordinator::register_dataset(std::function<DistributedDataset(const InputContext&)> make) {
  const int workers = strategy_->num_workers_in_cluster();
  const int replicas = strategy_->num_replicas_in_sync();
  auto builder = [make = std::move(make), workers, replicas](internal::WorkerContext& worker) -> std::shared_ptr<void> {
    return std::make_shared<DistributedDataset>(make(InputContext(workers, worker.worker_index(), replicas)));
  };
  return PerWorkerDataset(internal::WorkerContext::register_resource(typeid(DistributedDataset), std::move(builder)));
}

PerWorker<DistributedIterator> PerWorkerDataset::iterator() const {
  auto builder = [dataset = resource_id_](internal::WorkerContext& worker) -> std::shared_ptr<void> {
    auto made = std::static_pointer_cast<DistributedDataset>(
      worker.resource(dataset, typeid(DistributedDataset), "DistributedDataset"));
    return std::make_shared<DistributedIterator>(*made);
  };
  return PerWorker<DistributedIterator>(
    internal::WorkerContext::register_resource(typeid(DistributedIterator), std::move(builder)));
}

} // namespace troupe
