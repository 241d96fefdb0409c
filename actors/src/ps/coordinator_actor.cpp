#include <troupe/actors/ps/coordinator_actor.hpp>

#include <troupe/actors/runtime/request_error.hpp>

#include <algorithm>
#include <chrono>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>

#include <troupe/collectives/flight_recorder.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {

std::string describe(const ClosureSpec& spec, ClosureId id) {
  return "function '" + spec.function_name + "' (closure " + std::to_string(id) + ")";
}

/// The text a parameter server put in its error, or CAF's rendering of others
/// (a timeout, a server that exited).
std::string error_text(caf::actor_system& system, const caf::error& err) {
  if (err.category() == caf::atom("troupe") && err.context().match_elements<std::string>())
    return err.context().get_as<std::string>(0);
  return system.render(err);
}


} // namespace

// -- CoordinatorActor -------------------------------------------------------------

CoordinatorActor::CoordinatorActor(caf::actor_config& cfg, CoordinatorOptions options)
  : CoordinatorActorHandle::base(cfg), options_(std::move(options)), recorder_(knobs().flight_recorder_entries) {
  options_.queue_capacity = std::max<std::size_t>(options_.queue_capacity, 1);
  for (std::size_t i = 0; i < options_.parameter_servers.size(); ++i)
    servers_.push_back(ParameterServer{options_.parameter_servers[i], i < options_.parameter_server_names.size()
                                                                        ? options_.parameter_server_names[i]
                                                                        : "/job:ps/replica:0/task:" + std::to_string(i)});
  // Here rather than in make_behavior: a server that is already gone gets
  // its down message queued at once (CAF 0.17), and doing it before the
  // actor runs puts it ahead of every call, so even the first join sees it.
  for (const auto& server : servers_)
    monitor(server.actor);
}

CoordinatorActor::behavior_type CoordinatorActor::make_behavior() {
  set_down_handler([this](caf::down_msg& msg) {
    const std::string reason = "its actor terminated (" + to_string(msg.reason) + ")";
    for (std::size_t i = 0; i < servers_.size(); ++i)
      if (servers_[i].actor.address() == msg.source) {
        on_ps_lost(static_cast<int64_t>(i), reason);
        return;
      }
    on_worker_lost(msg.source, reason);
  });
  return {
    [this](CoordinatorScheduleMsg& msg) { on_schedule(std::move(msg.slot)); },
    [this](CoordinatorJoinMsg& msg) { on_join(std::move(msg.slot)); },
    [this](CoordinatorDoneMsg& msg) { on_done(std::move(msg.slot)); },
    [this](CoordinatorAddWorkerMsg& msg) { on_add_worker(msg); },
    [this](CoordinatorWorkerLostMsg& msg) { on_worker_lost(msg.worker.address(), msg.reason); },
    [this](ClosureFinishedMsg& msg) { on_finished(msg, caf::actor_cast<caf::actor_addr>(current_sender())); },
    [this](const CoordinatorNoWorkerDeadlineMsg& msg) { on_no_worker_deadline(msg.generation); },
    [this](const CoordinatorPsLostMsg& msg) {
      on_ps_lost(msg.ps_task, msg.reason);
    },
  };
}

void CoordinatorActor::on_exit() {
  const std::string why = " was cancelled because its ClusterCoordinator was destroyed first";
  for (auto& closure : queue_)
    settle(*closure.outcome, RemoteValueStatus::cancelled, Errc::cancelled, describe(closure.spec, closure.id) + why);
  queue_.clear();
  for (auto& worker : workers_)
    if (worker.running) {
      settle(*worker.running->outcome, RemoteValueStatus::cancelled, Errc::cancelled,
             describe(worker.running->spec, worker.running->id) + why);
      worker.running.reset();
    }
  for (auto& [id, committing] : committing_)
    settle(*committing.closure.outcome, RemoteValueStatus::cancelled, Errc::cancelled,
           describe(committing.closure.spec, id) + " ran, but" + why + " before its commit was acknowledged");
  committing_.clear();
  for (auto* calls : {&blocked_schedules_, &joins_, &dones_}) {
    for (auto& slot : *calls)
      answer_error(*slot, Errc::cancelled, "the ClusterCoordinator was destroyed during this call");
    calls->clear();
  }
}

// -- message handlers -----------------------------------------------------------

