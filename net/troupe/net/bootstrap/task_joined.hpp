#pragma once

#include <string>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

namespace troupe::internal {

/// Node -> watcher (ClusterNode::watch_losses): member `task` ("worker:1"),
/// whose earlier process left or was lost (a TaskLostMsg said so first), was
/// restarted and joined the formed cluster again. `node` is the new process's
/// node actor: its published actors are looked up there (NodeLookupMsg).
/// Only a worker of a cluster with parameter servers rejoins (Handshake::admit_restarted).
struct TaskJoinedMsg {
  std::string task;
  caf::actor node;
};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::TaskJoinedMsg)
