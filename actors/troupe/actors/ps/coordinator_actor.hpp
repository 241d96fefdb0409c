#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/function_recorder.hpp>

namespace troupe::internal {

/// The ClusterCoordinator's scheduling core: a bounded closure queue handed
/// to workers, one closure per worker and one attempt per closure at a time
/// (TF's _CoordinatedClosureQueue and its worker threads, as one actor).
///
/// 1. schedule queues a closure (blocking the caller while the queue holds
///    `queue_capacity` closures) and hands queued closures, front first, to
///    idle live workers as RunClosureMsg(id, attempt).
/// 2. A worker answers ClosureFinishedMsg(id, attempt, staged counts); only
///    the current attempt on the worker that runs it counts, so a late answer
///    from a lost or frozen worker is ignored. The worker is idle from then on.
/// 3. The coordinator alone decides an attempt's fate at the parameter
///    servers (that makes it exactly once across servers): an attempt that
///    staged nothing settles at once; otherwise it commits (PsCommitMsg) at
///    every server it staged at, all at once, and its RemoteValue settles when
///    every commit was acknowledged (a refusal, a timeout or a lost server
///    fails it naming the server). A failed attempt, or one whose worker was
///    lost, is aborted at every server (PsAbortMsg). Both carry the watermark
///    "every closure below N is resolved".
/// 4. A lost worker's closure goes back to the front of the queue; its next
///    attempt gets attempt + 1.
/// 5. The first failing closure's error is kept: queued closures are
///    cancelled, nothing more is dispatched, and once no closure runs or
///    commits the next join, done or schedule raises the error and clears it
///    (as TF does).
/// 6. A lost parameter server (its down message, or CoordinatorPsLostMsg)
///    fails every unsettled closure and every call from then on with
///    Error(peer_lost) naming it: its variables are gone.
/// 7. While no worker is alive and closures or calls wait, a deadline of
///    `no_worker_timeout` runs; when it passes they fail naming that, and
///    schedule fails at once until a worker joins again.
class CoordinatorActor final : public CoordinatorActorHandle::base {
public:
  CoordinatorActor(caf::actor_config& cfg, CoordinatorOptions options);

  behavior_type make_behavior() override;
  /// Settles every closure not yet settled as cancelled, so no fetch waits forever.
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.coordinator"; }

private:
  struct Closure {
    ClosureId id = 0;
    uint32_t attempt = 0; ///< of the last dispatch; the next one gets attempt + 1
    ClosureSpec spec;
    std::shared_ptr<ClosureOutcome> outcome;
  };

  struct Worker {
    caf::actor actor;
    std::string name;
    bool alive = true;
    std::optional<Closure> running;
  };

  struct ParameterServer {
    ParameterServerActorHandle actor;
    std::string name;
  };

  /// A finished attempt whose commits are not all acknowledged yet.
  struct Committing {
    Closure closure;
    std::string worker_name;
    std::size_t pending = 0; ///< commits not yet answered
    std::optional<std::pair<Errc, std::string>> failure; ///< the first refused commit
  };

  struct FirstError {
    Errc code;
    std::string message;
  };

  // -- message handlers ---------------------------------------------------------

  void on_schedule(std::shared_ptr<CoordinatorCallSlot> slot);
  void on_join(std::shared_ptr<CoordinatorCallSlot> slot);
  void on_done(std::shared_ptr<CoordinatorCallSlot> slot);
  void on_add_worker(CoordinatorAddWorkerMsg& msg);
  void on_worker_lost(const caf::actor_addr& worker, const std::string& reason);
  void on_finished(ClosureFinishedMsg& msg, const caf::actor_addr& sender);
  void on_no_worker_deadline(uint64_t generation);
  void on_ps_lost(int64_t ps_task, const std::string& reason);
  void on_commit_answered(ClosureId id, std::size_t ps_task, const caf::error& err);

  // -- state machine ------------------------------------------------------------

  /// Moves everything that can move: raises a pending error, admits blocked
  /// schedules, dispatches, answers joins, arms the no-worker deadline.
  void advance();
  void dispatch();
  void record_error(Errc code, std::string message);
  void cancel_queued();
  void enqueue(CoordinatorCallSlot& slot);
  void notify_listeners(const Closure& closure, AttemptOutcome outcome, const std::string& reason);
  /// Commits `closure`'s current attempt where it staged, or settles it at
  /// once when it staged nothing.
  void commit(Closure closure, const std::string& worker_name, const std::vector<uint32_t>& staged_per_server);
  /// Discards `closure`'s current attempt at every parameter server.
  void abort_everywhere(const Closure& closure);
  /// The smallest closure id not yet resolved (queued, running, committing),
  /// capped by `also_unresolved` (a closure being handled right now).
  [[nodiscard]] ClosureId resolved_below(ClosureId also_unresolved) const noexcept;
  [[nodiscard]] std::string ps_name(int64_t ps_task) const;
  [[nodiscard]] bool any_worker_alive() const noexcept;
  [[nodiscard]] bool any_running() const noexcept;
  [[nodiscard]] std::string no_worker_message() const;
  [[nodiscard]] Worker* find_worker(const caf::actor_addr& addr) noexcept;

  static void answer_error(CoordinatorCallSlot& slot, Errc code, std::string message);
  static void settle(ClosureOutcome& outcome, RemoteValueStatus status, Errc code, std::string message);

  CoordinatorOptions options_;
  ClosureId next_id_ = 0;
  std::deque<Closure> queue_;
  std::vector<Worker> workers_;
  /// Where dispatch() starts looking for an idle worker: after the last one
  /// given a closure, so that work spreads over every idle worker even when
  /// each closure ends before the next is scheduled.
  std::size_t next_worker_ = 0;
  std::vector<ParameterServer> servers_;
  std::map<ClosureId, Committing> committing_;
  /// Set once a parameter server was lost: every call fails with it from then on.
  std::optional<FirstError> ps_lost_;
  std::deque<std::shared_ptr<CoordinatorCallSlot>> blocked_schedules_;
  std::deque<std::shared_ptr<CoordinatorCallSlot>> joins_;
  /// done() calls that came while an error waits for in-flight closures.
  std::deque<std::shared_ptr<CoordinatorCallSlot>> dones_;
  std::optional<FirstError> error_;
  uint64_t deadline_generation_ = 0;
  bool deadline_armed_ = false;
  /// The no-worker deadline passed and no worker joined since: schedule fails at once.
  bool no_worker_expired_ = false;
  std::vector<std::string> lost_workers_; ///< "name (reason)", for the no-worker message
  FunctionRecorder recorder_;

  [[nodiscard]] int64_t now_ns();
  /// Logs the flight recorder's block (and appends it to TROUPE_FLIGHT_RECORDER_DIR's file).
  void dump_flight_record(const std::string& why);
};

} // namespace troupe::internal