void CoordinatorActor::on_schedule(std::shared_ptr<CoordinatorCallSlot> slot) {
  if (ps_lost_) {
    answer_error(*slot, ps_lost_->code, "schedule of " + slot->spec.function_name + " failed: " + ps_lost_->message);
    return;
  }
  if (no_worker_expired_ && !any_worker_alive()) {
    answer_error(*slot, Errc::peer_lost, "schedule of " + slot->spec.function_name + " failed: " + no_worker_message());
    return;
  }
  blocked_schedules_.push_back(std::move(slot));
  advance();
}

void CoordinatorActor::on_join(std::shared_ptr<CoordinatorCallSlot> slot) {
  if (ps_lost_) {
    answer_error(*slot, ps_lost_->code, "join failed: " + ps_lost_->message);
    return;
  }
  joins_.push_back(std::move(slot));
  advance();
}

void CoordinatorActor::on_done(std::shared_ptr<CoordinatorCallSlot> slot) {
  if (ps_lost_) {
    answer_error(*slot, ps_lost_->code, "done failed: " + ps_lost_->message);
    return;
  }
  if (error_) { // raised once no closure runs, like join
    dones_.push_back(std::move(slot));
    advance();
    return;
  }
  slot->finished = queue_.empty() && !any_running() && blocked_schedules_.empty();
  slot->answered.set();
}

void CoordinatorActor::on_add_worker(CoordinatorAddWorkerMsg& msg) {
  if (!msg.worker)
    return;
  for (const auto& w : workers_)
    if (w.actor == msg.worker && w.alive)
      return; // registered twice: one worker
  monitor(msg.worker);
  workers_.push_back(Worker{std::move(msg.worker), std::move(msg.name), true, std::nullopt});
  no_worker_expired_ = false;
  advance();
}

void CoordinatorActor::on_worker_lost(const caf::actor_addr& addr, const std::string& reason) {
  Worker* worker = find_worker(addr);
  if (worker == nullptr || !worker->alive)
    return;
  worker->alive = false;
  demonitor(worker->actor);
  lost_workers_.push_back(worker->name + " (" + reason + ")");
  if (worker->running) {
    Closure closure = std::move(*worker->running);
    worker->running.reset();
    const std::string why = "worker " + worker->name + " was lost: " + reason;
    recorder_.ended(closure.id, closure.attempt, "lost with its worker", now_ns());
    dump_flight_record(why);
    // Its updates are discarded before the closure can run again, and the
    // attempt can neither stage nor commit anywhere afterwards.
    abort_everywhere(closure);
    notify_listeners(closure, AttemptOutcome::aborted, why);
    if (error_) // nothing is rerun once an error waits to be raised
      settle(*closure.outcome, RemoteValueStatus::cancelled, Errc::cancelled,
             describe(closure.spec, closure.id) + " was cancelled because an earlier function failed: " +
               error_->message + " (and its " + why + "); reschedule it");
    else
      queue_.push_front(std::move(closure)); // TF's put_back: first to run again
  }
  advance();
}

void CoordinatorActor::on_finished(ClosureFinishedMsg& msg, const caf::actor_addr& sender) {
  Worker* worker = find_worker(sender);
  // Only the current attempt on a live worker counts: a lost or frozen
  // worker's late answer is stale, its attempt already told aborted.
  if (worker == nullptr || !worker->alive || !worker->running || worker->running->id != msg.id ||
      worker->running->attempt != msg.attempt)
    return;
  Closure closure = std::move(*worker->running);
  worker->running.reset(); // idle from now on, even while the commits are out
  recorder_.ended(closure.id, closure.attempt, msg.ok ? "done" : "failed (" + msg.error + ")", now_ns());
  if (msg.ok) {
    closure.outcome->value = std::move(msg.value);
    commit(std::move(closure), worker->name, msg.staged_per_server);
  } else {
    std::string message = describe(closure.spec, closure.id) + " failed on worker " + worker->name + ": " + msg.error;
    abort_everywhere(closure); // all or nothing: none of its updates apply
    notify_listeners(closure, AttemptOutcome::failed, msg.error);
    settle(*closure.outcome, RemoteValueStatus::failed, msg.code, message);
    dump_flight_record(message);
    record_error(msg.code, std::move(message));
  }
  advance();
}

