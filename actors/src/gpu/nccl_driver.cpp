#include <troupe/actors/gpu/nccl_driver.hpp>

#include <algorithm>
#include <cstdio>

#include <caf/all.hpp>

#include <troupe/actors/gpu/gpu_device_actor.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

// The poller tells the actor about a group not on the stream yet at least
// this often, so that the actor sees its deadline pass.
constexpr std::chrono::nanoseconds max_poll = std::chrono::milliseconds{1};
// How often, while collectives run on the GPU, NCCL's own error state is
// read and the watched group's age looked at: at most this, and at most a
// quarter of the timeout (a hang is then found within 1.25 timeouts of the
// watch's start).
constexpr std::chrono::nanoseconds health_interval = std::chrono::seconds{1};
constexpr int ticks_per_timeout = 4;
// Aborted communicators remembered, so that a group an abort overtook fails at once.
constexpr std::size_t max_aborted_names = 64;

std::string seconds(std::chrono::nanoseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", std::chrono::duration<double>(t).count());
  return buf;
}

void answer(const std::shared_ptr<HandOff>& handoff, std::string error) {
  if (!handoff)
    return;
  handoff->error = std::move(error);
  handoff->done.set();
}

std::chrono::nanoseconds tick_for(std::chrono::nanoseconds timeout) {
  return std::max<std::chrono::nanoseconds>(std::min(health_interval, timeout / ticks_per_timeout),
                                            std::chrono::milliseconds{1});
}

} // namespace

NcclDriver::NcclDriver(GpuDeviceActorHandle::pointer self, std::string device, int gpu, GpuStream stream,
                       GpuBackend& gpu_backend, std::shared_ptr<NcclProgressPoller> poller,
                       std::function<void(const std::string&)> on_lost)
  : self_(self), device_(std::move(device)), gpu_(gpu), stream_(stream), gpu_backend_(gpu_backend),
    poller_(std::move(poller)), on_lost_(std::move(on_lost)) {
}

NcclDriver::~NcclDriver() {
  stop_after_stream();
}

void NcclDriver::start(NcclGroupMsg msg, const std::string& device_failure, std::string lost) {
  const auto& spec = msg.communicator;
  if (!device_failure.empty()) {
    // The stream is dead: the peers must not wait for this rank.
    give_up(msg, device_failure, lost);
    return;
  }
  if (auto aborted = aborted_names_.find(spec.name); aborted != aborted_names_.end()) {
    // An abort that overtook this group (it came from another sender).
    give_up(msg, "NCCL communicator " + spec.name + " was aborted: " + aborted->second, lost);
    return;
  }
  if (auto known = communicators_.find(spec.name); known != communicators_.end()) {
    known->second.on_end = msg.on_communicator_end;  // names the latest collective on it
  } else {
    try {
      Communicator created;
      created.comm = nccl_backend().init_rank(gpu_, spec.id, spec.ranks, spec.rank);
      created.rank = spec.rank;
      created.ranks = spec.ranks;
      created.on_end = msg.on_communicator_end;
      communicators_.emplace(spec.name, created);
      TROUPE_LOG(debug, "coll") << device_ << ": NCCL communicator " << spec.name << ", rank " << spec.rank
                                << " of " << spec.ranks;
    } catch (const std::exception& e) {
      give_up(msg, "NCCL could not create communicator " + spec.name + ": " + e.what(), lost);
      return;
    }
  }
  const auto timeout = msg.timeout;
  ++started_;
  waiting_ = Waiting{std::move(msg), false, self_->clock().now() + timeout, std::move(lost)};
  advance();
}

void NcclDriver::give_up(const NcclGroupMsg& msg, const std::string& why, const std::string& lost) {
  const std::string text = msg.what + " on " + device_ + ": " + why;
  if (communicators_.count(msg.communicator.name) != 0)
    end(msg.communicator.name, text, true);
  else if (msg.on_communicator_end)
    msg.on_communicator_end(msg.communicator.name, text);
  answer(msg.handoff, lost.empty() ? text : lost + "; then " + text);
}

void NcclDriver::poll(uint64_t waiting) {
  // Polls of a group that ended meanwhile would poll the next one in a
  // second chain.
  if (waiting_ && waiting == started_)
    advance();
}

