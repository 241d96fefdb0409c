#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include <troupe/net/cluster_resolver.hpp>

namespace caf {
class actor_system;
} // namespace caf

namespace troupe::internal {

/// This process as one task of a cluster: its node actor (control plane,
/// published on the task's address), its data-plane broker, and the
/// handshake with every other task that takes part in collectives (the
/// chief and the workers, ranked chief first, then workers by index).
///
/// The constructor blocks the calling (user-facing) thread until every such
/// task has joined: it publishes the node, reaches every task of lower rank
/// with remote_actor (retrying until TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS),
/// exchanges hellos (same cluster spec, same TROUPE_CLUSTER_TOKEN, else the
/// refusing task names the difference), waits for the tasks of higher rank to
/// do the same, then connects the data plane. Errors name the tasks that
/// never came and what to check. The destructor says bye to the other tasks
/// (so that they see a normal exit, not a lost peer) and waits, bounded, for
/// the last bytes to leave.
class ClusterNode {
public:
  ClusterNode(caf::actor_system& system, std::shared_ptr<const ClusterResolver> resolver);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  /// Whether this task takes part in collectives (chief or worker).
  [[nodiscard]] bool participates() const noexcept { return rank_ >= 0; }
  /// This task's rank among the chief and workers (-1 for ps and evaluator tasks).
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// The chief and workers, in rank order: "chief:0", "worker:0", ...
  [[nodiscard]] const std::vector<std::string>& task_names() const noexcept { return task_names_; }
  /// The data-plane link the collective groups of multi-worker strategies use.
  [[nodiscard]] const caf::actor& link() const noexcept { return data_plane_; }
  [[nodiscard]] const std::shared_ptr<const ClusterResolver>& resolver() const noexcept { return resolver_; }

private:
  void join();
  void stop_actors();

  caf::actor_system& system_;
  std::shared_ptr<const ClusterResolver> resolver_;
  int rank_ = -1;
  std::vector<std::string> task_names_;
  std::vector<std::string> addresses_;
  caf::actor node_;
  caf::actor data_plane_;
};

} // namespace troupe::internal
