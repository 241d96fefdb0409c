// The DataPlaneBroker's UCX side: its UcxTransport, the offer in the
// HelloMsg, the connect, and the frames that arrive on the progress thread.

#include <troupe/net/link/data_plane_broker.hpp>

#include <caf/send.hpp>

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
  // Called on the progress thread: each becomes a message to this broker,
  // which owns the dispatch. on_exit drops the transport, and these handles
  // with it.
  const DataPlaneBrokerHandle me{this};
  UcxEvents events;
  events.frame = [me](int from, const FrameHeader& header, FrameBytes bytes) {
    caf::anon_send(me, UcxFrameMsg{from, header, std::move(bytes)});
  };
  events.admitted = [me](int rank) { caf::anon_send(me, UcxAdmittedMsg{rank}); };
  events.failed = [me](int rank, std::string why) { caf::anon_send(me, UcxFailedMsg{rank, std::move(why)}); };
  events.flushed = [me] { caf::anon_send(me, UcxFlushedMsg{}); };
  std::string why;
  ucx_ = UcxTransport::open(std::move(ucx), std::move(events), why);
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

void DataPlaneBroker::connect_ucx(const std::vector<DataPlanePeer>& peers) {
  use_ucx_ = true;
  std::vector<UcxPeer> ucx_peers;
  for (const auto& peer : peers)
    ucx_peers.push_back(UcxPeer{peer.rank, peer.ucx_address, peer.ucx_nonce});
  ucx_->connect(std::move(ucx_peers));
}

void DataPlaneBroker::on_ucx_frame(UcxFrameMsg& msg) {
  if (dispatch_.lost(msg.from))
    return;
  if (msg.header.type == FrameType::bye) {
    left_[msg.from] = true;
    return;
  }
  dispatch_.on_frame(LinkFrameMsg{msg.from, msg.header, std::move(msg.bytes)});
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
