#include <troupe/strategies/tpu_system.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>

namespace troupe {

namespace {

std::string task_text(const ClusterResolver& resolver) {
  return resolver.task_type() + ":" + std::to_string(resolver.task_id());
}

// The resolver must describe the runtime's own place: the same cluster and task.
void check_same_cluster(const internal::RuntimeImpl& impl, const TPUClusterResolver& resolver) {
  const auto& runtime_resolver = impl.resolver();
  const auto runtime_cluster = runtime_resolver ? runtime_resolver->cluster_spec() : ClusterSpec{};
  const auto tpu_cluster = resolver.cluster_spec();
  const bool several_tasks = runtime_cluster.num_tasks_total() > 1 || tpu_cluster.num_tasks_total() > 1;
  if (several_tasks) {
    const auto runtime_place = runtime_cluster.num_tasks_total() > 1
                                 ? "task " + task_text(*runtime_resolver) + " of the cluster " + runtime_cluster.to_json()
                                 : std::string("a single process");
    const auto tpu_place = tpu_cluster.empty()
                             ? std::string("a local TPU (no TF_CONFIG cluster)")
                             : "task " + task_text(resolver) + " of the cluster " + tpu_cluster.to_json();
    if (runtime_cluster != tpu_cluster || runtime_resolver->task_type() != resolver.task_type()
        || runtime_resolver->task_id() != resolver.task_id())
      fail(Errc::invalid_argument, "initialize_tpu_system: the TPUClusterResolver describes " + tpu_place
                                     + " but the runtime is " + runtime_place
                                     + "; create the runtime from the same TF_CONFIG, e.g. Runtime(std::make_shared<"
                                       "TPUClusterResolver>(), {.logical_tpu_cores = N})");
  }
  const int resolver_hosts = tpu_cluster.empty() ? 1 : tpu_cluster.num_tasks("worker");
  if (resolver_hosts != impl.tpu_hosts())
    fail(Errc::invalid_argument, "initialize_tpu_system: the TPUClusterResolver has " + std::to_string(resolver_hosts)
                                   + " TPU hosts (worker tasks) but the runtime's slice is split over "
                                   + std::to_string(impl.tpu_hosts())
                                   + "; create the runtime from the same TF_CONFIG as the resolver");
}

} // namespace

Topology initialize_tpu_system(Runtime& rt, TPUClusterResolver& resolver) {
  auto& impl = rt.impl();
  if (impl.tpu_slice_cores() == 0)
    fail(Errc::not_found, "initialize_tpu_system: TPUs not found: the runtime has no TPU cores; create it with "
                          "RuntimeOptions{.logical_tpu_cores = N} (N = 1, 2, 4, 8, 16 or 32 emulated cores)");
  check_same_cluster(impl, resolver);
  if (impl.tpu_topology())
    TROUPE_LOG(warning, "tpu") << "TPU system " << resolver.tpu() << " has already been initialized. "
                               << "Reinitializing the TPU can cause previously created variables on TPU to be lost.";
  auto topology = Topology::emulated_slice(impl.tpu_slice_cores(), impl.tpu_hosts());
  auto serialized = topology.serialized();
  impl.set_tpu_topology(serialized);
  resolver.connect_tpu_system(impl.tpu_slice_cores() / impl.tpu_hosts(), std::move(serialized));
  return topology;
}

void shutdown_tpu_system(Runtime& rt) { rt.impl().set_tpu_topology(std::nullopt); }

std::optional<Topology> initialized_tpu_topology(const Runtime& rt) {
  // Runtime::impl() has no const overload; this only reads.
  const auto& recorded = const_cast<Runtime&>(rt).impl().tpu_topology();
  if (!recorded)
    return std::nullopt;
  return Topology::from_serialized(*recorded);
}

} // namespace troupe
