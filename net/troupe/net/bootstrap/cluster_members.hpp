#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <troupe/net/cluster_spec.hpp>

namespace troupe::internal {

/// The tasks of a cluster that join it as processes, in the stable order
/// every task computes alike: the chief, the workers by index, then the
/// parameter servers by index ("chief:0", "worker:0", "worker:1", "ps:0").
///
/// The first `participants()` members (chief and workers) take part in
/// collectives, so a member's index is also its collective rank among them.
/// Evaluator tasks are not members (tf.distribute runs the evaluator outside
/// the cluster), nor are tasks of jobs with other names: they join nothing.
class ClusterMembers {
public:
  /// The members of `spec`; empty for an empty spec.
  explicit ClusterMembers(const ClusterSpec& spec);

  /// "chief:0", "worker:0", ..., "ps:0", ...
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  /// Each member's "host:port", as the cluster spec lists it.
  [[nodiscard]] const std::vector<std::string>& addresses() const noexcept { return addresses_; }
  /// How many members take part in collectives: the chief and the workers.
  [[nodiscard]] int participants() const noexcept { return participants_; }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(names_.size()); }

  /// The member index of task `task_index` of job `task_type`; -1 when that
  /// task is no member (an evaluator, another job, an index out of range).
  [[nodiscard]] int index_of(std::string_view task_type, int task_index) const;
  /// The member index of "ps:1"; -1 when no member has that name.
  [[nodiscard]] int index_of(std::string_view task_name) const;

  /// The members of `job` ("worker" -> {"worker:0", "worker:1"}); empty when none.
  [[nodiscard]] std::vector<std::string> tasks_of(std::string_view job) const;

  /// The jobs that are members, in member order: chief, worker, ps.
  static constexpr const char* member_jobs[] = {"chief", "worker", "ps"};

private:
  std::vector<std::string> names_;
  std::vector<std::string> addresses_;
  int participants_ = 0;
};

} // namespace troupe::internal
