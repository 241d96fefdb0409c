#pragma once

#include <string>

#include <caf/meta/type_name.hpp>

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

// In-process only (node -> its watchers), so no type ID; it prints.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TaskLostMsg& x) {
  return f(caf::meta::type_name("troupe::TaskLostMsg"), x.task, x.why, x.left, x.job_error);
}

} // namespace troupe::internal
