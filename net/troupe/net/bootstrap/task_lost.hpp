#pragma once

#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

namespace troupe::internal {

/// Node -> watcher (ClusterNode::watch_losses): the cluster's verdict on
/// member `task` ("worker:1", "ps:0"), once per member. `left`: it shut down
/// normally (its program ended); otherwise it is lost (its process died, froze
/// past TROUPE_PEER_TIMEOUT_SECONDS or became unreachable), and `why` says
/// which. A parameter-server coordinator reschedules a lost worker's
/// functions and fails on a lost parameter server.
struct TaskLostMsg {
  std::string task;
  std::string why;
  bool left = false;
  /// Set when the task said, before it left, that its job failed
  /// (ClusterNode::say_farewell): the error it ended with.
  std::string job_error;
};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::TaskLostMsg)