void NcclDriver::advance() {
  auto& waiting = *waiting_;
  const std::string name = waiting.msg.communicator.name;
  auto it = communicators_.find(name);
  if (it == communicators_.end()) {
    auto aborted = aborted_names_.find(name);
    fail_waiting("NCCL communicator " + name + " was aborted"
                   + (aborted != aborted_names_.end() ? ": " + aborted->second : std::string{}),
                 false);
    return;
  }
  const Communicator& communicator = it->second;
  NcclState state = NcclState::in_progress;
  std::string error;
  try {
    auto& nccl = nccl_backend();
    state = nccl.state(communicator.comm, error);
    if (state == NcclState::ready && !waiting.issued) {
      waiting.issued = true;
      state = nccl.enqueue(gpu_, communicator.comm, stream_, waiting.msg.calls, error);
    }
  } catch (const std::exception& e) {
    state = NcclState::failed;
    error = e.what();
  }
  switch (state) {
    case NcclState::ready:
      succeed();
      return;
    case NcclState::failed:
      fail_waiting("NCCL failed: " + error, true);
      return;
    case NcclState::in_progress:
      break;
  }
  const auto now = self_->clock().now();
  if (now >= waiting.deadline) {
    fail_waiting("NCCL did not get the collective going within " + seconds(waiting.msg.timeout) + ": rank "
                   + std::to_string(communicator.rank) + " of communicator " + name + " waited for the other "
                   + std::to_string(communicator.ranks - 1)
                   + " ranks; the communicator was aborted. Every participant must reach the same collectives; "
                     "if the step is legitimately slow, raise CommunicationOptions.timeout_seconds",
                 true);
    return;
  }
  // A weak reference: the poller's thread must not be the one to end the actor.
  poller_->watch(communicator.comm, std::min<std::chrono::nanoseconds>(max_poll, waiting.deadline - now),
                 [self = caf::actor_cast<caf::weak_actor_ptr>(self_), serial = started_] {
                   if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(self))
                     caf::anon_send(caf::actor_cast<GpuDeviceActorHandle>(strong), NcclPollMsg{serial});
                 });
}

void NcclDriver::succeed() {
  auto waiting = std::move(*waiting_);
  waiting_.reset();
  const std::string& name = waiting.msg.communicator.name;
  const uint64_t serial = ++next_serial_;
  communicators_.at(name).last_serial = serial;
  latest_timeout_ = waiting.msg.timeout;
  if (!watching_) {
    try {
      watch(serial, waiting.msg.timeout);
    } catch (const std::exception& e) {
      // Without a completion to watch, a hang could not be told: give it up now.
      const std::string why = waiting.msg.what + " on " + device_ + ": " + e.what();
      end(name, why, true);  // a loss: the group is on the stream
      answer(waiting.msg.handoff, why);
      return;
    }
  }
  // On the stream, so the peers are not left waiting; a loss found before
  // is this caller's to hear now.
  answer(waiting.msg.handoff, waiting.lost);
}

void NcclDriver::watch(uint64_t serial, std::chrono::nanoseconds timeout) {
  gpu_backend_.notify_when_done(gpu_, stream_, [self = caf::actor_cast<GpuDeviceActorHandle>(self_), serial](const std::string&) {
    caf::anon_send(self, NcclGroupDoneMsg{serial});
  });
  // No timer per watch: the health tick, running while groups do, looks at
  // its age (a timer per collective costs a wake-up of the clock's thread).
  watching_ = serial;
  watch_deadline_ = self_->clock().now() + timeout;
  watch_timeout_ = timeout;
  if (!health_scheduled_) {
    health_scheduled_ = true;
    self_->delayed_send(self_, tick_for(timeout), NcclHealthMsg{});
  }
}

void NcclDriver::fail_waiting(const std::string& why, bool tell_group) {
  auto waiting = std::move(*waiting_);
  waiting_.reset();
  const std::string text = waiting.msg.what + " on " + device_ + ": " + why;
  end(waiting.msg.communicator.name, text, tell_group);
  answer(waiting.msg.handoff, waiting.lost.empty() ? text : waiting.lost + "; then " + text);
}

void NcclDriver::group_done(uint64_t serial) {
  finished_serial_ = std::max(finished_serial_, serial);
  for (auto it = closing_.begin(); it != closing_.end();) {
    auto c = communicators_.find(*it);
    // Its groups on the stream, or one still getting there (sent before the
    // close), finish first.
    if (c != communicators_.end() && (running(c->second) || (waiting_ && waiting_->msg.communicator.name == *it))) {
      ++it;
      continue;
    }
    end(*it, "", false, true);
    it = closing_.erase(it);
  }
  if (watching_ && *watching_ <= finished_serial_)
    watching_.reset();
  rewatch();
}

void NcclDriver::check_watch() {
  if (!watching_ || finished_serial_ >= *watching_ || self_->clock().now() < watch_deadline_)
    return;  // finished, or still has time
  watching_.reset();
  std::vector<std::string> hung;
  for (const auto& [name, communicator] : communicators_)
    if (running(communicator))
      hung.push_back(name);
  if (!hung.empty()) {
    std::string names;
    for (const auto& name : hung)
      names += (names.empty() ? "" : ", ") + name;
    const std::string why = device_ + ": a collective on NCCL communicator " + names
                            + " did not finish on the GPU within its timeout (a peer stopped taking part); the "
                              "communicator was aborted, and the values computed from that collective on are lost";
    // A group waiting on a hung communicator fails with it.
    if (waiting_ && std::find(hung.begin(), hung.end(), waiting_->msg.communicator.name) != hung.end())
      fail_waiting(why, true);
    for (const auto& name : hung)
      end(name, why, true);
  }
  // Else its communicators were aborted meanwhile, and the loss reported
  // then. Groups issued since (new communicators) get a watch of their own.
  rewatch();
}