void CoordinatorActor::on_ps_lost(int64_t ps_task, const std::string& reason) {
  if (ps_lost_)
    return; // the first loss is the one reported
  ps_lost_ = FirstError{Errc::peer_lost, "parameter server " + ps_name(ps_task) + " was lost: " + reason +
                                           "; the cluster cannot go on without it: restart it and restore the "
                                           "variables from a checkpoint"};
  const std::string& why = ps_lost_->message;
  dump_flight_record(why);
  auto fail_closure = [&](const Closure& closure) {
    settle(*closure.outcome, RemoteValueStatus::failed, Errc::peer_lost,
           describe(closure.spec, closure.id) + " did not finish: " + why);
  };
  for (auto& closure : queue_)
    fail_closure(closure);
  queue_.clear();
  for (auto& worker : workers_)
    if (worker.running) { // its late answer finds nothing running and is ignored
      fail_closure(*worker.running);
      worker.running.reset();
    }
  // Their commits may have applied at some servers; the checkpoint restore decides.
  for (auto& [id, committing] : committing_)
    fail_closure(committing.closure);
  committing_.clear();
  for (auto& slot : blocked_schedules_)
    answer_error(*slot, Errc::peer_lost, "schedule of " + slot->spec.function_name + " failed: " + why);
  blocked_schedules_.clear();
  for (auto& slot : joins_)
    answer_error(*slot, Errc::peer_lost, "join failed: " + why);
  joins_.clear();
  for (auto& slot : dones_)
    answer_error(*slot, Errc::peer_lost, "done failed: " + why);
  dones_.clear();
  error_.reset(); // superseded: every call raises the loss from now on
}

void CoordinatorActor::on_commit_answered(ClosureId id, std::size_t ps_task, const caf::error& err) {
  auto it = committing_.find(id);
  if (it == committing_.end())
    return; // settled meanwhile (a lost server, the coordinator's exit)
  Committing& committing = it->second;
  if (err && !committing.failure) {
    const Errc code = request_errc(err);
    std::string message = describe(committing.closure.spec, id) + " ran on worker " + committing.worker_name +
                          " but its commit at parameter server " + ps_name(static_cast<int64_t>(ps_task)) + " failed: " +
                          error_text(system(), err);
    if (code == Errc::timeout)
      message += " (no answer within " + std::to_string(options_.commit_timeout.count()) +
                 " ms; is the server alive? TROUPE_COLLECTIVE_TIMEOUT_SECONDS sets the deadline)";
    message += "; its updates at other servers may have applied";
    committing.failure = std::make_pair(code, std::move(message));
  }
  if (--committing.pending > 0)
    return;
  Committing done = std::move(committing);
  committing_.erase(it);
  if (done.failure) {
    notify_listeners(done.closure, AttemptOutcome::failed, done.failure->second);
    settle(*done.closure.outcome, RemoteValueStatus::failed, done.failure->first, done.failure->second);
    record_error(done.failure->first, std::move(done.failure->second));
  } else {
    notify_listeners(done.closure, AttemptOutcome::finished, {});
    settle(*done.closure.outcome, RemoteValueStatus::ready, Errc::internal, {});
  }
  advance();
}

void CoordinatorActor::on_no_worker_deadline(uint64_t generation) {
  if (generation != deadline_generation_ || !deadline_armed_)
    return;
  deadline_armed_ = false;
  if (any_worker_alive())
    return;
  no_worker_expired_ = true;
  const std::string why = no_worker_message();
  // Closures that could not run fail like a function that raised: a join
  // waiting now gets the error, otherwise the next join, done or schedule does.
  const bool closures_failed = !queue_.empty();
  for (auto& closure : queue_)
    settle(*closure.outcome, RemoteValueStatus::failed, Errc::peer_lost,
           describe(closure.spec, closure.id) + " could not run: " + why);
  queue_.clear();
  for (auto& slot : blocked_schedules_)
    answer_error(*slot, Errc::peer_lost, "schedule of " + slot->spec.function_name + " failed: " + why);
  blocked_schedules_.clear();
  for (auto& slot : joins_)
    answer_error(*slot, Errc::peer_lost, "join failed: " + why);
  if (closures_failed && joins_.empty())
    record_error(Errc::peer_lost, "closures could not run: " + why);
  joins_.clear();
  advance();
}

// -- state machine --------------------------------------------------------------

