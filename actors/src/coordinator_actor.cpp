#include <troupe/actors/coordinator_actor.hpp>

#include <algorithm>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>

#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {

std::string describe(const ClosureSpec& spec, ClosureId id) {
  return "function '" + spec.function_name + "' (closure " + std::to_string(id) + ")";
}

caf::error too_long(const char* what, std::size_t size, std::size_t limit) {
  return caf::make_error(Errc::data_loss, std::string{what} + " of " + std::to_string(size) +
                                            " bytes exceeds the limit of " + std::to_string(limit) + " bytes");
}

template <class Container>
caf::error save_bytes(caf::serializer& sink, Container& x, std::size_t limit, const char* what) {
  auto size = x.size();
  if (size > limit)
    return too_long(what, size, limit);
  if (auto err = sink.begin_sequence(size))
    return err;
  if (size > 0)
    if (auto err = sink.apply_raw(size, x.data()))
      return err;
  return sink.end_sequence();
}

template <class Container>
caf::error load_bytes(caf::deserializer& source, Container& x, std::size_t limit, const char* what) {
  std::size_t size = 0;
  if (auto err = source.begin_sequence(size))
    return err;
  // Checked before allocating: a corrupt length must not become a huge buffer.
  if (size > limit)
    return too_long(what, size, limit);
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source))
    if (binary->remaining() < size)
      return caf::make_error(Errc::data_loss, "cannot deserialize " + std::string{what} + ": it needs " +
                                                std::to_string(size) + " bytes but only " +
                                                std::to_string(binary->remaining()) + " remain");
  Container result(size, typename Container::value_type{});
  if (size > 0)
    if (auto err = source.apply_raw(size, result.data()))
      return err;
  if (auto err = source.end_sequence())
    return err;
  x = std::move(result);
  return caf::none;
}

} // namespace

// -- wire messages ----------------------------------------------------------------

caf::error save_bounded(caf::serializer& sink, std::string& x, std::size_t limit, const char* what) {
  return save_bytes(sink, x, limit, what);
}

caf::error save_bounded(caf::serializer& sink, std::vector<uint8_t>& x, std::size_t limit, const char* what) {
  return save_bytes(sink, x, limit, what);
}

caf::error load_bounded(caf::deserializer& source, std::string& x, std::size_t limit, const char* what) {
  return load_bytes(source, x, limit, what);
}

caf::error load_bounded(caf::deserializer& source, std::vector<uint8_t>& x, std::size_t limit, const char* what) {
  return load_bytes(source, x, limit, what);
}

caf::error unknown_enum_value(const char* what, unsigned value) {
  return caf::make_error(Errc::data_loss, "cannot deserialize " + std::string{what} + ": unknown value " +
                                            std::to_string(value) + " (a newer or corrupt peer)");
}

void add_coordinator_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe_coordinator>();
}

// -- CoordinatorActor -------------------------------------------------------------

CoordinatorActor::CoordinatorActor(caf::actor_config& cfg, CoordinatorOptions options)
  : caf::event_based_actor(cfg), options_(std::move(options)) {
  options_.queue_capacity = std::max<std::size_t>(options_.queue_capacity, 1);
}

caf::behavior CoordinatorActor::make_behavior() {
  set_down_handler([this](caf::down_msg& msg) {
    on_worker_lost(msg.source, "its actor terminated (" + to_string(msg.reason) + ")");
  });
  return {
    [this](CoordinatorScheduleMsg& msg) { on_schedule(std::move(msg.slot)); },
    [this](CoordinatorJoinMsg& msg) { on_join(std::move(msg.slot)); },
    [this](CoordinatorDoneMsg& msg) { on_done(std::move(msg.slot)); },
    [this](CoordinatorAddWorkerMsg& msg) { on_add_worker(msg); },
    [this](CoordinatorWorkerLostMsg& msg) { on_worker_lost(msg.worker.address(), msg.reason); },
    [this](ClosureFinishedMsg& msg) { on_finished(msg, caf::actor_cast<caf::actor_addr>(current_sender())); },
    [this](const CoordinatorNoWorkerDeadlineMsg& msg) { on_no_worker_deadline(msg.generation); },
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
  for (auto* calls : {&blocked_schedules_, &joins_, &dones_}) {
    for (auto& slot : *calls)
      answer_error(*slot, Errc::cancelled, "the ClusterCoordinator was destroyed during this call");
    calls->clear();
  }
}

// -- message handlers -----------------------------------------------------------

void CoordinatorActor::on_schedule(std::shared_ptr<CoordinatorCallSlot> slot) {
  if (no_worker_expired_ && !any_worker_alive()) {
    answer_error(*slot, Errc::peer_lost, "schedule of " + slot->spec.function_name + " failed: " + no_worker_message());
    return;
  }
  blocked_schedules_.push_back(std::move(slot));
  advance();
}

void CoordinatorActor::on_join(std::shared_ptr<CoordinatorCallSlot> slot) {
  joins_.push_back(std::move(slot));
  advance();
}

void CoordinatorActor::on_done(std::shared_ptr<CoordinatorCallSlot> slot) {
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
  worker->running.reset();
  if (msg.ok) {
    closure.outcome->value = std::move(msg.value);
    notify_listeners(closure, AttemptOutcome::finished, {});
    settle(*closure.outcome, RemoteValueStatus::ready, Errc::internal, {});
  } else {
    std::string message = describe(closure.spec, closure.id) + " failed on worker " + worker->name + ": " + msg.error;
    notify_listeners(closure, AttemptOutcome::failed, msg.error);
    settle(*closure.outcome, RemoteValueStatus::failed, msg.code, message);
    record_error(msg.code, std::move(message));
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
  for (std::size_t i = 0; i < workers_.size() && !queue_.empty(); ++i) {
    Worker& worker = workers_[i];
    if (!worker.alive || worker.running)
      continue;
    Closure closure = std::move(queue_.front());
    queue_.pop_front();
    ++closure.attempt;
    send(worker.actor,
         RunClosureMsg{closure.id, closure.attempt, static_cast<int>(i), closure.spec, caf::actor_cast<caf::actor>(this)});
    worker.running = std::move(closure);
  }
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

void CoordinatorActor::notify_listeners(const Closure& closure, AttemptOutcome outcome, const std::string& reason) {
  for (const auto& listener : options_.attempt_listeners)
    send(listener, ClosureAttemptEndedMsg{closure.id, closure.attempt, outcome, reason});
}

bool CoordinatorActor::any_worker_alive() const noexcept {
  return std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.alive; });
}

bool CoordinatorActor::any_running() const noexcept {
  return std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.running.has_value(); });
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
