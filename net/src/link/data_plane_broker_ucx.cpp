// The DataPlaneBroker's UCX side: its UcxTransport, the offer in the
// HelloMsg, the connect, and the frames that arrive on the progress thread.

#include <troupe/net/link/data_plane_broker.hpp>

#include <algorithm>

#include <caf/send.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/hop_trace.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

void DataPlaneBroker::open_ucx() {
  if (setup_.transport == "tcp") {
    ucx_error_ = "it runs with TROUPE_TRANSPORT=tcp";
    return;
  }
  if (setup_.tls) {
    ucx_error_ = "it runs with TROUPE_TLS=1, and UCX's shared memory is not encrypted";
    return;
  }
  UcxSetup ucx;
  ucx.rank = setup_.rank;
  ucx.ranks = static_cast<int>(setup_.task_names.size());
  ucx.key = setup_.key;
  ucx.spec_fingerprint = setup_.spec_fingerprint;
  ucx.max_frame_bytes = setup_.max_frame_bytes;
  ucx.spin = setup_.ucx_spin;
  // Called on the progress thread. Frames go from there to their groups
  // (one hand-off less than through this broker); the rest become messages
  // to this broker. on_exit drops the transport, and these handles with it.
  const DataPlaneBrokerHandle me{this};
  ucx_dispatch_ = std::make_shared<LinkDispatch>(
    [](const LinkReceiverHandle& to, LinkFrameMsg msg) { caf::anon_send(to, std::move(msg)); },
    [](const LinkReceiverHandle& to, PeerLostMsg msg) { caf::anon_send(to, std::move(msg)); },
    [me](LinkSendMsg msg) { caf::anon_send(me, std::move(msg)); });
  UcxEvents events;
  events.frame = [me, dispatch = ucx_dispatch_](int from, const FrameHeader& header, FrameBytes bytes) {
    if (header.type == FrameType::bye) { // this broker decides about losses
      caf::anon_send(me, UcxByeMsg{from});
      return;
    }
    if (dispatch->lost(from))
      return;
    trace_hop(Hop::link_dispatch, header.run, static_cast<uint8_t>(header.type));
    dispatch->on_frame(LinkFrameMsg{from, header, std::move(bytes)});
  };
  events.admitted = [me](int rank) { caf::anon_send(me, UcxAdmittedMsg{rank}); };
  events.failed = [me](int rank, std::string why) { caf::anon_send(me, UcxFailedMsg{rank, std::move(why)}); };
  events.flushed = [me] { caf::anon_send(me, UcxFlushedMsg{}); };
  std::string why;
  ucx_ = std::shared_ptr<UcxTransport>(UcxTransport::open(std::move(ucx), std::move(events), why));
  if (!ucx_)
    ucx_error_ = why;
}

UcxOffer DataPlaneBroker::ucx_offer() const {
  UcxOffer offer;
  if (!ucx_) {
    offer.error = ucx_error_;
    return offer;
  }
  offer.address = ucx_->address();
  offer.nonce.assign(ucx_->nonce().begin(), ucx_->nonce().end());
  return offer;
}

caf::result<bool> DataPlaneBroker::connect_ucx(const std::vector<DataPlanePeer>& peers) {
  if (!ucx_)
    return caf::make_error(Errc::failed_precondition, "this task has no UCX data plane: " + ucx_error_);
  use_ucx_ = true;
  // The groups (and the node's loss watch) move to the progress thread's
  // dispatch, with the losses known so far; this broker's keeps the record
  // of losses only.
  std::vector<PeerLostMsg> losses;
  for (int rank = 0; rank < static_cast<int>(setup_.task_names.size()); ++rank)
    if (const auto* loss = dispatch_.loss_of(rank))
      losses.push_back(*loss);
  for (const auto& [group, actor] : registered_)
    dispatch_.on_register(LinkRegisterMsg{group, LinkReceiverHandle{}});
  ucx_->post([d = ucx_dispatch_, groups = registered_, losses] {
    for (const auto& loss : losses)
      d->on_peer_lost(loss.rank, loss.why, loss.left);
    for (const auto& [group, actor] : groups)
      d->on_register(LinkRegisterMsg{group, actor});
  });
  std::vector<UcxPeer> ucx_peers;
  for (const auto& peer : peers)
    ucx_peers.push_back(UcxPeer{peer.rank, peer.ucx_address, peer.ucx_nonce});
  ucx_->connect(std::move(ucx_peers));
  want_ready_ = true;
  ready_ = make_response_promise();
  check_ready();
  return ready_;
}

void DataPlaneBroker::bye_ucx(const FrameHeader& bye) {
  for (int rank : ucx_admitted_)
    if (!dispatch_.lost(rank))
      ucx_->send(rank, bye, {});
  ucx_->flush();
  ucx_flushing_ = true;
}

void DataPlaneBroker::check_ucx_loss(int rank, const Suspect& suspect) {
  // Frames still arriving (a large one's rendezvous read, then its bye) put
  // the verdict off: a grace after the last one.
  const auto heard = Clock::time_point(std::chrono::nanoseconds(ucx_->last_heard_ns(rank)));
  const auto due = std::max(suspect.since, heard) + setup_.hint_grace;
  const auto now = Clock::now();
  if (left_.count(rank) == 0 && now < due) {
    delayed_send(this, std::chrono::duration_cast<caf::timespan>(due - now), DataPlaneCheckLossMsg{rank});
    return;
  }
  lose(rank, suspect.why + (left_.count(rank) != 0 ? std::string()
                                                   : ", and it sent nothing more over UCX shared memory"));
}

void DataPlaneBroker::on_register(const LinkRegisterMsg& msg) {
  if (msg.actor)
    registered_[msg.group] = msg.actor;
  else
    registered_.erase(msg.group);
  if (use_ucx_)
    ucx_->post([d = ucx_dispatch_, msg] { d->on_register(msg); });
  else
    dispatch_.on_register(msg);
}

void DataPlaneBroker::on_ucx_control_lost(int rank, const std::string& why) {
  // No connection closes over shared memory: frames already sent arrive
  // within the hint grace, then the control plane's news decides. (A peer
  // whose admission is still on its way, one that finished first, gets the
  // same grace.)
  if (left_.count(rank) != 0) {
    lose(rank, why);
  } else if (!dispatch_.lost(rank) && suspects_.count(rank) == 0) {
    suspects_[rank] = Suspect{why, Clock::now()};
    delayed_send(this, setup_.hint_grace, DataPlaneCheckLossMsg{rank});
  }
}

} // namespace troupe::internal