void CoordinatorActor::advance() {
  if (ps_lost_)
    return; // nothing runs again; every call was answered with the loss
  // A recorded error is raised once no closure runs (TF's _cancel_all_closures
  // waits for in-flight closures), to the oldest waiting call, then cleared.
  if (error_ && !any_running()) {
    std::deque<std::shared_ptr<CoordinatorCallSlot>>* calls = !blocked_schedules_.empty() ? &blocked_schedules_
                                                              : !joins_.empty()           ? &joins_
                                                              : !dones_.empty()           ? &dones_
                                                                                          : nullptr;
    if (calls != nullptr) {
      auto slot = std::move(calls->front());
      calls->pop_front();
      auto error = std::move(*error_);
      error_.reset();
      answer_error(*slot, error.code, std::move(error.message));
    }
  }
  if (!error_) {
    for (auto& slot : dones_) { // came while the error waited; another call raised it
      slot->finished = false;
      slot->answered.set();
    }
    dones_.clear();
    // Dispatching frees queue slots; blocked schedules take them in order.
    dispatch();
    while (!blocked_schedules_.empty() && queue_.size() < options_.queue_capacity) {
      enqueue(*blocked_schedules_.front());
      blocked_schedules_.pop_front();
      dispatch();
    }
    if (queue_.empty() && !any_running() && blocked_schedules_.empty()) {
      for (auto& slot : joins_)
        slot->answered.set();
      joins_.clear();
    }
  }
  const bool waiting = !queue_.empty() || !blocked_schedules_.empty() || !joins_.empty();
  if (waiting && !any_worker_alive() && !deadline_armed_) {
    deadline_armed_ = true;
    delayed_send(this, std::chrono::duration_cast<caf::timespan>(options_.no_worker_timeout),
                 CoordinatorNoWorkerDeadlineMsg{++deadline_generation_});
  } else if (deadline_armed_ && any_worker_alive()) {
    deadline_armed_ = false; // the pending timer's generation is now stale
    ++deadline_generation_;
  }
}

void CoordinatorActor::dispatch() {
  const auto n = workers_.size();
  const auto start = next_worker_;
  for (std::size_t k = 0; k < n && !queue_.empty(); ++k) {
    const auto i = (start + k) % n;
    Worker& worker = workers_[i];
    if (!worker.alive || worker.running)
      continue;
    next_worker_ = i + 1;
    Closure closure = std::move(queue_.front());
    queue_.pop_front();
    ++closure.attempt;
    // Workers are plain actors (a typed actor may only send() to typed ones);
    // the message names the coordinator to answer.
    caf::anon_send(worker.actor, RunClosureMsg{closure.id, closure.attempt, static_cast<int>(i), closure.spec,
                                               caf::actor_cast<caf::actor>(this)});
    recorder_.dispatched(closure.id, closure.attempt, closure.spec.function_name, worker.name, now_ns());
    worker.running = std::move(closure);
  }
}

int64_t CoordinatorActor::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock().now().time_since_epoch()).count();
}

void CoordinatorActor::dump_flight_record(const std::string& why) {
  if (recorder_.size() == 0) // off, or no function ran yet
    return;
  const auto block = recorder_.render(why, now_ns(), "chief:0");
  TROUPE_LOG(warning, "net") << block;
  if (auto err = write_flight_record(knobs().flight_recorder_dir, "chief:0", block); !err.empty())
    TROUPE_LOG(warning, "net") << "flight recorder (TROUPE_FLIGHT_RECORDER_DIR): " << err;
}

void CoordinatorActor::record_error(Errc code, std::string message) {
  if (error_)
    return; // only the first error is raised; later ones stay on their RemoteValues
  error_ = FirstError{code, std::move(message)};
  cancel_queued();
}

void CoordinatorActor::cancel_queued() {
  for (auto& closure : queue_)
    settle(*closure.outcome, RemoteValueStatus::cancelled, Errc::cancelled,
           describe(closure.spec, closure.id) + " was cancelled because an earlier function failed: " +
             error_->message + "; reschedule it");
  queue_.clear();
}

void CoordinatorActor::enqueue(CoordinatorCallSlot& slot) {
  Closure closure;
  closure.id = ++next_id_;
  closure.spec = std::move(slot.spec);
  closure.outcome = std::make_shared<ClosureOutcome>();
  slot.id = closure.id;
  slot.outcome = closure.outcome;
  queue_.push_back(std::move(closure));
  slot.answered.set();
}

