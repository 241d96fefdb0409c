#include <troupe/net/bootstrap/node_actor.hpp>

#include <caf/all.hpp>

#include <troupe/net/link/link_messages.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

NodeActor::NodeActor(caf::actor_config& cfg, NodeSetup setup)
  : caf::event_based_actor(cfg), setup_(std::move(setup)),
    handshake_(setup_.me.rank, setup_.task_names, setup_.me.token_hash, setup_.me.spec_fingerprint) {
}

caf::behavior NodeActor::make_behavior() {
  set_down_handler([this](caf::down_msg& msg) {
    auto i = rank_of_.find(msg.source);
    if (i == rank_of_.end())
      return;
    const int rank = i->second;
    rank_of_.erase(i);
    const auto why = "its control connection went down (" + to_string(msg.reason)
                     + "): the process died, froze or became unreachable";
    send(setup_.data_plane, PeerLostMsg{rank, why});
  });
  return {
    [this](const HelloMsg& hello) { return on_hello(hello); },
    [this](const NodePeerMsg& msg) { add_peer(msg.hello.node ? msg.hello.node : msg.peer, msg.hello); },
    [this](const NodeAwaitMsg& msg) -> caf::result<std::vector<HelloMsg>> {
      auto promise = make_response_promise();
      waiting_.push_back(promise);
      delayed_send(this, msg.wait, NodeDeadlineMsg{});
      check_complete();
      return promise;
    },
    [this](const NodeDeadlineMsg&) {
      if (waiting_.empty())
        return;
      std::string missing;
      for (size_t r = 0; r < setup_.task_names.size(); ++r)
        if (static_cast<int>(r) > setup_.me.rank && peers_.count(static_cast<int>(r)) == 0)
          missing += (missing.empty() ? "" : ", ") + setup_.task_names[r];
      std::string refused;
      for (const auto& line : refused_)
        refused += "; refused: " + line;
      for (auto& promise : waiting_)
        promise.deliver(caf::make_error(
          Errc::timeout, "task " + setup_.me.task + " waited in vain for task(s) " + missing
                           + " to connect (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS): start them with the same "
                             "TF_CONFIG cluster and TROUPE_CLUSTER_TOKEN, or check their addresses" + refused));
      waiting_.clear();
    },
  };
}

void NodeActor::on_exit() {
  // Promises and peer handles refer back to actors that refer to this one.
  waiting_.clear();
  peers_.clear();
  rank_of_.clear();
  setup_.data_plane = nullptr;
}

caf::result<HelloMsg> NodeActor::on_hello(const HelloMsg& hello) {
  const auto who = "\"" + hello.task + "\" (pid " + std::to_string(hello.pid) + ")";
  PeerClaim claim{hello.rank, hello.task, hello.token_hash, hello.spec_fingerprint};
  const bool taken = peers_.count(hello.rank) != 0;
  auto refusal = handshake_.refusal(claim, taken);
  if (taken && !refusal.empty())
    refusal += " (the first has pid " + std::to_string(peers_[hello.rank].pid) + ")";
  if (!refusal.empty()) {
    TROUPE_LOG(error, "net") << "task " << setup_.me.task << " refused the process presenting itself as " << who
                             << ": " << refusal;
    refused_.push_back("the process presenting itself as " + who + ": " + refusal);
    return caf::make_error(Errc::invalid_argument,
                           "task " + setup_.me.task + " refused this process: " + refusal);
  }
  add_peer(hello.node, hello);
  auto me = setup_.me;
  me.node = this;
  return me;
}

void NodeActor::add_peer(const caf::actor& peer, const HelloMsg& hello) {
  peers_[hello.rank] = hello;
  if (peer) {
    monitor(peer);
    rank_of_[peer.address()] = hello.rank;
  }
  TROUPE_LOG(info, "net") << "task " << setup_.me.task << " connected to task " << hello.task << " (pid "
                          << hello.pid << ")";
  check_complete();
}

void NodeActor::check_complete() {
  if (peers_.size() + 1 < setup_.task_names.size())
    return;
  std::vector<HelloMsg> all;
  for (const auto& [rank, hello] : peers_)
    all.push_back(hello);
  for (auto& promise : waiting_)
    promise.deliver(all);
  waiting_.clear();
}

} // namespace troupe::internal
