#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <caf/actor.hpp>
#include <caf/timespan.hpp>

namespace troupe::internal {

/// What a parameter-server cluster needs of its task's cluster: who the
/// members are, where their published actors are, and the failure
/// detector's verdicts. A task of a real cluster has it from its ClusterNode
/// (the control plane over sockets); a task of a SimulatedCluster from the
/// simulation's control plane, so that PsCluster is the same in both.
class ClusterDirectory {
public:
  virtual ~ClusterDirectory() = default;

  /// This task's job ("chief", "worker", "ps") and index in it.
  [[nodiscard]] virtual const std::string& task_type() const noexcept = 0;
  [[nodiscard]] virtual int task_index() const noexcept = 0;
  /// Every member, in order: "chief:0", "worker:0", ..., "ps:0", ...
  [[nodiscard]] virtual const std::vector<std::string>& members() const noexcept = 0;
  /// The members of `job` ("ps" -> {"ps:0", "ps:1"}); empty when it has none.
  [[nodiscard]] virtual std::vector<std::string> tasks_of(std::string_view job) const = 0;

  /// Makes `actor` reachable by every member under `name`: lookup(this task,
  /// name) finds it. A null actor withdraws the name.
  virtual void publish(const std::string& name, const caf::actor& actor) = 0;
  /// The actor that member `task` published under `name`, waiting up to
  /// `timeout` for it to be published; Error(timeout) naming the task and
  /// the name when it is not, Error(peer_lost) when the task is gone. Waits
  /// as Executor::wait does (a fiber suspends).
  [[nodiscard]] virtual caf::actor lookup(std::string_view task, const std::string& name,
                                          caf::timespan timeout) const = 0;
  /// `listener` receives a TaskLostMsg for every member that is lost or
  /// leaves from now on, and at once for those already decided; a worker
  /// that rejoins after its verdict comes as a TaskJoinedMsg.
  virtual void watch_losses(const caf::actor& listener) = 0;
  /// Tells every other member that this task leaves, and with which job
  /// error (empty: its job ended well). The first call counts.
  virtual void say_farewell(const std::string& job_error) = 0;

protected:
  ClusterDirectory() = default;
  ClusterDirectory(const ClusterDirectory&) = default;
  ClusterDirectory& operator=(const ClusterDirectory&) = default;
};

} // namespace troupe::internal
