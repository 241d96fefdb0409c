#include <troupe/net/link/data_plane_broker.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <sys/ioctl.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/network/native_socket.hpp>

#include <troupe/core/hop_trace.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/type_ids.hpp>
#include <troupe/net/auth/refusal_log.hpp>
#include <troupe/net/link/tcp_dial.hpp>
#include <troupe/net/tls/tls_handshake.hpp>
#include <troupe/net/tls/tls_scribe.hpp>

namespace troupe::internal {

namespace {

// Small frames must leave at once (a 4 KiB all-reduce waits for one) rather
// than wait for Nagle's algorithm; CAF's connection handle ids are the sockets.
// (4 MiB socket buffers, tried too, changed nothing measurable.)
void tune_socket(caf::io::connection_handle hdl) {
  (void)caf::io::network::tcp_nodelay(static_cast<caf::io::network::native_socket>(hdl.id()), true);
}

// Bytes the kernel holds for `hdl` that this broker has not read yet: the
// frames of a peer that exited normally can still be there.
int unread_bytes(caf::io::connection_handle hdl) {
  int n = 0;
  if (::ioctl(static_cast<int>(hdl.id()), FIONREAD, &n) != 0)
    return 0;
  return n;
}

std::string seconds_of(caf::timespan t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", std::chrono::duration<double>(t).count());
  return buf;
}

// Runs the blocking connect and the dialer's side of the handshake on a
// thread of its own, not on the I/O thread that also carries every heartbeat.
void dial(caf::blocking_actor* self, DataPlaneBrokerHandle broker, DataPlanePeer peer, caf::timespan timeout,
          auth::Key key, uint64_t spec_fingerprint, int rank, std::shared_ptr<TlsContext> tls) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto result = dial_tcp(peer.host, peer.port, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  std::shared_ptr<TlsHandoff> session;
  if (result.fd >= 0) {
    std::string why;
    try {
      // With TLS, from the first byte: troupe's handshake runs inside it.
      auto transfer = auth::socket_transfer(result.fd);
      if (tls) {
        SSL* ssl = tls_connect(*tls, result.fd, deadline, why);
        session = std::make_shared<TlsHandoff>(ssl);
        transfer = tls_transfer(ssl, result.fd);
      }
      if (why.empty())
        why = auth::dial_handshake(transfer, deadline, key, auth::Purpose::data_plane, spec_fingerprint, rank,
                                   peer.rank, static_cast<int>(::getpid()), tls != nullptr)
                .why;
    } catch (const std::exception& e) { // OpenSSL failed: the broker must still hear of this dial
      why = e.what();
    }
    if (!why.empty()) {
      session.reset();
      ::close(result.fd);
      result.fd = -1;
      result.error = std::move(why);
    }
  }
  self->send(broker, DataPlaneDialedMsg{std::move(peer), result.fd, std::move(result.error), std::move(session)});
}

} // namespace

DataPlaneBroker::DataPlaneBroker(caf::actor_config& cfg, DataPlaneSetup setup)
  : DataPlaneBrokerHandle::broker_base(cfg), setup_(std::move(setup)),
    // The token was proven by the connection's handshake: the Handshake
    // decides only about ranks here.
    handshake_(setup_.rank, setup_.task_names, 0),
    dispatch_([this](const LinkReceiverHandle& to, LinkFrameMsg msg) { send(to, std::move(msg)); },
              [this](const LinkReceiverHandle& to, PeerLostMsg msg) { send(to, std::move(msg)); },
              [this](LinkSendMsg msg) { send(this, std::move(msg)); }) {
}

void DataPlaneBroker::on_exit() {
  // Groups hold this broker and it holds them, and its pending promises hold
  // it: break the cycles.
  dispatch_ = LinkDispatch({}, {});
  // Joins the progress thread and drops its callbacks, which hold this broker
  // and, through the dispatch, the groups (which may hold the transport).
  if (ucx_)
    ucx_->shutdown();
  ucx_.reset();
  ucx_dispatch_.reset();
  ready_ = caf::response_promise{};
  bye_ = caf::response_promise{};
}

std::string DataPlaneBroker::task(int rank) const {
  if (rank >= 0 && static_cast<size_t>(rank) < setup_.task_names.size())
    return setup_.task_names[static_cast<size_t>(rank)];
  return "rank " + std::to_string(rank);
}

caf::expected<uint16_t> DataPlaneBroker::listen() {
  const char* host = setup_.bind_host.empty() ? nullptr : setup_.bind_host.c_str();
  if (!setup_.tls) {
    auto listening = add_tcp_doorman(setup_.port, host, true);
    if (!listening)
      return listening.error();
    return listening->second;
  }
  // Accepted connections become TLS scribes (server side) from their first byte.
  auto fd = caf::io::network::new_tcp_acceptor_impl(setup_.port, host, true);
  if (!fd)
    return fd.error();
  auto doorman = caf::make_counted<TlsDoorman>(default_multiplexer_of(system().middleman().backend()), *fd, setup_.tls);
  const uint16_t port = doorman->port();
  add_doorman(std::move(doorman));
  return port;
}

DataPlaneBroker::behavior_type DataPlaneBroker::make_behavior() {
  auto listening = listen();
  if (listening)
    port_ = *listening;
  else if (setup_.port != 0)
    listen_error_ = "port " + std::to_string(setup_.port) + " (" + setup_.port_origin + ") is taken or not "
                    "allowed: " + to_string(listening.error()) + "; choose another value or unset it";
  else
    listen_error_ = to_string(listening.error());
  open_ucx();
  return {
    [this](const DataPlanePortMsg&) -> caf::result<uint16_t> {
      if (port_ == 0)
        return caf::make_error(Errc::not_found, "the data plane cannot listen on "
                                                  + (setup_.bind_host.empty() ? std::string("every interface")
                                                                              : setup_.bind_host)
                                                  + ": " + listen_error_);
      return port_;
    },
    [this](const DataPlaneUcxOfferMsg&) { return ucx_offer(); },
    [this](const DataPlaneSenderMsg&) {
      return FrameSenderRef{use_ucx_ ? std::shared_ptr<FrameSender>(ucx_) : nullptr};
    },
    [this](const DataPlaneConnectMsg& msg) -> caf::result<bool> {
      if (msg.ucx)
        return connect_ucx(msg.peers);
      DataPlaneBrokerHandle me{this};
      for (const auto& peer : msg.peers) {
        if (peer.rank >= setup_.rank)
          continue; // higher ranks connect to this one
        dialing_.insert(peer.rank);
        system().spawn(dial, me, peer, msg.timeout, setup_.key, setup_.spec_fingerprint, setup_.rank, setup_.tls);
      }
      want_ready_ = true;
      ready_ = make_response_promise();
      check_ready();
      return ready_;
    },
    [this](const DataPlaneByeMsg&) -> caf::result<bool> {
      FrameHeader bye;
      bye.type = FrameType::bye;
      for (const auto& [rank, hdl] : by_rank_) {
        ack_writes(hdl, true);
        draining_[hdl] = true;
        send_frame(hdl, bye, nullptr);
      }
      if (use_ucx_)
        bye_ucx(bye);
      if (bye_done())
        return true;
      bye_ = make_response_promise();
      return bye_;
    },
    [this](const caf::io::data_transferred_msg& msg) {
      if (msg.remaining == 0 && draining_.erase(msg.handle) && bye_done() && bye_.pending())
        bye_.deliver(true);
    },
    [this](const UcxByeMsg& msg) {
      if (!dispatch_.lost(msg.from))
        left_[msg.from] = true;
    },
    [this](const UcxAdmittedMsg& msg) {
      ucx_admitted_.insert(msg.rank);
      check_ready();
    },
    [this](const UcxFailedMsg& msg) { lose(msg.rank, msg.why); },
    [this](const UcxFlushedMsg&) {
      ucx_flushing_ = false;
      if (bye_done() && bye_.pending())
        bye_.deliver(true);
    },
    [this](const caf::io::new_connection_msg& msg) {
      const auto pending = std::count_if(connections_.begin(), connections_.end(),
                                         [](const auto& entry) { return entry.second.auth != nullptr; });
      if (static_cast<std::size_t>(pending) >= max_pending_handshakes) {
        refuse(msg.handle, std::to_string(pending) + " connections are already in the handshake (a task dials "
                           "once; something else is opening connections to this port)");
        return;
      }
      try {
        auto& conn = add_connection(msg.handle, true);
        delayed_send(this, setup_.hello_timeout, DataPlaneHelloDeadlineMsg{msg.handle, conn.serial});
      } catch (const std::exception& e) { // OpenSSL failed: no handshake, no connection
        refuse(msg.handle, e.what());
      }
    },
    [this](const DataPlaneHelloDeadlineMsg& msg) {
      auto i = connections_.find(msg.hdl);
      if (i == connections_.end() || i->second.serial != msg.serial || i->second.rank >= 0)
        return;
      if (refusal_log_allowed())
        TROUPE_LOG(error, "net") << "data plane: closing the connection from " << remote_addr(msg.hdl) << ":"
                                 << remote_port(msg.hdl) << ": it did not complete troupe's handshake within "
                               << seconds_of(setup_.hello_timeout)
                               << " (TROUPE_HANDSHAKE_TIMEOUT_SECONDS); is something other than a troupe task "
                                  "connecting to this port?";
      close(msg.hdl);
      connections_.erase(i);
    },
    [this](const DataPlaneDialedMsg& msg) { on_dialed(msg); },
    [this](caf::io::new_data_msg& msg) { on_data(msg.handle, msg.buf); },
    [this](const caf::io::connection_closed_msg& msg) { on_closed(msg.handle); },
    [](const caf::io::acceptor_closed_msg&) {},
    [this](LinkSendMsg& msg) {
      trace_hop(Hop::link_send, msg.header.run, static_cast<uint8_t>(msg.header.type));
      if (use_ucx_) {
        if (ucx_peer(msg.to) && !dispatch_.lost(msg.to))
          ucx_->send(msg.to, msg.header, std::move(msg.bytes));
        return;
      }
      auto i = by_rank_.find(msg.to);
      if (i == by_rank_.end() || dispatch_.lost(msg.to))
        return;
      trace_hop(Hop::wire_send, msg.header.run, static_cast<uint8_t>(msg.header.type));
      send_frame(i->second, msg.header, msg.bytes.data);
    },
    [this](const LinkRegisterMsg& msg) { on_register(msg); },
    [this](const PeerLostMsg& msg) { on_control_lost(msg.rank, msg.why); },
    [this](const DataPlaneCheckLossMsg& msg) { check_loss(msg.rank); },
  };
}

void DataPlaneBroker::send_frame(caf::io::connection_handle hdl, const FrameHeader& header, const std::byte* data) {
  write(hdl, sizeof header, &header);
  if (header.size > 0)
    write(hdl, header.size, data);
  flush(hdl);
}

void DataPlaneBroker::on_data(caf::io::connection_handle hdl, std::vector<char>& buf) {
  auto i = connections_.find(hdl);
  if (i == connections_.end())
    return;
  auto& conn = i->second;
  conn.last_read = Clock::now();
  if (conn.auth) {
    try {
      on_handshake(hdl, conn, buf);
    } catch (const std::exception& e) { // OpenSSL failed: end this handshake, not the broker
      refuse(hdl, e.what());
    }
    return;
  }
  if (conn.in_payload) {
    conn.in_payload = false;
    configure_read(hdl, caf::io::receive_policy::exactly(sizeof(FrameHeader)));
    // Take the payload without copying it: CAF swaps this buffer back into
    // the socket's stream after the handler, which then sizes it for the next read.
    auto bytes = std::make_shared<std::vector<char>>();
    bytes->swap(buf);
    FrameBytes frame{bytes, reinterpret_cast<const std::byte*>(bytes->data()), bytes->size()};
    trace_hop(Hop::wire_receive, conn.header.run, static_cast<uint8_t>(conn.header.type));
    trace_hop(Hop::link_dispatch, conn.header.run, static_cast<uint8_t>(conn.header.type));
    dispatch_.on_frame(LinkFrameMsg{conn.rank, conn.header, std::move(frame)});
    return;
  }
  FrameHeader header;
  if (buf.size() != sizeof header) { // CAF delivers exactly what configure_read asked for
    TROUPE_LOG(error, "net") << "data plane: a frame header of " << buf.size() << " bytes from " << task(conn.rank);
    return;
  }
  std::memcpy(&header, buf.data(), sizeof header);
  on_header(hdl, conn, header);
}

void DataPlaneBroker::on_header(caf::io::connection_handle hdl, Connection& conn, const FrameHeader& header) {
  std::string garbled;
  if (header.magic != FrameHeader::magic_value)
    garbled = "it does not speak troupe's frame protocol";
  else if (header.version != FrameHeader::current_version)
    garbled = "it speaks version " + std::to_string(header.version) + " of troupe's frame protocol and this task "
              "version " + std::to_string(FrameHeader::current_version) + " (run the same troupe build on every task)";
  else if (conn.rank < 0)
    garbled = "it sent a frame before the handshake"; // unreachable: the handshake reads first
  else if (const auto limit = frame_payload_limit(header.type, setup_.max_frame_bytes); !limit)
    garbled = "it sent a frame of unknown type " + std::to_string(static_cast<int>(header.type));
  else if (header.size > *limit)
    garbled = "its " + std::string(frame_type_name(header.type)) + " frame claims " + std::to_string(header.size)
              + " payload bytes, more than the " + std::to_string(*limit) + " that frame type carries"
              + (header.type == FrameType::data ? " (TROUPE_MAX_FRAME_MIB; every worker must use the same value)"
                                                : "");
  if (!garbled.empty()) {
    TROUPE_LOG(error, "net") << "data plane: closing the connection from " << remote_addr(hdl) << " ("
                             << task(conn.rank) << "): " << garbled;
    const int rank = conn.rank;
    close(hdl);
    connections_.erase(hdl);
    if (rank >= 0)
      lose(rank, garbled);
    return;
  }
  conn.last_frame = header;
  if (header.type == FrameType::bye && conn.rank >= 0) {
    left_[conn.rank] = true;
    return;
  }
  if (header.size == 0) {
    trace_hop(Hop::wire_receive, header.run, static_cast<uint8_t>(header.type));
    trace_hop(Hop::link_dispatch, header.run, static_cast<uint8_t>(header.type));
    dispatch_.on_frame(LinkFrameMsg{conn.rank, header, FrameBytes{}});
    return;
  }
  conn.header = header;
  conn.in_payload = true;
  configure_read(hdl, caf::io::receive_policy::exactly(header.size));
}

void DataPlaneBroker::refuse(caf::io::connection_handle hdl, const std::string& why) {
  if (refusal_log_allowed())
    TROUPE_LOG(error, "net") << "data plane: refused the connection from " << remote_addr(hdl) << ":"
                             << remote_port(hdl) << ": " << why;
  close(hdl); // after what was written (a verdict) has left
  connections_.erase(hdl);
}

void DataPlaneBroker::on_handshake(caf::io::connection_handle hdl, Connection& conn, const std::vector<char>& buf) {
  auto& handshake = *conn.auth;
  if (!conn.awaiting_proof && conn.opening.empty()) {
    if (auto why = auth::AcceptorHandshake::check_opening(buf); !why.empty()) {
      refuse(hdl, why); // not troupe: no need to wait for the rest
      return;
    }
    conn.opening = buf;
    configure_read(hdl, caf::io::receive_policy::exactly(sizeof(auth::DialerHello) - conn.opening.size()));
    return;
  }
  if (!conn.awaiting_proof) {
    std::vector<char> hello = std::move(conn.opening);
    hello.insert(hello.end(), buf.begin(), buf.end());
    if (auto why = handshake.on_hello(hello); !why.empty()) {
      if (handshake.refusal() != auth::HelloRefusal::none) { // a troupe task: tell it why
        const auto refusal = handshake.challenge();
        write(hdl, refusal.size(), refusal.data());
        flush(hdl);
      }
      refuse(hdl, why);
      return;
    }
    const auto challenge = handshake.challenge();
    write(hdl, challenge.size(), challenge.data());
    flush(hdl);
    conn.awaiting_proof = true;
    configure_read(hdl, caf::io::receive_policy::exactly(auth::mac_bytes));
    return;
  }
  const int rank = handshake.dialer_rank();
  auto answer = [&](auth::Verdict verdict) {
    const auto bytes = handshake.verdict(verdict);
    write(hdl, bytes.size(), bytes.data());
    flush(hdl);
  };
  if (!handshake.on_proof(buf)) {
    answer(auth::Verdict::wrong_key);
    refuse(hdl, "it claims rank " + std::to_string(rank) + " but cannot prove the cluster token (another "
                "TROUPE_CLUSTER_TOKEN, or not a task of this cluster)");
    return;
  }
  PeerClaim claim;
  claim.rank = rank;
  // A rank that was lost stays lost: its frames would reach groups that
  // already failed its collectives.
  const bool taken = by_rank_.count(rank) != 0 || dispatch_.lost(rank);
  if (const auto refusal = handshake_.refusal(claim, taken); !refusal.empty()) {
    answer(auth::Verdict::refused);
    refuse(hdl, refusal);
    return;
  }
  answer(auth::Verdict::accepted);
  conn.auth.reset();
  conn.rank = rank;
  by_rank_[rank] = hdl;
  configure_read(hdl, caf::io::receive_policy::exactly(sizeof(FrameHeader)));
  check_ready();
}

void DataPlaneBroker::on_closed(caf::io::connection_handle hdl) {
  auto i = connections_.find(hdl);
  if (i == connections_.end())
    return;
  const int rank = i->second.rank;
  connections_.erase(i);
  draining_.erase(hdl);
  if (bye_done() && bye_.pending())
    bye_.deliver(true);
  if (rank >= 0) {
    by_rank_.erase(rank);
    lose(rank, left_.count(rank) ? "it shut down (its program ended)"
                                 : "its data connection closed (the process exited, was killed or closed its sockets)");
  }
}

void DataPlaneBroker::lose(int rank, const std::string& reason) {
  if (dispatch_.lost(rank))
    return;
  const bool left = left_.count(rank) != 0;
  const std::string why = left ? "it shut down (its program ended)" : reason;
  if (left)
    TROUPE_LOG(info, "net") << "task " << task(rank) << " left the cluster";
  else
    TROUPE_LOG(warning, "net") << "task " << task(rank) << " is lost: " << why;
  dispatch_.on_peer_lost(rank, why, left);
  if (use_ucx_)
    ucx_->post([d = ucx_dispatch_, rank, why, left] { d->on_peer_lost(rank, why, left); });
  suspects_.erase(rank);
  if (ucx_ && ucx_admitted_.erase(rank) != 0)
    ucx_->drop(rank);
  if (auto i = by_rank_.find(rank); i != by_rank_.end()) {
    close(i->second);
    connections_.erase(i->second);
    by_rank_.erase(i);
  }
  check_ready();
}

DataPlaneBroker::Connection& DataPlaneBroker::add_connection(caf::io::connection_handle hdl, bool accepted) {
  tune_socket(hdl);
  auto& conn = connections_[hdl];
  conn = Connection{};
  conn.serial = ++next_serial_;
  if (accepted) {
    conn.auth = std::make_unique<auth::AcceptorHandshake>(setup_.key, auth::Purpose::data_plane,
                                                          setup_.spec_fingerprint, setup_.rank, setup_.tls != nullptr);
    configure_read(hdl, caf::io::receive_policy::exactly(auth::AcceptorHandshake::opening_bytes));
  } else {
    configure_read(hdl, caf::io::receive_policy::exactly(sizeof(FrameHeader)));
  }
  return conn;
}

void DataPlaneBroker::on_dialed(const DataPlaneDialedMsg& msg) {
  const auto& peer = msg.peer;
  dialing_.erase(peer.rank);
  if (msg.fd < 0) {
    const std::string failed = "cannot open the data connection to task " + task(peer.rank) + " at " + peer.host
                               + ":" + std::to_string(peer.port) + ": " + msg.error;
    if (auto s = suspects_.find(peer.rank); s != suspects_.end()) {
      lose(peer.rank, s->second.why + ", and this task " + failed);
      return;
    }
    if (ready_.pending()) {
      ready_.deliver(caf::make_error(Errc::peer_lost, failed));
      want_ready_ = false;
    }
    return;
  }
  if (dispatch_.lost(peer.rank)) { // the control plane lost it while the connect ran
    ::close(msg.fd);
    return;
  }
  // The dialer actor completed the handshake: the peer proved the token.
  caf::io::connection_handle hdl;
  if (msg.tls) {
    auto& mpx = default_multiplexer_of(system().middleman().backend());
    hdl = caf::io::network::conn_hdl_from_socket(msg.fd);
    add_scribe(caf::make_counted<TlsScribe>(mpx, msg.fd, setup_.tls, msg.tls->release()));
  } else {
    hdl = add_scribe(msg.fd);
  }
  auto& conn = add_connection(hdl, false);
  conn.rank = peer.rank;
  by_rank_[peer.rank] = hdl;
  check_ready();
  // Reported down while this dial ran: from now on its data connection decides.
  check_loss(peer.rank);
}

void DataPlaneBroker::on_control_lost(int rank, const std::string& why) {
  if (use_ucx_) {
    on_ucx_control_lost(rank, why);
    return;
  }
  if (dialing_.count(rank) != 0 && !dispatch_.lost(rank)) {
    // The handshake ends on the acceptor's side first: a peer that has
    // accepted this dial may finish its program and exit before this broker
    // hears the dial succeed. Wait for the dial a little.
    if (suspects_.count(rank) == 0) {
      TROUPE_LOG(info, "net") << "task " << task(rank) << ": " << why
                              << "; the data connection being dialled to it decides whether it is lost";
      suspects_[rank] = Suspect{why, Clock::now()};
      delayed_send(this, setup_.hint_grace, DataPlaneCheckLossMsg{rank});
    }
    return;
  }
  if (by_rank_.count(rank) == 0 || left_.count(rank) != 0) {
    // No data connection to wait for, or it said bye: every frame it sent is here.
    lose(rank, why);
    return;
  }
  if (dispatch_.lost(rank) || suspects_.count(rank) != 0)
    return;
  TROUPE_LOG(info, "net") << "task " << task(rank) << ": " << why
                          << "; its data connection decides whether it is lost";
  suspects_[rank] = Suspect{why, Clock::now()};
  check_loss(rank);
}

void DataPlaneBroker::check_loss(int rank) {
  auto s = suspects_.find(rank);
  if (s == suspects_.end())
    return; // lost meanwhile
  if (use_ucx_) {
    check_ucx_loss(rank, s->second);
    return;
  }
  if (dialing_.count(rank) != 0) {
    const auto now = Clock::now();
    if (now >= s->second.since + setup_.hint_grace)
      lose(rank, s->second.why + ", and the data connection being dialled to it did not complete within "
                   + seconds_of(setup_.hint_grace) + " after that");
    else
      delayed_send(this, std::chrono::duration_cast<caf::timespan>(s->second.since + setup_.hint_grace - now),
                   DataPlaneCheckLossMsg{rank});
    return;
  }
  auto c = by_rank_.find(rank);
  if (c == by_rank_.end())
    return; // gone meanwhile
  auto i = connections_.find(c->second);
  if (i == connections_.end())
    return;
  const auto& conn = i->second;
  const auto now = Clock::now();
  auto due = std::max(conn.last_read + setup_.peer_timeout, s->second.since + setup_.hint_grace);
  if (now >= due && unread_bytes(c->second) == 0) {
    // What this task last saw of it, so that a loss caused by something
    // else (a stalled network, a peer busy elsewhere) can be told apart.
    std::string last = "no frame came from it";
    if (const auto& h = conn.last_frame)
      last = "the last frame from it was a " + std::string(frame_type_name(h->type)) + " frame of group "
             + std::to_string(h->group) + ", run " + std::to_string(h->run) + ", collective "
             + std::to_string(h->seq) + " (" + std::to_string(h->size) + " bytes)";
    lose(rank, s->second.why + ", and its data connection has been silent for "
                 + seconds_of(std::chrono::duration_cast<caf::timespan>(now - conn.last_read))
                 + " (TROUPE_PEER_TIMEOUT_SECONDS); " + last);
    return;
  }
  if (due <= now) // bytes are waiting to be read: look again once they had time
    due = now + setup_.hint_grace;
  delayed_send(this, std::chrono::duration_cast<caf::timespan>(due - now), DataPlaneCheckLossMsg{rank});
}

void DataPlaneBroker::check_ready() {
  if (!want_ready_)
    return;
  // Every other task must have connected. One that connected and has
  // already said bye counts: a task that finished its program before this one
  // asked for the data plane (a busy machine) was there, and its absence is
  // an error only for the collectives that would need it.
  bool waiting = !dialing_.empty();
  for (int rank = 0; rank < static_cast<int>(setup_.task_names.size()); ++rank) {
    if (rank == setup_.rank || by_rank_.count(rank) != 0 || left_.count(rank) != 0 || ucx_peer(rank))
      continue;
    if (const auto* loss = dispatch_.loss_of(rank)) {
      want_ready_ = false;
      if (ready_.pending())
        ready_.deliver(caf::make_error(Errc::peer_lost, "task " + task(rank) + " was lost while the data plane "
                                                          "was connecting: " + loss->why));
      return;
    }
    waiting = true;
  }
  if (waiting)
    return;
  want_ready_ = false;
  if (ready_.pending())
    ready_.deliver(true);
}

} // namespace troupe::internal