void CoordinatorActor::commit(Closure closure, const std::string& worker_name,
                              const std::vector<uint32_t>& staged_per_server) {
  std::size_t servers_to_commit = 0;
  for (std::size_t i = 0; i < staged_per_server.size(); ++i) {
    if (staged_per_server[i] == 0)
      continue;
    if (i >= servers_.size()) { // a broken worker: nothing can be committed there
      std::string message = describe(closure.spec, closure.id) + " ran on worker " + worker_name +
                            ", which says it staged " + std::to_string(staged_per_server[i]) +
                            " updates at parameter server task " + std::to_string(i) +
                            ", but the coordinator knows " + std::to_string(servers_.size()) +
                            " parameter servers; every process must get the same cluster spec";
      abort_everywhere(closure);
      notify_listeners(closure, AttemptOutcome::failed, message);
      settle(*closure.outcome, RemoteValueStatus::failed, Errc::data_loss, message);
      record_error(Errc::data_loss, std::move(message));
      return;
    }
    ++servers_to_commit;
  }
  if (servers_to_commit == 0) { // the hot path of a function without updates: no extra round trip
    notify_listeners(closure, AttemptOutcome::finished, {});
    settle(*closure.outcome, RemoteValueStatus::ready, Errc::internal, {});
    return;
  }
  const ClosureId id = closure.id;
  const AttemptId attempt{id, closure.attempt};
  const uint64_t watermark = resolved_below(id);
  committing_.emplace(id, Committing{std::move(closure), worker_name, servers_to_commit, std::nullopt});
  // Every server at once: the commits are independent, so they overlap.
  for (std::size_t i = 0; i < staged_per_server.size(); ++i) {
    if (staged_per_server[i] == 0)
      continue;
    request(servers_[i].actor, std::chrono::duration_cast<caf::timespan>(options_.commit_timeout),
            PsCommitMsg{attempt, staged_per_server[i], watermark})
      .then([this, id, i](const PsCommitReply&) { on_commit_answered(id, i, caf::error{}); },
            [this, id, i](caf::error& err) { on_commit_answered(id, i, err); });
  }
}

void CoordinatorActor::abort_everywhere(const Closure& closure) {
  const uint64_t watermark = resolved_below(closure.id);
  for (const auto& server : servers_)
    // The answer (how many updates were dropped) is not needed: an abort that
    // does not arrive leaves held updates that the watermark drops later, and
    // a lost server is reported by its down message.
    request(server.actor, std::chrono::duration_cast<caf::timespan>(options_.commit_timeout),
            PsAbortMsg{AttemptId{closure.id, closure.attempt}, watermark})
      .then([](uint32_t) {}, [](caf::error&) {});
}

ClosureId CoordinatorActor::resolved_below(ClosureId also_unresolved) const noexcept {
  ClosureId lowest = std::min<ClosureId>(also_unresolved, next_id_ + 1);
  for (const auto& closure : queue_)
    lowest = std::min(lowest, closure.id);
  for (const auto& worker : workers_)
    if (worker.running)
      lowest = std::min(lowest, worker.running->id);
  if (!committing_.empty())
    lowest = std::min(lowest, committing_.begin()->first);
  return lowest;
}

std::string CoordinatorActor::ps_name(int64_t ps_task) const {
  if (ps_task >= 0 && static_cast<std::size_t>(ps_task) < servers_.size())
    return servers_[static_cast<std::size_t>(ps_task)].name;
  return "task " + std::to_string(ps_task) + " (not one of the coordinator's " + std::to_string(servers_.size()) +
         " parameter servers)";
}

void CoordinatorActor::notify_listeners(const Closure& closure, AttemptOutcome outcome, const std::string& reason) {
  for (const auto& listener : options_.attempt_listeners)
    caf::anon_send(listener, ClosureAttemptEndedMsg{closure.id, closure.attempt, outcome, reason});
}

bool CoordinatorActor::any_worker_alive() const noexcept {
  return std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.alive; });
}

bool CoordinatorActor::any_running() const noexcept {
  // A closure whose commits are out counts: join waits for it, and its
  // commit may still fail.
  return !committing_.empty() ||
         std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.running.has_value(); });
}

std::string CoordinatorActor::no_worker_message() const {
  std::string out = "no worker is alive";
  if (workers_.empty()) {
    out += ": no worker joined the coordinator";
  } else {
    out += "; lost:";
    for (const auto& lost : lost_workers_)
      out += " " + lost + ";";
  }
  out += " (waited " + std::to_string(options_.no_worker_timeout.count()) +
         " ms for one to join; start or restart worker tasks)";
  return out;
}

CoordinatorActor::Worker* CoordinatorActor::find_worker(const caf::actor_addr& addr) noexcept {
  // The newest entry first: a restarted worker may reuse nothing, but a
  // re-registered actor's live entry is the last one.
  for (auto it = workers_.rbegin(); it != workers_.rend(); ++it)
    if (it->actor.address() == addr)
      return &*it;
  return nullptr;
}

void CoordinatorActor::answer_error(CoordinatorCallSlot& slot, Errc code, std::string message) {
  slot.failed = true;
  slot.code = code;
  slot.error = std::move(message);
  slot.answered.set();
}

void CoordinatorActor::settle(ClosureOutcome& outcome, RemoteValueStatus status, Errc code, std::string message) {
  outcome.status = status;
  outcome.code = code;
  outcome.error = std::move(message);
  outcome.done.set();
}

} // namespace troupe::internal
