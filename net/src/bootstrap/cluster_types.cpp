#include <troupe/net/bootstrap/cluster_types.hpp>

#include <caf/actor_system_config.hpp>

#include <troupe/core/caf_types.hpp>

namespace troupe::internal {

void add_cluster_types(caf::actor_system_config& cfg) {
  add_core_types(cfg);
  cfg.add_message_types<caf::id_block::troupe_cluster>();
}

} // namespace troupe::internal
