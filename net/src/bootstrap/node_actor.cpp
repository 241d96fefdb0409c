#include <troupe/net/bootstrap/node_actor.hpp>

#include <troupe/net/auth/refusal_log.hpp>
#include <troupe/net/link/cross_memory.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

#include <caf/all.hpp>

#include <troupe/net/link/link_messages.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

} // namespace

std::chrono::steady_clock::duration join_progress_interval(double init_timeout_seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
    std::chrono::duration<double>(std::min(10.0, init_timeout_seconds / 4)));
}

std::string join_progress(std::chrono::steady_clock::time_point join_started, double init_timeout_seconds) {
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - join_started).count();
  return "(" + seconds_text(waited) + " of " + seconds_text(init_timeout_seconds)
         + ", TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)";
}

NodeActor::NodeActor(caf::actor_config& cfg, NodeSetup setup)
  : NodeActorHandle::base(cfg), setup_(std::move(setup)),
    handshake_(setup_.me.rank, setup_.task_names, setup_.me.spec_fingerprint) {
  if (!setup_.restartable_job.empty())
    handshake_.admit_restarted(setup_.restartable_job);
}

bool NodeActor::control_decides(int rank) const {
  return !setup_.data_plane || rank >= setup_.participants || rejoined_.count(rank) != 0;
}

NodeActor::behavior_type NodeActor::make_behavior() {
  set_down_handler([this](caf::down_msg& msg) {
    auto i = rank_of_.find(msg.source);
    if (i == rank_of_.end())
      return;
    const int rank = i->second;
    rank_of_.erase(i);
    gone_.insert(rank);
    TROUPE_LOG(info, "net") << "task " << setup_.me.task << ": the control connection to task "
                            << setup_.task_names[static_cast<size_t>(rank)] << " (pid " << peers_[rank].pid
                            << ") went down";
    const auto why = "its control connection went down (" + to_string(msg.reason)
                     + "): the process died, froze or became unreachable";
    auto [first, last] = farewell_acks_.equal_range(rank);
    for (auto ack = first; ack != last; ++ack)
      ack->second();
    farewell_acks_.erase(first, last);
    // A member that said farewell left, whatever the connection's end looked
    // like (its process may close the socket before its node's exit arrives).
    if (control_decides(rank))
      decide(rank, why, msg.reason == caf::exit_reason::user_shutdown || farewells_.count(rank) != 0);
    else
      send(setup_.data_plane, PeerLostMsg{rank, why}); // a hint: the data connection decides
  });
  // An error that comes as a message (another actor bounced an answer it did
  // not expect) ends an actor by CAF's default: the node outlives it.
  set_error_handler([this](caf::error& error) {
    TROUPE_LOG(warning, "net") << "task " << setup_.me.task << " ignored an error sent to its node: "
                               << system().render(error);
  });
  // The data plane's verdicts on chief and worker tasks come as to a collective group.
  if (setup_.data_plane)
    send(setup_.data_plane, LinkRegisterMsg{loss_watch_group_id, LinkReceiverHandle{this}});
  return {
    [this](const PeerLostMsg& msg) {
      // The data plane never saw a rejoined process: its verdict is on the old one.
      if (rejoined_.count(msg.rank) == 0)
        decide(msg.rank, msg.why, msg.left);
    },
    [this](const NodeRejoinedMsg&) {
      setup_.data_plane = nullptr;
      formed_ = true;
    },
    [](const LinkFrameMsg&) {
      // No task sends frames to the loss-watch group; a stray one carries nothing for it.
    },
    [this](const NodeWatchMsg& msg) {
      if (!msg.listener)
        return;
      watchers_.push_back(msg.listener);
      for (const auto& [rank, verdict] : verdicts_)
        caf::anon_send(msg.listener, verdict);
    },
    [this](const NodePublishMsg& msg) {
      if (!msg.actor) {
        published_.erase(msg.name);
        return;
      }
      published_[msg.name] = msg.actor;
      auto [first, last] = lookups_.equal_range(msg.name);
      for (auto i = first; i != last; ++i)
        i->second.deliver(msg.actor);
      lookups_.erase(first, last);
    },
    [this](const NodeLookupMsg& msg) { return on_lookup(msg); },
    [this](const NodeFarewellMsg& msg) {
      // The rank comes from the connection: a member speaks only for itself.
      if (auto i = rank_of_.find(caf::actor_cast<caf::actor_addr>(current_sender())); i != rank_of_.end())
        farewells_[i->second] = msg.job_error;
      return true;
    },
    [this](const NodeSayFarewellMsg& msg) { return on_say_farewell(msg); },
    [this](const HelloMsg& hello) { return on_hello(hello); },
    [this](const NodeGateRefusalMsg& msg) { on_gate_refusal(msg); },
    [this](const NodePeerMsg& msg) { add_peer(msg.hello.node ? msg.hello.node : msg.peer, msg.hello); },
    [this](const NodeAwaitMsg& msg) -> caf::result<std::vector<HelloMsg>> {
      if (!doomed_.empty())
        return caf::make_error(Errc::failed_precondition, doomed_);
      auto promise = make_response_promise();
      waiting_.push_back(promise);
      delayed_send(this, msg.wait, NodeDeadlineMsg{});
      if (!progress_scheduled_) {
        progress_scheduled_ = true;
        delayed_send(this, join_progress_interval(setup_.init_timeout_seconds), NodeProgressMsg{});
      }
      check_complete();
      return promise;
    },
    [this](const NodeDoomedMsg&) { return doomed_; },
    [this](const NodeProgressMsg&) {
      progress_scheduled_ = false;
      if (waiting_.empty())
        return;
      TROUPE_LOG(warning, "net") << "task " << setup_.me.task << " is waiting for " << missing_tasks()
                                 << " to connect " << join_progress(setup_.join_started, setup_.init_timeout_seconds);
      progress_scheduled_ = true;
      delayed_send(this, join_progress_interval(setup_.init_timeout_seconds), NodeProgressMsg{});
    },
    [this](const NodeDeadlineMsg&) {
      if (waiting_.empty())
        return;
      std::string refused;
      for (const auto& line : refused_)
        refused += "; refused: " + line;
      fail_waiting(Errc::timeout, "task " + setup_.me.task + " waited in vain for " + missing_tasks()
                   + " to connect (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS): start them with the same "
                     "TF_CONFIG cluster and TROUPE_CLUSTER_TOKEN, or check their addresses" + refused);
    },
  };
}

