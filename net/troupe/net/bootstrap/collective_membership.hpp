#pragma once

#include <memory>
#include <string>
#include <vector>

#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/link/frame_sender.hpp>
#include <troupe/net/link/link_messages.hpp>

namespace troupe::internal {

/// What a multi-worker strategy needs of its task's cluster: its rank among
/// the chief and workers, their names, and the data plane its collective
/// groups send through. A task of a real cluster takes it from its
/// ClusterNode; a task of a SimulatedCluster from its simulated link, so that
/// strategy code is the same in both.
struct CollectiveMembership {
  /// This task's rank among the chief and workers (-1 for ps and evaluator tasks).
  int rank = -1;
  /// The chief and workers, in rank order: "chief:0", "worker:0", ...
  std::vector<std::string> task_names;
  /// The data-plane link (null on a task that takes no part in collectives).
  DataPlaneHandle link;
  /// A transport that takes frames from the sender's thread (UCX); null otherwise.
  std::shared_ptr<FrameSender> frame_sender;
  /// The cluster's description and this task's place in it.
  std::shared_ptr<const ClusterResolver> resolver;

  [[nodiscard]] bool participates() const noexcept { return rank >= 0; }
};

} // namespace troupe::internal
