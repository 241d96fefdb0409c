#include <troupe/actors/ps/worker_actor.hpp>

#include <chrono>

#include <caf/all.hpp>

#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/timeline.hpp>

#include <utility>

namespace troupe::internal {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ", ") + ("'" + n + "'");
  return out.empty() ? "none" : out;
}

/// The coordinator that sent `msg`, which answers to its typed interface
/// (the message carries it as a plain actor, as it crosses processes).
CoordinatorActorHandle coordinator_of(const RunClosureMsg& msg) {
  return caf::actor_cast<CoordinatorActorHandle>(msg.coordinator);
}

/// The answer for an attempt that could not run.
ClosureFinishedMsg failed_attempt(const RunClosureMsg& msg, Errc code, std::string error) {
  ClosureFinishedMsg reply;
  reply.id = msg.id;
  reply.attempt = msg.attempt;
  reply.ok = false;
  reply.code = code;
  reply.error = std::move(error);
  return reply;
}

/// The function's code runs in the default context (no strategy frame), and
/// with this worker's context current, whatever the thread had installed.
class ClosureGuard {
public:
  explicit ClosureGuard(WorkerContext* context) : frame_(current_frame()), context_(context) {
    set_current_frame(nullptr);
  }
  ~ClosureGuard() { set_current_frame(frame_); }
  ClosureGuard(const ClosureGuard&) = delete;
  ClosureGuard& operator=(const ClosureGuard&) = delete;

private:
  void* frame_;
  WorkerContext::Installer context_;
};

} // namespace

WorkerActor::WorkerActor(caf::actor_config& cfg, std::shared_ptr<WorkerContext> context, std::size_t stack_bytes)
  : WorkerActorHandle::base(cfg), FiberHost(stack_bytes, [this] {
      run_closure(*running_);
      finished_ = true;
    }),
    context_(std::move(context)) {
}

WorkerActor::~WorkerActor() = default;

int64_t WorkerActor::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock().now().time_since_epoch()).count();
}

WorkerActor::behavior_type WorkerActor::make_behavior() {
  // No handler lets an exception escape: it would kill this actor and leave
  // its closure to the coordinator's loss detection.
  return {
    [this](RunClosureMsg& msg) { start(msg); },
    [this](FiberWakeMsg) {
      if (unpark())
        continue_closure();
    },
    [this](WorkerZombieMsg) {
      zombie_ = true;
      if (!running_)
        quit();
    },
  };
}

void WorkerActor::on_exit() {
  // Unwinds a suspended function's stack while this actor still exists.
  drop_fiber();
}

void WorkerActor::start(RunClosureMsg& msg) {
  if (zombie_)
    return;
  if (running_) {
    // The coordinator hands a worker one closure at a time: a second one is
    // a broken protocol, answered as that closure's failure.
    send(coordinator_of(msg), failed_attempt(msg, Errc::internal,
                                         "worker " + context_->name() + " got closure " + std::to_string(msg.id)
                                           + " while running closure " + std::to_string(running_->msg.id)));
    return;
  }
  try {
    ensure_fiber();
  } catch (const std::exception& e) {
    send(coordinator_of(msg), failed_attempt(msg, Errc::internal,
                                         "worker " + context_->name() + " cannot create its fiber ("
                                           + std::to_string(stack_bytes())
                                           + " bytes of stack, TROUPE_FIBER_STACK_KIB): " + e.what()));
    return;
  }
  context_->begin_attempt(AttemptId{msg.id, msg.attempt});
  context_->record_start(msg.id, msg.attempt, msg.spec.function_name, now_ns());
  running_.emplace();
  running_->msg = std::move(msg);
  finished_ = false;
  continue_closure();
}

void WorkerActor::run_closure(Running& running) {
  const auto& spec = running.msg.spec;
  const auto began = clock().now();
  // On the timeline: each function on its worker's track, whatever its outcome.
  struct TraceSpan {
    WorkerActor& self;
    const Running& running;
    caf::actor_clock::time_point began;
    ~TraceSpan() {
      auto& timeline = Timeline::process();
      if (!timeline.on())
        return;
      const auto& ctx = *self.context_;
      const auto& msg = running.msg;
      timeline.span(ctx.runtime().trace_pid(), Timeline::functions_track(ctx.worker_index()), msg.spec.function_name,
                    "function", began, self.clock().now(),
                    "\"closure\": " + std::to_string(msg.id) + ", \"attempt\": " + std::to_string(msg.attempt)
                      + ", \"worker\": " + Timeline::quoted(ctx.name())
                      + (running.ok ? std::string{} : ", \"error\": " + Timeline::quoted(running.error)));
    }
  } trace{*this, running, began};
  try {
    auto function = context_->runtime().functions().find(spec.function_name);
    if (!function && !context_->program_ready().done()) {
      // Across processes the chief may send a closure before this process's
      // program has registered its functions: wait until it serves.
      context_->runtime().wait(context_->program_ready(), "this worker's program to call Runtime::serve()");
      function = context_->runtime().functions().find(spec.function_name);
    }
    if (!function)
      fail(Errc::not_found, "function '" + spec.function_name + "' is not registered in worker "
                              + context_->name() + " (registered: " + joined(context_->runtime().functions().names())
                              + "); call troupe::remote_function(\"" + spec.function_name
                              + "\", fn) in every process of the cluster before the coordinator schedules it");
    running.value = function->invoke(spec.args);
    running.ok = true;
  } catch (const boost::context::detail::forced_unwind&) {
    throw; // the actor is going away: let Boost unwind this stack
  } catch (const Error& e) {
    running.ok = false;
    running.code = e.code();
    running.error = e.what();
  } catch (const std::exception& e) {
    running.ok = false;
    running.code = Errc::unknown;
    running.error = e.what();
  } catch (...) {
    running.ok = false;
    running.code = Errc::unknown;
    running.error = "a non-standard exception";
  }
}

void WorkerActor::continue_closure() {
  const bool yielded = resume_fiber(caf::actor_cast<caf::actor>(this), [this](auto switch_in) {
    ClosureGuard guard(context_.get());
    switch_in();
  });
  if (!yielded)
    return; // waits for a completion: FiberWakeMsg continues
  if (finished_) {
    auto running = std::move(*running_);
    running_.reset();
    report(running);
  }
}

void WorkerActor::report(Running& running) {
  context_->record_end(running.msg.id, running.msg.attempt, running.ok ? "done" : "failed (" + running.error + ")",
                       now_ns());
  if (zombie_) {
    quit();
    return;
  }
  ClosureFinishedMsg reply;
  reply.id = running.msg.id;
  reply.attempt = running.msg.attempt;
  reply.ok = running.ok;
  reply.value = std::move(running.value);
  reply.code = running.code;
  reply.error = std::move(running.error);
  reply.staged_per_server = context_->staged_per_server();
  send(coordinator_of(running.msg), std::move(reply));
}

} // namespace troupe::internal