void NcclDriver::health() {
  health_scheduled_ = false;
  check_watch();
  // NCCL's own errors (a network failure, a peer's abort) on groups already
  // on the stream: found here rather than at the watch's timeout.
  std::vector<std::pair<std::string, std::string>> failed;
  for (const auto& [name, communicator] : communicators_) {
    if (!running(communicator))
      continue;
    std::string error;
    try {
      if (nccl_backend().state(communicator.comm, error) == NcclState::failed)
        failed.emplace_back(name, error);
    } catch (const std::exception& e) {
      failed.emplace_back(name, e.what());
    }
  }
  for (const auto& [name, error] : failed) {
    const std::string why = device_ + ": NCCL reported a failure of communicator " + name + " while a collective "
                            + "ran on the GPU: " + error;
    if (waiting_ && waiting_->msg.communicator.name == name)
      fail_waiting(why, true);
    end(name, why, true);
  }
  // While a watch is on (its communicator may have been aborted meanwhile,
  // and later groups wait behind it), and while groups run.
  bool any_running = watching_.has_value();
  for (const auto& [name, communicator] : communicators_)
    any_running = any_running || running(communicator);
  if (any_running && !health_scheduled_) {  // check_watch may have rewatched, with a tick of its own
    health_scheduled_ = true;
    const auto timeout = watching_ ? std::min(watch_timeout_, latest_timeout_) : latest_timeout_;
    self_->delayed_send(self_, tick_for(timeout), NcclHealthMsg{});
  }
}

void NcclDriver::rewatch() {
  if (watching_ || next_serial_ <= finished_serial_)
    return;
  try {
    watch(next_serial_, latest_timeout_);
  } catch (const std::exception& e) {
    lose(device_ + ": NCCL collectives could no longer be watched: " + e.what());
    stop_before_stream();
  }
}

void NcclDriver::abort(const std::string& name, const std::string& why) {
  if (waiting_ && waiting_->msg.communicator.name == name) {
    fail_waiting(why, false);
    return;
  }
  if (communicators_.count(name) != 0)
    end(name, why, false);
  else
    remember_aborted(name, why);  // a group naming it may still be on its way here
}

void NcclDriver::close(const std::string& name) {
  if (waiting_ && waiting_->msg.communicator.name == name) {
    fail_waiting("its strategy was destroyed", false);
    return;
  }
  auto it = communicators_.find(name);
  if (it == communicators_.end())
    return;
  if (running(it->second))
    closing_.insert(name);
  else
    end(name, "", false, true);
}

void NcclDriver::lose(const std::string& why) {
  TROUPE_LOG(warning, "coll") << why;
  on_lost_(why);
}

void NcclDriver::end(const std::string& name, const std::string& why, bool tell_group, bool stopping) noexcept {
  auto it = communicators_.find(name);
  if (it == communicators_.end())
    return;
  // What is in flight on the stream may read the outputs of its groups.
  if (running(it->second) && !stopping)
    lose(device_ + ": a collective on NCCL communicator " + name + " was aborted on the GPU: " + why);
  else if (tell_group)
    TROUPE_LOG(warning, "coll") << why;  // the driver gave it up on its own
  // The group names a new communicator for its next collective, and aborts
  // the other local ranks of this one. Told first: whoever learns of the
  // abort next (a waiter on this stream) then reaches the group after it.
  if (tell_group && it->second.on_end)
    it->second.on_end(name, why);
  poller_->forget(it->second.comm);  // before the abort frees it
  nccl_backend().abort(it->second.comm);
  communicators_.erase(it);
  remember_aborted(name, why);
  // A group waiting on it is no longer watched: it fails at its next look.
  if (waiting_ && waiting_->msg.communicator.name == name)
    self_->send(self_, NcclPollMsg{started_});
}

void NcclDriver::remember_aborted(const std::string& name, const std::string& why) {
  if (!aborted_names_.emplace(name, why).second)
    return;
  aborted_order_.push_back(name);
  if (aborted_order_.size() > max_aborted_names) {
    aborted_names_.erase(aborted_order_.front());
    aborted_order_.pop_front();
  }
}

void NcclDriver::stop_before_stream() {
  if (waiting_) {
    auto waiting = std::move(*waiting_);
    waiting_.reset();
    end(waiting.msg.communicator.name, "", false, true);
    answer(waiting.msg.handoff, waiting.msg.what + " on " + device_ + ": " + device_
                                  + "'s device actor stopped (its Runtime is being destroyed)");
  }
  // A group still running may wait for a peer that never comes: the stream
  // would never drain.
  std::vector<std::string> running;
  for (const auto& [name, communicator] : communicators_)
    if (this->running(communicator))
      running.push_back(name);
  for (const auto& name : running)
    end(name, "", false, true);
}

void NcclDriver::stop_after_stream() noexcept {
  // Nothing runs on them any more. ncclCommAbort frees a rank without the
  // others (ncclCommDestroy may wait for them, and they stop on threads this
  // one may be blocking).
  for (auto& [name, communicator] : communicators_) {
    poller_->forget(communicator.comm);
    nccl_backend().abort(communicator.comm);
  }
  communicators_.clear();
}

} // namespace troupe::internal