void NodeActor::on_exit() {
  // Promises and peer handles refer back to actors that refer to this one.
  waiting_.clear();
  watchers_.clear();
  published_.clear();
  lookups_.clear();
  farewell_acks_.clear();
  peers_.clear();
  rank_of_.clear();
  setup_.data_plane = nullptr;
}

caf::result<HelloMsg> NodeActor::on_hello(const HelloMsg& hello) {
  const auto who = "\"" + hello.task + "\" (pid " + std::to_string(hello.pid) + ")";
  // The same process again (its first answer came after it gave up waiting):
  // answered as the first time, not refused as a duplicate of itself.
  if (auto known = peers_.find(hello.rank); known != peers_.end() && gone_.count(hello.rank) == 0
                                           && known->second.pid == hello.pid && known->second.task == hello.task
                                           && known->second.node == hello.node && hello.node) {
    auto me = setup_.me;
    me.node = this;
    return me;
  }
  PeerClaim claim{hello.rank, hello.task, true, hello.spec_fingerprint};
  const auto holder = holder_of(hello.rank);
  if (auto refusal = refuse(claim, who, ""); !refusal.empty())
    return caf::make_error(handshake_.of_other_cluster(claim) ? other_cluster_refusal : Errc::invalid_argument,
                           "task " + setup_.me.task + " refused this process: " + refusal);
  auto me = setup_.me;
  me.node = this;
  if (handshake_.admits_restart(claim, holder, formed_)) {
    take_back(hello);
    me.rejoined = true;
    return me;
  }
  add_peer(hello.node, hello);
  return me;
}

