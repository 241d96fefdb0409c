#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/io/broker.hpp>
#include <caf/response_promise.hpp>

#include <troupe/net/handshake.hpp>
#include <troupe/net/link/link_dispatch.hpp>

namespace troupe::internal {

/// Where another task's data plane listens.
struct DataPlanePeer {
  int rank = 0;
  std::string host;
  uint16_t port = 0;
};

/// Edge -> broker (request): the port this data plane listens on.
struct DataPlanePortMsg {};

/// Edge -> broker (request): connect to every peer of lower rank, accept the
/// others; answered once every peer is connected and identified.
struct DataPlaneConnectMsg {
  std::vector<DataPlanePeer> peers;
};

/// Edge -> broker (request): this process shuts down normally. Sends a bye
/// frame to every peer and answers once every socket's bytes are written.
struct DataPlaneByeMsg {};

/// Broker -> itself: the control plane lost `rank` a moment ago; unless its
/// data connection closed meanwhile (which says more), it is lost now.
struct DataPlaneConfirmLossMsg {
  int rank = 0;
  std::string why;
};

/// What a DataPlaneBroker is spawned with.
struct DataPlaneSetup {
  int rank = 0;
  std::vector<std::string> task_names; ///< per rank
  uint64_t token_hash = 0;             ///< Handshake::hash_token of the cluster token
  std::string bind_host;               ///< "" = every interface
};

/// The bulk data plane of one cluster process: a CAF io broker that owns one
/// TCP connection per other task and moves frames (net/link/frame_header.hpp: a
/// 40-byte header, then the payload bytes, no per-element serialisation)
/// between them and this process's collective group actors.
///
/// 1. It listens on a free port, which the node handshake tells the others.
/// 2. It connects to every task of lower rank and accepts the others; the first
///    frame on each connection is a hello with the sender's rank and cluster
///    token hash, checked by the Handshake (net/handshake.hpp) as the node
///    actor checks the control plane's; a refusal is logged. A frame of
///    another protocol version, or any frame before the hello, closes the
///    connection naming the cause.
/// 3. A LinkSendMsg becomes header + bytes on the peer's socket; received
///    frames go to the group named in their header (LinkDispatch).
/// 4. A closed connection after a bye frame is that task's normal exit; any
///    other closed connection, or a PeerLostMsg from the node actor (CAF's
///    heartbeat gave up on the peer), reports the peer lost to every group.
/// Runs on the middleman's I/O thread, like every broker.
class DataPlaneBroker final : public caf::io::broker {
public:
  DataPlaneBroker(caf::actor_config& cfg, DataPlaneSetup setup);

  caf::behavior make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.data_plane"; }

private:
  struct Connection {
    int rank = -1;            ///< -1 until its hello arrived
    bool in_payload = false;  ///< reading the payload of `header`
    FrameHeader header;
  };

  void on_data(caf::io::connection_handle hdl, std::vector<char>& buf);
  void on_header(caf::io::connection_handle hdl, Connection& conn, const FrameHeader& header);
  void on_hello(caf::io::connection_handle hdl, Connection& conn, const std::vector<char>& buf);
  void on_closed(caf::io::connection_handle hdl);
  void send_frame(caf::io::connection_handle hdl, const FrameHeader& header, const std::byte* data);
  void lose(int rank, const std::string& why);
  void check_ready();
  [[nodiscard]] std::string task(int rank) const;

  DataPlaneSetup setup_;
  Handshake handshake_;
  uint16_t port_ = 0;
  std::string listen_error_;
  std::map<caf::io::connection_handle, Connection> connections_;
  std::map<int, caf::io::connection_handle> by_rank_;
  LinkDispatch dispatch_;
  bool want_ready_ = false;
  caf::response_promise ready_;
  /// Peers that said bye: their loss is their normal exit.
  std::map<int, bool> left_;
  /// Connections whose bytes must be written before the bye is answered.
  std::map<caf::io::connection_handle, bool> draining_;
  caf::response_promise bye_;
};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::DataPlanePortMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::DataPlaneConnectMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::DataPlaneByeMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::DataPlaneConfirmLossMsg)
