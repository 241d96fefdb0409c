#pragma once

// The messages a DataPlaneBroker (net/link/data_plane_broker.hpp) takes
// besides the link's (net/link/link_messages.hpp) and CAF's io events, and
// its typed interface.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/io/connection_handle.hpp>
#include <caf/io/system_messages.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/timespan.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/net/link/frame_sender.hpp>
#include <troupe/net/link/link_messages.hpp>

namespace troupe::internal {

class TlsHandoff; // net/tls/tls_handshake.hpp

/// Where another task's data plane listens.
struct DataPlanePeer {
  int rank = 0;
  std::string host;
  uint16_t port = 0;
  /// Its UCX worker address and nonce (HelloMsg), for DataPlaneConnectMsg::ucx.
  std::vector<uint8_t> ucx_address;
  std::vector<uint8_t> ucx_nonce;
};

/// Edge -> broker (request): the port this data plane listens on.
struct DataPlanePortMsg {};

/// Edge -> broker (request): connect to every peer of lower rank, accept the
/// others; answered once every peer is connected and identified. Each
/// connect gives up after `timeout`. `ucx`: over UCX shared memory instead
/// (every peer's ucx_address and ucx_nonce set; net/ucx).
struct DataPlaneConnectMsg {
  std::vector<DataPlanePeer> peers;
  caf::timespan timeout = std::chrono::seconds(120);
  bool ucx = false;
};

/// Edge -> broker (request): what this process offers for a UCX data plane,
/// for its HelloMsg: an empty address with `error` saying why when it
/// offers none (TROUPE_TRANSPORT=tcp, TROUPE_TLS=1, or UCX failed to start).
struct DataPlaneUcxOfferMsg {};

struct UcxOffer {
  std::vector<uint8_t> address;
  std::vector<uint8_t> nonce;
  std::string error;
};

/// Edge -> broker (request), after a connect over UCX: the transport the
/// collective groups may send their frames through directly.
struct DataPlaneSenderMsg {};

struct FrameSenderRef {
  std::shared_ptr<FrameSender> sender;
};

/// UCX progress thread -> broker: `from` said bye (the progress thread
/// dispatches every other frame itself).
struct UcxByeMsg {
  int from = 0;
};

/// UCX progress thread -> broker: `rank` proved the cluster token over UCX.
struct UcxAdmittedMsg {
  int rank = 0;
};

/// UCX progress thread -> broker: a send to or receive from `rank` failed.
struct UcxFailedMsg {
  int rank = 0;
  std::string why;
};

/// UCX progress thread -> broker: the sends before the bye have left.
struct UcxFlushedMsg {};

/// Edge -> broker (request): this process shuts down normally. Sends a bye
/// frame to every peer and answers once every socket's bytes are written.
struct DataPlaneByeMsg {};

/// Broker -> itself: time to check whether suspected peer `rank` (its
/// control connection went down) is still silent on its data connection.
struct DataPlaneCheckLossMsg {
  int rank = 0;
};

/// Broker -> itself: the connection `serial` must have said hello by now.
struct DataPlaneHelloDeadlineMsg {
  caf::io::connection_handle hdl;
  uint64_t serial = 0;
};

/// Dialer -> broker: the connect to `peer` ended; `fd` is the socket or -1.
struct DataPlaneDialedMsg {
  DataPlanePeer peer;
  int fd = -1;
  std::string error;
  /// With TROUPE_TLS=1: the connection's established TLS session.
  std::shared_ptr<TlsHandoff> tls;
};

// The edge's requests and the broker's own timers and dialers: in-process
// only (no type ID), but nothing in them ties them to it; they print.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlanePeer& x) {
  return f(caf::meta::type_name("troupe::DataPlanePeer"), x.rank, x.host, x.port, x.ucx_address, x.ucx_nonce);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlanePortMsg&) {
  return f(caf::meta::type_name("troupe::DataPlanePortMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneConnectMsg& x) {
  return f(caf::meta::type_name("troupe::DataPlaneConnectMsg"), x.peers, x.timeout, x.ucx);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneUcxOfferMsg&) {
  return f(caf::meta::type_name("troupe::DataPlaneUcxOfferMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, UcxOffer& x) {
  return f(caf::meta::type_name("troupe::UcxOffer"), x.address, x.nonce, x.error);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneSenderMsg&) {
  return f(caf::meta::type_name("troupe::DataPlaneSenderMsg"));
}

// Local-only: a pointer into this process.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, FrameSenderRef& x) {
  bool present = x.sender != nullptr;
  return inspect_local_only(f, "troupe::FrameSenderRef", present);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, UcxByeMsg& x) {
  return f(caf::meta::type_name("troupe::UcxByeMsg"), x.from);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, UcxAdmittedMsg& x) {
  return f(caf::meta::type_name("troupe::UcxAdmittedMsg"), x.rank);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, UcxFailedMsg& x) {
  return f(caf::meta::type_name("troupe::UcxFailedMsg"), x.rank, x.why);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, UcxFlushedMsg&) {
  return f(caf::meta::type_name("troupe::UcxFlushedMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneByeMsg&) {
  return f(caf::meta::type_name("troupe::DataPlaneByeMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneCheckLossMsg& x) {
  return f(caf::meta::type_name("troupe::DataPlaneCheckLossMsg"), x.rank);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneHelloDeadlineMsg& x) {
  return f(caf::meta::type_name("troupe::DataPlaneHelloDeadlineMsg"), x.hdl, x.serial);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataPlaneDialedMsg& x) {
  return f(caf::meta::type_name("troupe::DataPlaneDialedMsg"), x.peer, x.fd, x.error);
}

/// The data-plane broker: the link of the collective groups, the node
/// actor's hints (PeerLostMsg), the edge's requests, its dialers' and timers'
/// messages, and the CAF io events a caf::io::typed_broker must take
/// (typed_broker's add_tcp_doorman requires the acceptor's two).
using DataPlaneBrokerHandle = DataPlaneHandle::extend<
  caf::reacts_to<PeerLostMsg>, caf::replies_to<DataPlanePortMsg>::with<uint16_t>,
  caf::replies_to<DataPlaneConnectMsg>::with<bool>, caf::replies_to<DataPlaneByeMsg>::with<bool>,
  caf::replies_to<DataPlaneUcxOfferMsg>::with<UcxOffer>, caf::replies_to<DataPlaneSenderMsg>::with<FrameSenderRef>,
  caf::reacts_to<UcxByeMsg>, caf::reacts_to<UcxAdmittedMsg>, caf::reacts_to<UcxFailedMsg>,
  caf::reacts_to<UcxFlushedMsg>,
  caf::reacts_to<DataPlaneDialedMsg>, caf::reacts_to<DataPlaneCheckLossMsg>, caf::reacts_to<DataPlaneHelloDeadlineMsg>,
  caf::reacts_to<caf::io::new_connection_msg>, caf::reacts_to<caf::io::new_data_msg>,
  caf::reacts_to<caf::io::data_transferred_msg>, caf::reacts_to<caf::io::connection_closed_msg>,
  caf::reacts_to<caf::io::acceptor_closed_msg>>;

} // namespace troupe::internal