std::string NodeActor::refuse(const PeerClaim& claim, const std::string& who, const std::string& from) {
  const auto holder = holder_of(claim.rank);
  const auto refusal = handshake_.refusal(claim, holder, formed_);
  if (refusal.empty())
    return {};
  if (refusal_log_allowed())
    TROUPE_LOG(error, "net") << "task " << setup_.me.task << " refused the process presenting itself as " << who
                             << (from.empty() ? "" : " at " + from) << ": " << refusal;
  // Kept for the error that names missing tasks, so only while the cluster
  // forms and only the first few: strangers may keep claiming ranks later.
  if (!formed_ && refused_.size() < max_refusals_kept)
    refused_.push_back("the process presenting itself as " + who + ": " + refusal);
  // The refused process fails too; with another token or spec it was
  // started as the awaited task with other settings, and no other process
  // is going to come as that task.
  if (handshake_.dooms_the_cluster(claim, holder) && doomed_.empty())
    fail_waiting(Errc::failed_precondition, doomed_ = "task " + setup_.me.task + " refused the process presenting "
                                                      "itself as " + who + ", which it was waiting for: " + refusal
                                                      + ". Restart every task with the same TF_CONFIG cluster and "
                                                        "TROUPE_CLUSTER_TOKEN");
  return refusal;
}

void NodeActor::on_gate_refusal(const NodeGateRefusalMsg& msg) {
  const bool in_range = msg.claimed_rank >= 0 && static_cast<size_t>(msg.claimed_rank) < setup_.task_names.size();
  const auto task = in_range ? setup_.task_names[static_cast<size_t>(msg.claimed_rank)]
                             : "rank " + std::to_string(msg.claimed_rank);
  const auto who = "\"" + task + "\" (pid " + std::to_string(msg.pid) + ")";
  if (!msg.other_token && !msg.other_spec && !msg.other_tls) {
    // Not a process of another cluster: a mix-up of ports or builds, told to the dialer.
    if (refusal_log_allowed())
      TROUPE_LOG(error, "net") << "task " << setup_.me.task << " refused the process presenting itself as " << who
                               << " at " << msg.address << ": " << msg.why;
    return;
  }
  PeerClaim claim{msg.claimed_rank, in_range ? task : std::string{}, !msg.other_token, msg.spec_fingerprint,
                  msg.other_tls};
  if (refuse(claim, who, msg.address).empty() && refusal_log_allowed()) // unreachable: the gate refused it
    TROUPE_LOG(error, "net") << "task " << setup_.me.task << " refused the process presenting itself as " << who
                             << " at " << msg.address << ": " << msg.why;
}

void NodeActor::take_back(const HelloMsg& hello) {
  const int rank = hello.rank;
  const auto& task = setup_.task_names[static_cast<size_t>(rank)];
  // The old process's verdict comes first, if its data connection has not
  // given it yet; from now on the control connection decides for this rank.
  if (verdicts_.count(rank) == 0)
    decide(rank, "its control connection went down: the process died, froze or became unreachable, and a new "
                 "process took its place", false);
  rejoined_.insert(rank);
  verdicts_.erase(rank);
  farewells_.erase(rank); // the old process's
  gone_.erase(rank);
  TROUPE_LOG(info, "net") << "task " << setup_.me.task << " took task " << task << " back: its process was restarted"
                          << " (pid " << peers_[rank].pid << " before, " << hello.pid << " now)";
  add_peer(hello.node, hello);
  // Its memory is read as its first process's was (parameter-server bytes).
  if (hello.node && may_read_each_other(setup_.me, hello))
    CrossMemoryPeers::add(hello.node.node(), hello.pid);
  for (const auto& watcher : watchers_)
    caf::anon_send(watcher, TaskJoinedMsg{task, hello.node});
}

void NodeActor::add_peer(const NodeActorHandle& peer, const HelloMsg& hello) {
  peers_[hello.rank] = hello;
  if (peer) {
    monitor(peer);
    rank_of_[peer.address()] = hello.rank;
  }
  TROUPE_LOG(info, "net") << "task " << setup_.me.task << " connected to task " << hello.task << " (pid "
                          << hello.pid << ")";
  check_complete();
}

void NodeActor::decide(int rank, std::string why, bool left) {
  if (rank < 0 || rank >= static_cast<int>(setup_.task_names.size()) || rank == setup_.me.rank)
    return;
  const auto& task = setup_.task_names[static_cast<size_t>(rank)];
  std::string job_error;
  if (auto farewell = farewells_.find(rank); farewell != farewells_.end())
    job_error = farewell->second;
  if (left)
    why = job_error.empty() ? "it shut down (its program ended)"
                            : "it shut down after its job failed: " + job_error;
  TaskLostMsg lost;
  lost.task = task;
  lost.why = std::move(why);
  lost.left = left;
  lost.job_error = job_error;
  if (auto chief = farewells_.find(0); chief != farewells_.end() && setup_.task_names[0].rfind("chief:", 0) == 0) {
    lost.chief_said_farewell = true;
    lost.chief_job_error = chief->second;
  }
  auto [verdict, fresh] = verdicts_.emplace(rank, std::move(lost));
  if (!fresh)
    return;
  // The data plane logs its own verdicts; the control plane's are logged here.
  if (control_decides(rank)) {
    if (left)
      TROUPE_LOG(info, "net") << "task " << task << " left the cluster";
    else
      TROUPE_LOG(warning, "net") << "task " << task << " is lost: " << verdict->second.why;
  }
  for (const auto& watcher : watchers_)
    caf::anon_send(watcher, verdict->second);
}

