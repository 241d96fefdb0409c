// The control port's gate over real sockets: the test dials it as a task
// would (net/auth's dialer side), as a task of another cluster, and as a
// stranger sending forged or half-sent bytes.

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/bootstrap/control_plane_gate.hpp>
#include <troupe/net/tls/tls_handshake.hpp>

#include "support/raw_connection.hpp"

using namespace troupe::internal;
using namespace std::chrono_literals;
using Catch::Contains;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t spec = 42;
constexpr int gate_rank = 0;

auth::Key key_of(const std::string& token) {
  return auth::derive_key(token, auth::Purpose::control_plane);
}

/// What the gate handed on and whom it refused, for the test thread.
struct Outcomes {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int> admitted; ///< fds, closed by the test
  std::vector<std::unique_ptr<TlsHandoff>> sessions; ///< per admitted fd: its TLS session, or none
  std::vector<GateRefusal> refused;

  ~Outcomes() {
    for (int fd : admitted)
      ::close(fd);
  }
  /// Waits (at most 10 s) until `done()` holds under the lock.
  template <class Pred>
  bool wait(Pred done) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 10s, done);
  }
};

std::unique_ptr<ControlPlaneGate> open_gate(Outcomes& outcomes, std::chrono::milliseconds timeout = 10s,
                                            std::size_t max_pending = 64, std::shared_ptr<TlsContext> tls = {}) {
  ControlPlaneGateSetup setup;
  setup.bind_host = "127.0.0.1";
  setup.port = 0;
  setup.key = key_of("right");
  setup.spec_fingerprint = spec;
  setup.rank = gate_rank;
  setup.handshake_timeout = timeout;
  setup.max_pending = max_pending;
  setup.tls = std::move(tls);
  setup.admit = [&](int fd, SSL* ssl) {
    std::lock_guard lock(outcomes.mutex);
    outcomes.admitted.push_back(fd);
    outcomes.sessions.emplace_back(std::make_unique<TlsHandoff>(ssl));
    outcomes.changed.notify_all();
  };
  setup.refused = [&](const GateRefusal& r) {
    std::lock_guard lock(outcomes.mutex);
    outcomes.refused.push_back(r);
    outcomes.changed.notify_all();
  };
  std::string why;
  auto gate = ControlPlaneGate::open(std::move(setup), why);
  INFO(why);
  REQUIRE(gate);
  return gate;
}

/// A connection to the gate, dialling as a task would.
class Connection : public troupe::testing::RawConnection {
public:
  using RawConnection::RawConnection;

  auth::DialOutcome dial(const std::string& token, uint64_t spec_fingerprint = spec, int rank = 1) {
    return auth::dial_handshake(fd(), Clock::now() + 10s, key_of(token), auth::Purpose::control_plane,
                                spec_fingerprint, rank, gate_rank, 4242);
  }
};

} // namespace

TEST_CASE("the control port's gate hands on a dialer that proves the token, with its bytes", "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes);
  Connection task(gate->port());
  CHECK(task.dial("right").end == auth::DialEnd::proven);
  REQUIRE(outcomes.wait([&] { return outcomes.admitted.size() == 1; }));
  // What the dialer sends next reaches the admitted socket (CAF's BASP).
  task.send_bytes("BASP", 4);
  char got[4] = {};
  const int fd = outcomes.admitted[0];
  pollfd p{fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10000) == 1);
  CHECK(::recv(fd, got, 4, 0) == 4);
  CHECK(std::string(got, 4) == "BASP");
  CHECK(outcomes.refused.empty());
}

TEST_CASE("the control port's gate refuses another token and another spec, telling both sides",
          "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes);
  {
    Connection other_token(gate->port());
    const auto end = other_token.dial("wrong");
    CHECK(end.end == auth::DialEnd::other_token);
    CHECK_THAT(end.why, Contains("cluster token differs"));
  }
  {
    Connection other_spec(gate->port());
    const auto end = other_spec.dial("right", spec + 1);
    CHECK(end.end == auth::DialEnd::other_spec);
    CHECK_THAT(end.why, Contains("cluster spec differs"));
  }
  REQUIRE(outcomes.wait([&] { return outcomes.refused.size() == 2; }));
  CHECK(outcomes.admitted.empty());
  const auto& token = outcomes.refused[0];
  CHECK(token.claimed_rank == 1);
  CHECK(token.pid == 4242);
  CHECK(token.other_token);
  CHECK_FALSE(token.other_spec);
  CHECK_THAT(token.address, Contains("127.0.0.1:"));
  const auto& spec_refusal = outcomes.refused[1];
  CHECK(spec_refusal.other_spec);
  CHECK(spec_refusal.spec_fingerprint == spec + 1);
}

