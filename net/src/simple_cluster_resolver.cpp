#include <troupe/net/simple_cluster_resolver.hpp>

#include <troupe/core/errors.hpp>

namespace troupe {

SimpleClusterResolver::SimpleClusterResolver(ClusterSpec cluster_spec,
                                             SimpleClusterResolverOptions options)
  : cluster_(std::move(cluster_spec)), options_(std::move(options)) {
  if (!options_.task_type.empty() && options_.task_id >= 0)
    check_task(cluster_, options_.task_type, options_.task_id,
               "invalid SimpleClusterResolver task");
  for (const auto& [type, count] : options_.num_accelerators)
    if (count < 0)
      fail(Errc::invalid_argument, "invalid SimpleClusterResolver num_accelerators: \"" + type
                                     + "\" has " + std::to_string(count)
                                     + " devices: give a count of 0 or more");
}

std::string SimpleClusterResolver::master(std::string_view task_type, int task_id,
                                          std::string_view rpc_layer) const {
  // TensorFlow looks up the cluster only when both the type and the id are given.
  auto address = !task_type.empty() && task_id >= 0 ? cluster_.task_address(task_type, task_id)
                                                    : options_.master;
  if (address.empty())
    return {}; // TensorFlow would give "grpc://"
  return format_master_url(address,
                           rpc_layer.empty() ? std::string_view(options_.rpc_layer) : rpc_layer);
}

} // namespace troupe
