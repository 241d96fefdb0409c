#include <troupe/actors/replicas/replica_actor.hpp>

#include <troupe/actors/fibers/fiber_collective.hpp>

#include <caf/all.hpp>

#include <troupe/core/hop_trace.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/timeline.hpp>

#include <utility>

namespace troupe::internal {

namespace {

// The frame and log context of the running replica, installed around each
// resume and restored afterwards (the fiber may resume on another thread).
class FrameGuard {
public:
  FrameGuard(void* frame, int replica) : frame_(current_frame()), replica_(log_context().replica) {
    set_current_frame(frame);
    log_context().replica = replica;
  }
  ~FrameGuard() {
    set_current_frame(frame_);
    log_context().replica = replica_;
  }
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;

private:
  void* frame_;
  int replica_;
};

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

} // namespace

ReplicaActor::ReplicaActor(caf::actor_config& cfg, ReplicaSetup setup)
  : ReplicaActorHandle::base(cfg), FiberHost(setup.stack_bytes, [this] { run_function(); }),
    setup_(std::move(setup)) {
}

ReplicaActor::~ReplicaActor() = default;

ReplicaActor::behavior_type ReplicaActor::make_behavior() {
  // No handler lets an exception escape: it would kill this actor (CAF-NOTES
  // §7.3) and leave the run waiting for it forever.
  return {
    [this](RunMsg& msg) { start_run(std::move(msg.job)); },
    [this](CollectiveDoneMsg& msg) { on_done(msg); },
    [this](FiberWakeMsg) {
      if (unpark())
        continue_function();
    },
    [this](ReducePartMsg& msg) {
      std::string failure;
      try {
        msg.plan->run_part(msg.part);
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "a non-standard exception";
      }
      // The plan holds every replica's inputs: once the group has all parts,
      // an in-place caller may hand them back as the only handles.
      msg.plan.reset();
      send(setup_.group, PartDoneMsg{msg.key, msg.part, std::move(failure)});
    },
  };
}

void ReplicaActor::on_exit() {
  // Destroying a suspended fiber unwinds its stack (forced_unwind), running the
  // destructors of the function's locals while this actor is still alive.
  drop_fiber();
  // A run still waiting for this replica learns that it is gone.
  if (auto job = std::move(job_))
    job->replica_done(setup_.replica,
                      std::make_exception_ptr(Error(Errc::cancelled, "replica " + std::to_string(setup_.replica)
                                                                       + " was stopped during strategy.run")));
}

void ReplicaActor::run_function() {
  try {
    job_->body(setup_.replica);
    // Collectives handed off to GPUs without waiting must be on their
    // streams before the run reports success.
    settle_handoffs();
    job_error_ = nullptr;
  } catch (const boost::context::detail::forced_unwind&) {
    throw; // the actor is going away: let Boost unwind this stack
  } catch (...) {
    drop_handoffs();
    job_error_ = std::current_exception();
  }
  finished_ = true;
}

void ReplicaActor::start_run(std::shared_ptr<RunJob> job) {
  if (job_) {
    // Only reachable through misuse (strategy.run from inside the replicas'
    // own run); the running job keeps going, the new one fails.
    job->replica_done(setup_.replica,
                      std::make_exception_ptr(Error(Errc::failed_precondition,
                                                    "strategy.run was called while the same strategy's "
                                                    "previous run is still running")));
    return;
  }
  try {
    ensure_fiber();
  } catch (const std::exception& e) {
    auto error = std::make_exception_ptr(Error(
      Errc::internal, "replica " + std::to_string(setup_.replica) + " cannot create its fiber ("
                        + std::to_string(stack_bytes()) + " bytes of stack, TROUPE_FIBER_STACK_KIB): "
                        + e.what()));
    send(setup_.group, ReplicaFinishedMsg{job->run_id, setup_.replica, 0, describe(error)});
    job->replica_done(setup_.replica, std::move(error));
    return;
  }
  job_ = std::move(job);
  issued_ = 0;
  finished_ = false;
  run_started_ = clock().now();
  continue_function();
}

void ReplicaActor::continue_function() {
  const bool yielded = resume_fiber(caf::actor_cast<caf::actor>(this), [this](auto switch_in) {
    FrameGuard guard(setup_.frame, setup_.replica);
    FiberLocal<WorkerContext>::Installer worker(job_ ? job_->worker : nullptr);
    switch_in();
  });
  if (!yielded)
    return; // waits for a completion: FiberWakeMsg continues
  if (pending_) {
    waiting_for_ = CollectiveKey{setup_.group_id, job_->run_id, issued_++};
    auto fingerprint = CollectiveFingerprint::of(pending_->kind, pending_->op, pending_->axis,
                                                 pending_->tensors);
    trace_hop(Hop::replica_issued, waiting_for_.run);
    send(setup_.group, ContributionMsg{waiting_for_, setup_.replica, std::move(fingerprint),
                                       std::move(pending_)});
    pending_.reset();
    return;
  }
  if (finished_) {
    auto job = std::move(job_);
    auto error = std::move(job_error_);
    if (auto& timeline = Timeline::process(); timeline.on())
      timeline.span(setup_.trace_pid, Timeline::replica_track(setup_.group_id, setup_.replica),
                    "step (strategy.run #" + std::to_string(job->run_id) + ")", "step", run_started_, clock().now(),
                    error ? "\"error\": " + Timeline::quoted(describe(error)) : std::string{});
    send(setup_.group, ReplicaFinishedMsg{job->run_id, setup_.replica, issued_,
                                          error ? describe(error) : std::string{}});
    job->replica_done(setup_.replica, std::move(error));
  }
}

void ReplicaActor::on_done(CollectiveDoneMsg& msg) {
  if (!job_ || msg.key != waiting_for_) {
    TROUPE_LOG(error, "coll") << "replica " << setup_.replica << " got the result of "
                              << to_string(msg.key) << " while "
                              << (job_ ? "waiting for " + to_string(waiting_for_) : std::string("not running"))
                              << "; ignored";
    return;
  }
  trace_hop(Hop::replica_resumed, msg.key.run);
  result_ = std::move(msg.result);
  error_code_ = msg.code;
  error_message_ = std::move(msg.message);
  error_exception_ = std::move(msg.exception);
  continue_function();
}

CollectiveResult ReplicaActor::collective(CollectiveRequest request) {
  if (setup_.stage_gpu_tensors_through_host) {
    // GPU values cross workers through the host's ring here: host copies
    // go in (this fiber waits for them), the results go back to the GPU.
    bool on_gpu = false;
    for (auto& t : request.tensors)
      if (t.valid() && !t.on_host()) {
        t = t.to("CPU:0");
        on_gpu = true;
      }
    auto result = collective_as_is(std::move(request));
    if (on_gpu)
      for (auto& t : result.tensors)
        if (t.valid() && t.on_host())
          t = t.to(setup_.device);
    return result;
  }
  return collective_as_is(std::move(request));
}

CollectiveResult ReplicaActor::collective_as_is(CollectiveRequest request) {
  // merge_call's function runs in the group actor, off this fiber: what it
  // reads of this replica's collectives must be there, so the groups handed
  // off are settled first (its reads would wait for them anyway).
  if (request.kind == CollectiveKind::merge_call)
    settle_handoffs();
  pending_ = std::make_shared<CollectiveRequest>(std::move(request));
  yield_to_actor(); // until CollectiveDoneMsg
  if (!result_) {
    if (error_exception_)
      std::rethrow_exception(std::exchange(error_exception_, nullptr));
    throw CollectiveError(error_code_, error_message_);
  }
  auto result = std::move(*result_);
  result_.reset();
  if (auto plan = std::move(result.on_fiber))
    result.tensors = plan->run(setup_.replica, [this](const Completion& done) {
      if (!done.done())
        await(done);
    });
  return result;
}

} // namespace troupe::internal
