#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/io/typed_broker.hpp>
#include <caf/response_promise.hpp>
#include <caf/timespan.hpp>

#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/handshake.hpp>
#include <troupe/net/link/data_plane_messages.hpp>
#include <troupe/net/tls/tls_context.hpp>
#include <troupe/net/link/link_dispatch.hpp>
#include <troupe/net/ucx/ucx_transport.hpp>

namespace troupe::internal {

/// What a DataPlaneBroker is spawned with.
struct DataPlaneSetup {
  int rank = 0;
  std::vector<std::string> task_names; ///< per rank
  auth::Key key{};                     ///< auth::derive_key(cluster token, Purpose::data_plane)
  uint64_t spec_fingerprint = 0;       ///< bound into the handshake's proofs
  std::string bind_host;               ///< "" = every interface
  uint16_t port = 0;                   ///< 0 = any free port
  std::string port_origin;             ///< where a fixed `port` came from, for errors (the variable)
  uint32_t max_frame_bytes = uint32_t{64} << 20; ///< most payload of a data frame (TROUPE_MAX_FRAME_MIB)
  /// TROUPE_TLS=1: every connection runs TLS from its first byte, troupe's
  /// handshake inside it; null: in clear.
  std::shared_ptr<TlsContext> tls;
  /// A peer whose control connection went down is lost once its data
  /// connection has been silent this long (and at least `hint_grace` after
  /// the control plane's news, for bytes still in flight).
  caf::timespan peer_timeout = std::chrono::seconds(4);
  caf::timespan hint_grace = std::chrono::milliseconds(500);
  /// An accepted connection that has not completed troupe's handshake after
  /// this is closed (TROUPE_HANDSHAKE_TIMEOUT_SECONDS).
  caf::timespan hello_timeout = std::chrono::seconds(10);
  /// TROUPE_TRANSPORT: "tcp" opens no UCX worker; "ucx" and "auto" open one
  /// (unless `tls`) and offer it (DataPlaneUcxOfferMsg).
  std::string transport = "tcp";
  std::chrono::microseconds ucx_spin{0}; ///< TROUPE_UCX_SPIN_US
};

/// The bulk data plane of one cluster process: a CAF io broker that owns one
/// TCP connection per other task and moves frames (net/link/frame_header.hpp: a
/// 40-byte header, then the payload bytes, no per-element serialisation)
/// between them and this process's collective group actors.
///
/// 1. It listens on a free port, which the node handshake tells the others.
/// 2. It connects to every task of lower rank and accepts the others. Every
///    connection opens with net/auth's handshake (connection_auth.hpp): both
///    ends prove the cluster token for this connection's fresh nonces, the
///    dialer first, before any frame is parsed; the dialer runs its side on
///    its dialer actor, this broker the acceptor's. A dialer that proved the
///    token is then checked by the Handshake (net/handshake.hpp: its rank
///    dials here and is not taken); a refusal is logged with its address. A
///    frame of another protocol version closes the connection naming the
///    cause.
/// 3. A LinkSendMsg becomes header + bytes on the peer's socket; received
///    frames go to the group named in their header (LinkDispatch).
/// 4. A closed connection after a bye frame is that task's normal exit; any
///    other closed connection reports the peer lost to every group. A
///    PeerLostMsg from the node actor (CAF's heartbeat gave up on the peer)
///    is only a hint while the data connection is open: the control
///    connection of a process that exits normally can drop before this broker
///    read its last frames (run_done, bye). The peer is lost when its data
///    connection closes, or once it has been silent for `peer_timeout` with
///    no unread bytes, never sooner than `hint_grace` after the hint. A peer
///    that is merely busy (no data frames, but heartbeats) is never lost.
/// 5. A connection that has not completed the handshake within
///    `hello_timeout` is closed, naming its address.
/// 6. Over UCX (DataPlaneConnectMsg::ucx; data_plane_broker_ucx.cpp) the
///    frames travel as active messages on a UcxTransport's progress thread
///    instead of sockets, and that thread hands them to their groups itself;
///    peers are admitted by their UCX hello's proof, and
///    with no connection to close, a control-plane loss decides after
///    `hint_grace`, a failed send or receive at once.
/// Runs on the middleman's I/O thread, like every broker; connects run on a
/// dialer actor of their own, so a slow connect stops no heartbeat.
class DataPlaneBroker final : public DataPlaneBrokerHandle::broker_base {
public:
  DataPlaneBroker(caf::actor_config& cfg, DataPlaneSetup setup);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.data_plane"; }

private:
  using Clock = std::chrono::steady_clock;

