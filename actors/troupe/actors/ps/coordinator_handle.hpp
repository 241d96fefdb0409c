#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/fwd.hpp>

namespace troupe::internal {

/// A closure as schedule returns it: its id and where its result will be.
struct ScheduledClosure {
  ClosureId id = 0;
  std::shared_ptr<ClosureOutcome> outcome;
};

/// The edge's handle to a coordinator actor (ClusterCoordinator builds on it).
///
/// Every call blocks the calling (non-actor) thread through the runtime's
/// wait, and is made from one application thread at a time. Destroying the
/// handle stops the actor, which cancels every closure not yet settled (queued
/// or running), so a RemoteValue's fetch raises Error(cancelled) instead of
/// waiting forever.
class CoordinatorHandle {
public:
  /// Error(invalid_argument) for a null parameter server, names that do not
  /// match the servers one to one, or a commit timeout <= 0. `cluster` is the
  /// parameter-server cluster this coordinator runs in, if any: it hears of
  /// the errors the calls raise.
  CoordinatorHandle(Executor& runtime, PsCluster* cluster, CoordinatorOptions options);
  ~CoordinatorHandle();
  CoordinatorHandle(const CoordinatorHandle&) = delete;
  CoordinatorHandle& operator=(const CoordinatorHandle&) = delete;

  // -- the coordinator's calls --------------------------------------------------

  /// Queues `spec`; blocks while the queue is full. Raises the first error of
  /// an earlier closure (and clears it), or Error(peer_lost) when no worker
  /// has been alive for the no-worker timeout.
  [[nodiscard]] ScheduledClosure schedule(ClosureSpec spec);

  /// Blocks until every closure scheduled so far has finished and its updates
  /// are committed at the parameter servers. Raises the first closure error
  /// once (then clears it, as TF does), or Error(peer_lost) when closures wait
  /// and no worker was alive for the no-worker timeout, or a parameter server
  /// was lost (from then on, every call raises that).
  void join();

  /// Whether every closure scheduled so far has finished; raises like join.
  [[nodiscard]] bool done();

  // -- workers --------------------------------------------------------------------

  /// Gives closures to `worker` from now on (a new or restarted worker).
  void add_worker(caf::actor worker, std::string name);

  /// The failure detector's verdict: `worker` is lost or frozen.
  void worker_lost(caf::actor worker, std::string reason);

  // -- parameter servers ------------------------------------------------------------

  /// The failure detector's verdict: parameter server `ps_task` (an index into
  /// CoordinatorOptions::parameter_servers) is lost. Every unsettled closure
  /// and every call from now on fails with Error(peer_lost) naming it.
  void parameter_server_lost(int ps_task, std::string reason);

  /// The coordinator actor, to which workers send ClosureFinishedMsg.
  [[nodiscard]] const CoordinatorActorHandle& actor() const noexcept { return actor_; }
  [[nodiscard]] Executor& runtime() noexcept { return *runtime_; }
  [[nodiscard]] PsCluster* cluster() noexcept { return cluster_; }

private:
  void call(const std::shared_ptr<CoordinatorCallSlot>& slot, const char* what);

  Executor* runtime_;
  PsCluster* cluster_;
  CoordinatorActorHandle actor_;
};

} // namespace troupe::internal
