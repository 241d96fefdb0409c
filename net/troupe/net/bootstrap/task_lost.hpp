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
  /// Set when the chief (member 0) had said farewell before this verdict:
  /// the job was ending, and this member may have ended because of it (a
  /// parameter server ends when the chief does, and may be gone before the
  /// chief's own verdict comes). `chief_job_error` is the error the chief
  /// ended with (empty: its job ended well).
  bool chief_said_farewell = false;
  std::string chief_job_error;
};

// In-process only (node -> its watchers), so no type ID; it prints.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TaskLostMsg& x) {
  return f(caf::meta::type_name("troupe::TaskLostMsg"), x.task, x.why, x.left, x.job_error, x.chief_said_farewell,
           x.chief_job_error);
}

} // namespace troupe::internal