  /// Listens on the data port (a TLS doorman with TROUPE_TLS=1): the port.
  caf::expected<uint16_t> listen();
  /// Accepted connections still in the handshake at once: each task dials
  /// this one at most once, so more are strangers, refused at once.
  static constexpr std::size_t max_pending_handshakes = 64;

  struct Connection {
    int rank = -1;            ///< -1 until the handshake accepted it
    /// An accepted connection's handshake, until it completes.
    std::unique_ptr<auth::AcceptorHandshake> auth;
    bool awaiting_proof = false; ///< the handshake read the hello and sent its challenge
    std::vector<char> opening;   ///< the hello's first bytes, checked before the rest is read
    bool in_payload = false;  ///< reading the payload of `header`
    FrameHeader header;
    uint64_t serial = 0;      ///< tells a reused socket number from this connection
    Clock::time_point last_read = Clock::now();
    /// The last frame header read whole, for the verdict on a lost peer.
    std::optional<FrameHeader> last_frame;
  };

  /// A peer the control plane reported down while its data connection is open
  /// or still being dialled.
  struct Suspect {
    std::string why;
    Clock::time_point since;
  };

  void on_data(caf::io::connection_handle hdl, std::vector<char>& buf);
  void on_header(caf::io::connection_handle hdl, Connection& conn, const FrameHeader& header);
  void on_handshake(caf::io::connection_handle hdl, Connection& conn, const std::vector<char>& buf);
  /// Closes a connection that has no rank yet, logging why once.
  void refuse(caf::io::connection_handle hdl, const std::string& why);
  void on_closed(caf::io::connection_handle hdl);
  void on_dialed(const DataPlaneDialedMsg& msg);
  void on_control_lost(int rank, const std::string& why);
  void check_loss(int rank);
  /// `accepted`: the peer dialled this task, and the handshake comes first.
  Connection& add_connection(caf::io::connection_handle hdl, bool accepted);
  void send_frame(caf::io::connection_handle hdl, const FrameHeader& header, const std::byte* data);
  void lose(int rank, const std::string& why);
  void check_ready();
  [[nodiscard]] std::string task(int rank) const;
  /// Whether every connection's bytes (and UCX's sends) left after a bye.
  [[nodiscard]] bool bye_done() const { return draining_.empty() && !ucx_flushing_; }

  // UCX (data_plane_broker_ucx.cpp).
  void open_ucx();
  [[nodiscard]] UcxOffer ucx_offer() const;
  caf::result<bool> connect_ucx(const std::vector<DataPlanePeer>& peers);
  void bye_ucx(const FrameHeader& bye);
  void on_ucx_control_lost(int rank, const std::string& why);
  void on_register(const LinkRegisterMsg& msg);
  void check_ucx_loss(int rank, const Suspect& suspect);
  [[nodiscard]] bool ucx_peer(int rank) const { return use_ucx_ && ucx_admitted_.count(rank) != 0; }

  DataPlaneSetup setup_;
  Handshake handshake_;
  uint16_t port_ = 0;
  std::string listen_error_;
  std::map<caf::io::connection_handle, Connection> connections_;
  uint64_t next_serial_ = 0;
  std::map<int, Suspect> suspects_;
  std::map<int, caf::io::connection_handle> by_rank_;
  LinkDispatch dispatch_;
  bool want_ready_ = false;
  /// Ranks whose connects still run on their dialer actors.
  std::set<int> dialing_;
  caf::response_promise ready_;
  /// Peers that said bye: their loss is their normal exit.
  std::map<int, bool> left_;
  /// Connections whose bytes must be written before the bye is answered.
  std::map<caf::io::connection_handle, bool> draining_;
  caf::response_promise bye_;
  /// Shared with the collective groups that send through it directly.
  std::shared_ptr<UcxTransport> ucx_;
  std::string ucx_error_;      ///< why there is no ucx_
  bool use_ucx_ = false;       ///< DataPlaneConnectMsg chose UCX
  std::set<int> ucx_admitted_; ///< ranks whose UCX hello proved the token
  /// Over UCX the frames go to their groups straight from the progress
  /// thread, which alone touches this dispatch once UCX carries the data
  /// plane (registrations and losses are posted to it).
  std::shared_ptr<LinkDispatch> ucx_dispatch_;
  /// The groups registered now, to hand over to ucx_dispatch_ at the connect.
  std::map<uint64_t, LinkReceiverHandle> registered_;
  bool ucx_flushing_ = false;  ///< a bye's UCX flush is running
};

} // namespace troupe::internal