caf::result<bool> NodeActor::on_say_farewell(const NodeSayFarewellMsg& msg) {
  auto promise = make_response_promise<bool>();
  auto pending = std::make_shared<size_t>(0);
  for (const auto& [rank, hello] : peers_)
    if (hello.node && gone_.count(rank) == 0)
      ++*pending;
  if (*pending == 0)
    return true;
  // Answered once every member acknowledged (so the farewell precedes the
  // bye everywhere), went down, or failed to answer within `wait`.
  for (const auto& [rank, hello] : peers_)
    if (hello.node && gone_.count(rank) == 0) {
      auto open = std::make_shared<bool>(true);
      auto acknowledged = [promise, pending, open]() mutable {
        if (std::exchange(*open, false) && --*pending == 0)
          promise.deliver(true);
      };
      farewell_acks_.emplace(rank, acknowledged);
      // Settled: the entry goes, with the promise it holds (which holds this actor).
      auto settled = [this, rank = rank, acknowledged]() mutable {
        acknowledged();
        farewell_acks_.erase(rank);
      };
      request(hello.node, msg.wait, NodeFarewellMsg{msg.job_error})
        .then([settled](bool) mutable { settled(); }, [settled](caf::error&) mutable { settled(); });
    }
  return promise;
}

caf::result<caf::actor> NodeActor::on_lookup(const NodeLookupMsg& msg) {
  if (msg.name.size() > NodeLookupMsg::max_name_bytes)
    return caf::make_error(Errc::invalid_argument,
                           "task " + setup_.me.task + " refused a lookup of a " + std::to_string(msg.name.size())
                             + "-byte name: names of published actors have at most "
                             + std::to_string(NodeLookupMsg::max_name_bytes) + " bytes");
  if (auto i = published_.find(msg.name); i != published_.end())
    return i->second;
  // Bounded: every waiting lookup holds a promise until its name is published.
  constexpr size_t max_waiting_lookups = 4096;
  if (lookups_.size() >= max_waiting_lookups)
    return caf::make_error(Errc::failed_precondition,
                           "task " + setup_.me.task + " has " + std::to_string(lookups_.size())
                             + " lookups waiting for actors it has not published, the most it holds; is \""
                             + msg.name + "\" published on task " + setup_.me.task + " at all?");
  auto promise = make_response_promise();
  lookups_.emplace(msg.name, promise);
  return promise;
}

std::optional<RankHolder> NodeActor::holder_of(int rank) const {
  auto i = peers_.find(rank);
  if (i == peers_.end())
    return std::nullopt;
  return RankHolder{i->second.pid, gone_.count(rank) != 0};
}

std::string NodeActor::missing_tasks() const {
  std::string missing;
  for (size_t r = 0; r < setup_.task_names.size(); ++r)
    if (static_cast<int>(r) > setup_.me.rank && peers_.count(static_cast<int>(r)) == 0)
      missing += (missing.empty() ? "" : ", ") + setup_.task_names[r]
                 + (r < setup_.addresses.size() ? " (" + setup_.addresses[r] + ")" : std::string{});
  return "task(s) " + missing;
}

void NodeActor::fail_waiting(Errc code, const std::string& why) {
  for (auto& promise : waiting_)
    promise.deliver(caf::make_error(code, why));
  waiting_.clear();
}

void NodeActor::check_complete() {
  if (peers_.size() + 1 < setup_.task_names.size())
    return;
  formed_ = true;
  std::vector<HelloMsg> all;
  for (const auto& [rank, hello] : peers_)
    all.push_back(hello);
  for (auto& promise : waiting_)
    promise.deliver(all);
  waiting_.clear();
}

} // namespace troupe::internal
