#include <troupe/net/bootstrap/control_plane_gate.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <list>
#include <optional>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <troupe/core/log.hpp>
#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/auth/refusal_log.hpp>
#include <troupe/net/tls/tls_handshake.hpp>

namespace troupe::internal {

namespace {

using Clock = std::chrono::steady_clock;

std::string address_of(const sockaddr_storage& peer) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (peer.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(peer);
    ::inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
  } else if (peer.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(peer);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    port = ntohs(in6.sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// A listening socket on host:port ("" = every interface, IPv6 with IPv4
// mapped where the host has IPv6, as CAF's doorman does), or -1 and why.
int listen_on(const std::string& host, uint16_t port, std::string& why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | (host.empty() ? 0 : AI_NUMERICHOST);
  hints.ai_family = host.empty() ? AF_INET6 : AF_UNSPEC;
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0 && host.empty()) { // no IPv6 on this host
    hints.ai_family = AF_INET;
    rc = ::getaddrinfo(nullptr, service.c_str(), &hints, &found);
  }
  if (rc != 0) {
    why = std::string("cannot resolve the address to listen on: ") + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (auto* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      why = std::string("socket() failed: ") + std::strerror(errno);
      continue;
    }
    const int on = 1;
    const int off = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (ai->ai_family == AF_INET6)
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

std::string seconds_of(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", std::chrono::duration<double>(t).count());
  return buf;
}

} // namespace

// One connection in the handshake: what it still has to send or receive.
struct ControlPlaneGate::Pending {
  enum class Step {
    hello, ///< reading the DialerHello
    proof, ///< reading the dialer's proof
    tls,   ///< TROUPE_TLS=1: the server's side of TLS, after the verdict left
  };
  int fd = -1;
  std::string address;
  Clock::time_point deadline;
  std::unique_ptr<auth::AcceptorHandshake> handshake;
  Step step = Step::hello;
  std::vector<char> in;   ///< what was read of the current message
  std::size_t want = sizeof(auth::DialerHello);
  std::vector<char> out;  ///< what is left to send
  bool admit_after = false; ///< after `out` left: hand on (through TLS first, when on)
  bool close_after = false; ///< after `out` left: close (a refusal)
  /// Told once `out` (the refusal) left: the node may end the process at
  /// once, and the dialer must learn why first.
  std::optional<GateRefusal> report;
  std::unique_ptr<TlsHandshake> tls;
  short tls_wait = POLLIN; ///< what the TLS handshake waits for

  [[nodiscard]] short events() const noexcept {
    if (step == Step::tls)
      return tls_wait;
    return out.empty() ? POLLIN : POLLOUT;
  }
};

std::unique_ptr<ControlPlaneGate> ControlPlaneGate::open(ControlPlaneGateSetup setup, std::string& why) {
  const int listener = listen_on(setup.bind_host, setup.port, why);
  if (listener < 0)
    return nullptr;
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                                          : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    why = std::string("eventfd() failed: ") + std::strerror(errno);
    ::close(listener);
    return nullptr;
  }
  return std::unique_ptr<ControlPlaneGate>(new ControlPlaneGate(std::move(setup), listener, wake, port));
}

ControlPlaneGate::ControlPlaneGate(ControlPlaneGateSetup setup, int listener, int wake, uint16_t port)
  : setup_(std::move(setup)), listener_(listener), wake_(wake), port_(port), thread_([this] { run(); }) {}

ControlPlaneGate::~ControlPlaneGate() {
  const uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(wake_, &one, sizeof one);
  thread_.join();
  ::close(listener_);
  ::close(wake_);
}

void ControlPlaneGate::run() {
  std::list<Pending> pending;
  // Closes a connection, logging why once (within the refusal log's bound):
  // the node actor logs a refused claim.
  auto drop = [&](std::list<Pending>::iterator p, const std::string& why) {
    ::close(p->fd);
    if (p->report && setup_.refused)
      setup_.refused(*p->report);
    else if (refusal_log_allowed())
      TROUPE_LOG(warning, "net") << "control port: " << (p->report ? "refused" : "closed") << " the connection from "
                                 << p->address << ": " << (p->report ? p->report->why : why);
    return pending.erase(p);
  };
  // After the hello or the proof: what to send, and what follows it; "" or
  // why the connection is closed at once.
  auto after_message = [&](Pending& p) -> std::string {
    auto& handshake = *p.handshake;
    if (p.step == Pending::Step::hello) {
      if (auto why = handshake.on_hello(p.in); !why.empty()) {
        if (handshake.refusal() == auth::HelloRefusal::none)
          return why; // not troupe's handshake: nothing to answer
        p.out = handshake.challenge(); // the refusal, so that the dialer learns why
        p.close_after = true;
        p.report = GateRefusal{p.address,
                               handshake.dialer_rank(),
                               handshake.dialer_pid(),
                               false,
                               handshake.refusal() == auth::HelloRefusal::spec,
                               handshake.refusal() == auth::HelloRefusal::tls,
                               handshake.dialer_spec_fingerprint(),
                               why};
        return {};
      }
      p.out = handshake.challenge();
      p.step = Pending::Step::proof;
      p.want = auth::mac_bytes;
      return {};
    }
    if (!handshake.on_proof(p.in)) {
      p.out = handshake.verdict(auth::Verdict::wrong_key);
      p.close_after = true;
      p.report = GateRefusal{p.address, handshake.dialer_rank(), handshake.dialer_pid(), true, false, false,
                             handshake.dialer_spec_fingerprint(), "it cannot prove the cluster token"};
      return {};
    }
    // Who may join is the node actor's call, on the hello that follows.
    p.out = handshake.verdict(auth::Verdict::accepted);
    p.admit_after = true;
    return {};
  };
  // Advances `p`'s TLS handshake: "" (done: `ssl` set, or waiting) or why it failed.
  auto advance_tls = [&](Pending& p, SSL*& ssl) -> std::string {
    std::string why;
    switch (p.tls->advance(why)) {
      case TlsHandshake::Step::done: ssl = p.tls->release(); return {};
      case TlsHandshake::Step::want_read: p.tls_wait = POLLIN; return {};
      case TlsHandshake::Step::want_write: p.tls_wait = POLLOUT; return {};
      case TlsHandshake::Step::failed: return why;
    }
    return why;
  };
  // Serves one ready connection: "" while it goes on, else why it ends;
  // `admit` set (with `ssl` under TLS) when it is to be handed on.
  auto serve = [&](Pending& p, bool& admit, SSL*& ssl, bool& gone) -> std::string {
    if (p.step == Pending::Step::tls) {
      auto why = advance_tls(p, ssl);
      admit = why.empty() && ssl != nullptr;
      return why;
    }
    if (!p.out.empty()) {
      const ssize_t n = ::send(p.fd, p.out.data(), p.out.size(), MSG_NOSIGNAL);
      const int error = errno;
      if (n < 0 && error != EAGAIN && error != EINTR)
        return std::string("it went away: ") + std::strerror(error);
      if (n > 0)
        p.out.erase(p.out.begin(), p.out.begin() + n);
      if (!p.out.empty())
        return {};
      if (p.close_after) {
        gone = true; // refused, and the dialer was told why
        return {};
      }
      if (p.admit_after && !setup_.tls) {
        admit = true;
        return {};
      }
      if (p.admit_after) { // TLS before CAF gets the socket, within the same deadline
        p.step = Pending::Step::tls;
        p.tls = std::make_unique<TlsHandshake>(*setup_.tls, p.fd, TlsHandshake::Role::server);
        if (auto why = advance_tls(p, ssl); !why.empty())
          return why;
        admit = ssl != nullptr;
      }
      return {};
    }
    const auto have = p.in.size();
    p.in.resize(p.want);
    const ssize_t n = ::recv(p.fd, p.in.data() + have, p.want - have, 0);
    const int error = errno;
    p.in.resize(have + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n == 0)
      return "it closed the connection after " + std::to_string(have) + " bytes of troupe's handshake";
    if (n < 0 && error != EAGAIN && error != EINTR)
      return std::string("it went away: ") + std::strerror(error);
    if (p.step == Pending::Step::hello && have < auth::AcceptorHandshake::opening_bytes
        && p.in.size() >= auth::AcceptorHandshake::opening_bytes)
      if (auto why = auth::AcceptorHandshake::check_opening(p.in); !why.empty())
        return why; // not troupe: no need to wait for the rest
    if (p.in.size() < p.want)
      return {};
    auto why = after_message(p);
    p.in.clear();
    return why;
  };
  auto accept_paused_until = Clock::now();
  for (;;) {
    const bool accepting = Clock::now() >= accept_paused_until;
    std::vector<pollfd> fds{{listener_, static_cast<short>(accepting ? POLLIN : 0), 0}, {wake_, POLLIN, 0}};
    auto next_deadline = Clock::now() + std::chrono::seconds(1);
    if (!accepting)
      next_deadline = std::min(next_deadline, accept_paused_until);
    for (const auto& p : pending) {
      fds.push_back({p.fd, p.events(), 0});
      next_deadline = std::min(next_deadline, p.deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now()).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait + 1, 0, 1000))) < 0
        && errno != EINTR) {
      TROUPE_LOG(error, "net") << "control port: poll failed (" << std::strerror(errno)
                               << "); the task takes no more connections";
      break;
    }
    if (fds[1].revents != 0)
      break;
    // Connections in the handshake (in the order of `fds`).
    auto p = pending.begin();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) {
        ++p;
        continue;
      }
      bool admit = false;
      bool gone = false;
      SSL* ssl = nullptr;
      std::string why;
      try {
        why = serve(*p, admit, ssl, gone);
      } catch (const std::exception& e) { // OpenSSL failed: end this handshake, not the gate
        why = std::string("the handshake failed here: ") + e.what();
      }
      if (admit) {
        // Handed on outside the try: the socket is the node's now, whatever admit does.
        const int fd = std::exchange(p->fd, -1);
        p = pending.erase(p);
        setup_.admit(fd, ssl);
        continue;
      }
      if (!why.empty() || gone)
        p = drop(p, why);
      else
        ++p;
    }
    const auto now = Clock::now();
    for (auto q = pending.begin(); q != pending.end();)
      q = q->deadline <= now ? drop(q, std::string("it did not complete ")
                                         + (q->step == Pending::Step::tls ? "TLS" : "troupe's handshake")
                                         + " within " + seconds_of(setup_.handshake_timeout)
                                         + " (TROUPE_HANDSHAKE_TIMEOUT_SECONDS)")
                             : std::next(q);
    // New connections, after the old ones were served: their fds are not in `fds`.
    if (fds[0].revents == 0)
      continue;
    for (;;) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      const int fd = ::accept4(listener_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors or memory: the listener stays readable, so
          // pause accepting instead of spinning; connections wait in the backlog.
          if (refusal_log_allowed())
            TROUPE_LOG(error, "net") << "control port: cannot accept a connection (" << std::strerror(errno)
                                     << "); trying again in 100 ms";
          accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
        }
        break; // EAGAIN, or a connection that went before it was taken
      }
      const auto address = address_of(peer);
      if (pending.size() >= setup_.max_pending) {
        if (refusal_log_allowed())
          TROUPE_LOG(warning, "net") << "control port: refused the connection from " << address << ": "
                                     << pending.size() << " connections are already in the handshake";
        ::close(fd);
        continue;
      }
      const int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      try {
        Pending entry;
        entry.fd = fd;
        entry.address = address;
        entry.deadline = now + setup_.handshake_timeout;
        entry.handshake = std::make_unique<auth::AcceptorHandshake>(
          setup_.key, auth::Purpose::control_plane, setup_.spec_fingerprint, setup_.rank, setup_.tls != nullptr);
        pending.push_back(std::move(entry));
      } catch (const std::exception& e) { // no nonce from OpenSSL
        if (refusal_log_allowed())
          TROUPE_LOG(error, "net") << "control port: refused the connection from " << address << ": " << e.what();
        ::close(fd);
      }
    }
  }
  for (auto& p : pending)
    ::close(p.fd);
}

} // namespace troupe::internal
