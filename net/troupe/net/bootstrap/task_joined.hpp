#pragma once

#include <string>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include <troupe/net/bootstrap/node_actor_handle.hpp>

namespace troupe::internal {

/// Node -> watcher (ClusterNode::watch_losses): member `task` ("worker:1"),
/// whose earlier process left or was lost (a TaskLostMsg said so first), was
/// restarted and joined the formed cluster again. `node` is the new process's
/// node actor: its published actors are looked up there (NodeLookupMsg).
/// Only a worker of a cluster with parameter servers rejoins (Handshake::admit_restarted).
struct TaskJoinedMsg {
  std::string task;
  NodeActorHandle node{};
  /// A SimulatedCluster's control plane tells the rejoined worker's
  /// published worker actor itself (and no node) once it is published.
  caf::actor worker{};
};

// In-process only (node -> its watchers), so no type ID; it prints.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TaskJoinedMsg& x) {
  return f(caf::meta::type_name("troupe::TaskJoinedMsg"), x.task, x.node, x.worker);
}

} // namespace troupe::internal
