#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/net/bootstrap/cluster_directory.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>

namespace troupe::internal {

class Executor;

/// Runs `action` on the simulation's thread when it arrives (SimTimerActor):
/// how a SimulatedCluster schedules its control plane's timed events.
struct SimActionMsg {
  std::function<void()> action;
};

using SimTimerActorHandle = caf::typed_actor<caf::reacts_to<SimActionMsg>>;

/// Spawns the actor that runs every SimActionMsg it gets.
[[nodiscard]] SimTimerActorHandle spawn_sim_timer(caf::actor_system& system);


/// The control plane of a SimulatedCluster: what each task's ClusterNode
/// does across processes (published actors, lookups, the failure detector's
/// verdicts, farewells, a restarted worker taken back), for every task at
/// once. It lives on the simulation's one thread, so it needs no lock; the
/// cluster drives its events (a task's end, a kill, a verdict, a restart) at
/// their virtual times.
class SimControlPlane {
public:
  /// The handle by which task `from` reaches `actor` of task `to` (through
  /// the simulated network: SimRoutes).
  using Route = std::function<caf::actor(int from, int to, const caf::actor& actor)>;

  /// `members`: "chief:0", "worker:0", ..., "ps:0", ... in member order;
  /// `timer` runs the lookups' timeouts.
  SimControlPlane(Executor& host, std::vector<std::string> members, Route route, SimTimerActorHandle timer);
  ~SimControlPlane();
  SimControlPlane(const SimControlPlane&) = delete;
  SimControlPlane& operator=(const SimControlPlane&) = delete;

  /// Member `member`'s view, what its PsCluster takes.
  [[nodiscard]] ClusterDirectory& directory(int member);

  /// `member`'s program ended (its process exits): every other task's
  /// verdict says it left, with the job error of its farewell.
  void leave(int member);
  /// `member` died: its published actors exit, and every other task counts
  /// it lost at once (its sockets close).
  void kill(int member, const std::string& why);
  /// `observer` counts `lost` lost (a partition or freeze past the peer
  /// timeout); nothing when it already has a verdict on it.
  void verdict(int observer, int lost, const std::string& why);
  /// `member` runs again after its kill (a restarted process): the worker
  /// it publishes next is told to the other tasks as a TaskJoinedMsg.
  void restart(int member);

private:
  class Directory;
  struct Task {
    std::string name;
    std::string job;
    int index = 0;
    std::unique_ptr<Directory> directory;
    std::map<std::string, caf::actor> published;
    std::vector<caf::actor> watchers;
    /// This task's verdicts on the others, by member: each told once.
    std::map<int, TaskLostMsg> decided;
    bool alive = true;    ///< neither left nor killed (again, after a restart)
    bool rejoined = false; ///< restarted: its next published worker is a join
    std::optional<std::string> farewell;
    /// How it ended (left or killed), for a restarted task's view of it.
    std::optional<TaskLostMsg> ended;
  };

  void deliver(int observer, int member, TaskLostMsg msg);
  void wake_lookups();
  [[nodiscard]] int member_of(std::string_view task, const char* what) const;
  [[nodiscard]] TaskLostMsg verdict_on(int member, std::string why, bool left) const;

  Executor& host_;
  Route route_;
  SimTimerActorHandle timer_;
  std::vector<std::string> names_;
  std::vector<Task> tasks_;
  /// Lookups waiting for a publish or a verdict.
  std::vector<std::shared_ptr<Completion>> waiting_;
};

// In-process only: it carries a function.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SimActionMsg&) {
  return f(caf::meta::type_name("troupe::SimActionMsg"));
}

} // namespace troupe::internal