TEST_CASE("the control port's gate closes a forged CAF header at once, reading no more than a hello",
          "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes);
  Connection stranger(gate->port());
  // The 32 bytes that made BASP allocate 4 GiB: a header whose payload length is 0xFFFFFFFF.
  unsigned char forged[64] = {1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
  stranger.send_bytes(forged, sizeof forged);
  const auto answer = stranger.read_until_closed(Clock::now() + 10s);
  REQUIRE(answer);
  CHECK(answer->empty()); // not a troupe task: it learns nothing
  // The gate goes on: a task still gets in.
  Connection task(gate->port());
  CHECK(task.dial("right").end == auth::DialEnd::proven);
  REQUIRE(outcomes.wait([&] { return outcomes.admitted.size() == 1; }));
  CHECK(outcomes.refused.empty()); // it claimed no rank
}

TEST_CASE("the control port's gate closes a half-sent handshake at its deadline", "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes, 300ms);
  Connection stranger(gate->port());
  stranger.send_bytes("TRPA!", 5);
  const auto sent = Clock::now();
  const auto answer = stranger.read_until_closed(sent + 10s);
  REQUIRE(answer); // closed, not left open
  CHECK(Clock::now() - sent >= 250ms);
  CHECK(answer->empty());
}

TEST_CASE("the control port's gate refuses a replayed handshake", "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes);
  // A recording of a real task's hello and proof (its nonce and proof are
  // bound to that connection's challenge) ...
  auth::DialerHello hello;
  hello.purpose = static_cast<uint8_t>(auth::Purpose::control_plane);
  hello.dialer_rank = 1;
  hello.acceptor_rank = gate_rank;
  hello.spec_fingerprint = spec;
  hello.nonce = auth::fresh_nonce();
  std::vector<char> proof;
  {
    Connection task(gate->port());
    task.send_bytes(&hello, sizeof hello);
    auth::AcceptorChallenge challenge;
    REQUIRE(::recv(task.fd(), &challenge, sizeof challenge, MSG_WAITALL) == sizeof challenge);
    auth::Transcript transcript{spec, 1, gate_rank, hello.nonce, challenge.nonce};
    const auto mac = auth::prove(key_of("right"), auth::Role::dialer, transcript);
    proof.assign(mac.begin(), mac.end());
    task.send_bytes(proof.data(), proof.size());
    auth::AcceptorVerdict verdict;
    REQUIRE(::recv(task.fd(), &verdict, sizeof verdict, MSG_WAITALL) == sizeof verdict);
    CHECK(verdict.verdict == static_cast<uint32_t>(auth::Verdict::accepted));
  }
  // ... sent again on a new connection fails: the gate's challenge is fresh.
  Connection replay(gate->port());
  replay.send_bytes(&hello, sizeof hello);
  auth::AcceptorChallenge challenge;
  REQUIRE(::recv(replay.fd(), &challenge, sizeof challenge, MSG_WAITALL) == sizeof challenge);
  replay.send_bytes(proof.data(), proof.size());
  auth::AcceptorVerdict verdict;
  REQUIRE(::recv(replay.fd(), &verdict, sizeof verdict, MSG_WAITALL) == sizeof verdict);
  CHECK(verdict.verdict == static_cast<uint32_t>(auth::Verdict::wrong_key));
  REQUIRE(outcomes.wait([&] { return outcomes.refused.size() == 1; }));
  CHECK(outcomes.admitted.size() == 1); // the recorded one only
  CHECK(outcomes.refused[0].other_token);
}

TEST_CASE("the control port's gate holds a bounded number of connections in the handshake", "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes, 60s, 2);
  Connection idle1(gate->port());
  Connection idle2(gate->port());
  // Both are taken in the handshake before the third comes: the first
  // bytes of each are answered or refused only by the gate's loop.
  Connection third(gate->port());
  const auto answer = third.read_until_closed(Clock::now() + 10s);
  REQUIRE(answer); // closed at once, while the two idle ones hold their slots
  CHECK(answer->empty());
  // The idle ones are still open (their deadline is 60 s away).
  pollfd p{idle1.fd(), POLLIN, 0};
  CHECK(::poll(&p, 1, 0) == 0);
}

TEST_CASE("the control port's gate refuses a dialer whose TROUPE_TLS differs, telling both sides", "[net][gate]") {
  Outcomes outcomes;
  auto gate = open_gate(outcomes);
  Connection tls_dialer(gate->port());
  const auto end = auth::dial_handshake(tls_dialer.fd(), Clock::now() + 10s, key_of("right"),
                                        auth::Purpose::control_plane, spec, 1, gate_rank, 4242, /*tls=*/true);
  CHECK(end.end == auth::DialEnd::other_tls);
  CHECK_THAT(end.why, Contains("TROUPE_TLS differs"));
  REQUIRE(outcomes.wait([&] { return outcomes.refused.size() == 1; }));
  CHECK(outcomes.refused[0].other_tls);
  CHECK(outcomes.admitted.empty());
}

TEST_CASE("under TLS the control port's gate completes TLS before it hands the socket on", "[net][gate][tls]") {
  const auto tls = TlsContext::make(auth::derive_key("right", auth::Purpose::tls));
  Outcomes outcomes;
  auto gate = open_gate(outcomes, 10s, 64, tls);
  Connection task(gate->port());
  const auto end = auth::dial_handshake(task.fd(), Clock::now() + 10s, key_of("right"), auth::Purpose::control_plane,
                                        spec, 1, gate_rank, 4242, /*tls=*/true);
  REQUIRE(end.end == auth::DialEnd::proven);
  std::string why;
  SSL* ssl = tls_connect(*tls, task.fd(), Clock::now() + 10s, why);
  TlsHandoff session(ssl);
  INFO(why);
  REQUIRE(ssl != nullptr);
  REQUIRE(outcomes.wait([&] { return outcomes.admitted.size() == 1; }));
  CHECK(outcomes.sessions[0]->release() != nullptr); // handed on with its established session
}

TEST_CASE("under TLS the control port's gate closes a dialer that never starts TLS at the deadline",
          "[net][gate][tls]") {
  const auto tls = TlsContext::make(auth::derive_key("right", auth::Purpose::tls));
  Outcomes outcomes;
  auto gate = open_gate(outcomes, 300ms, 64, tls);
  Connection task(gate->port());
  REQUIRE(auth::dial_handshake(task.fd(), Clock::now() + 10s, key_of("right"), auth::Purpose::control_plane, spec, 1,
                               gate_rank, 4242, /*tls=*/true)
            .end
          == auth::DialEnd::proven);
  // Proven, but silent where its TLS hello should come: not admitted, closed.
  const auto answer = task.read_until_closed(Clock::now() + 10s);
  CHECK(answer.has_value());
  CHECK(outcomes.admitted.empty());
}
