// The data-plane broker over real sockets: the test plays the other task with
// a raw TCP socket and is itself the collective group the broker feeds.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <troupe/core/caf_types.hpp>
#include <troupe/net/link/data_plane_broker.hpp>
#include <troupe/net/tls/tls_handshake.hpp>

#include "support/capture_stderr.hpp"
#include "support/free_ports.hpp"
#include "support/raw_connection.hpp"

using namespace troupe::internal;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t group = 7;

auth::Key test_key() {
  return auth::derive_key("secret", auth::Purpose::data_plane);
}

DataPlaneSetup setup_of(int rank) {
  DataPlaneSetup s;
  s.rank = rank;
  s.task_names = {"worker:0", "worker:1"};
  s.key = test_key();
  s.bind_host = "127.0.0.1";
  // Long unless a case is about them: nothing here may depend on timing luck.
  s.peer_timeout = 60s;
  s.hint_grace = 60s;
  s.hello_timeout = 60s;
  return s;
}

/// The other task's end of a data connection, as raw bytes.
class FakePeer : public troupe::testing::RawConnection {
public:
  using RawConnection::RawConnection;

  void send_frame(FrameHeader header, const std::vector<std::byte>& payload = {}) {
    header.size = static_cast<uint32_t>(payload.size());
    send_bytes(&header, sizeof header);
    if (!payload.empty())
      send_bytes(payload.data(), payload.size());
  }
  /// Runs the dialer's side of the handshake as task `rank` towards the
  /// broker of rank `broker_rank`: "" or why it failed.
  std::string handshake(int rank, int broker_rank = 0, const auth::Key& key = test_key()) {
    return auth::dial_handshake(fd(), std::chrono::steady_clock::now() + 10s, key, auth::Purpose::data_plane, 0,
                                rank, broker_rank, 4242)
      .why;
  }
  void send_hello(int rank) { REQUIRE(handshake(rank) == ""); }
  /// Whether the broker closed its end before `deadline` (reading and
  /// discarding what it sent first).
  bool closed_by_broker(std::chrono::steady_clock::time_point deadline) {
    return read_until_closed(deadline).has_value();
  }
  /// Reads exactly `n` bytes, or fewer when the deadline passes.
  std::vector<std::byte> read_bytes(std::size_t n, std::chrono::steady_clock::time_point deadline) {
    std::vector<std::byte> out(n);
    std::size_t got = 0;
    while (got < n && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0)
        continue;
      const auto r = ::recv(fd(), out.data() + got, n - got, 0);
      if (r <= 0)
        break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  }
};

/// A connection accepted on `listener` within 20 s, or -1: for test threads,
/// where a REQUIRE would end the process.
int accept_within(int listener) {
  pollfd p{listener, POLLIN, 0};
  if (::poll(&p, 1, 20000) != 1)
    return -1;
  return ::accept(listener, nullptr, nullptr);
}

/// A socket listening on 127.0.0.1 at a port the kernel picked; the test
/// closes it when it is done with it.
troupe::testing::LoopbackSocket listen_on_loopback(int backlog) {
  auto listener = troupe::testing::bind_loopback_socket();
  REQUIRE(::listen(listener.fd, backlog) == 0);
  return listener;
}

FrameHeader data_frame(uint32_t seq) {
  FrameHeader h;
  h.type = FrameType::data;
  h.group = group;
  h.run = 1;
  h.seq = seq;
  return h;
}

FrameHeader bye_frame() {
  FrameHeader h;
  h.type = FrameType::bye;
  return h;
}

/// An actor system with a middleman and one broker; the scoped actor `self`
/// is registered as group 7.
struct Broker {
  caf::actor_system_config cfg;
  std::optional<caf::actor_system> sys;
  std::optional<caf::scoped_actor> self;
  DataPlaneBrokerHandle broker;
  uint16_t port = 0;

  explicit Broker(DataPlaneSetup setup) {
    troupe::add_core_types(cfg);
    cfg.load<caf::io::middleman>();
    sys.emplace(cfg);
    self.emplace(*sys);
    caf::actor_config actor_cfg{&sys->middleman().backend()};
    broker = sys->spawn_class<DataPlaneBroker, caf::no_spawn_options>(actor_cfg, std::move(setup));
    (*self)->request(broker, 10s, DataPlanePortMsg{}).receive([&](uint16_t p) { port = p; },
                                                              [&](caf::error& e) { FAIL(sys->render(e)); });
    (*self)->send(broker, LinkRegisterMsg{group, caf::actor_cast<LinkReceiverHandle>(*self)});
  }
  ~Broker() {
    caf::anon_send_exit(broker, caf::exit_reason::user_shutdown);
    broker = nullptr;
    self.reset();
  }

  /// Waits until every peer said hello (the broker answers DataPlaneConnectMsg then).
  void await_connected(std::vector<DataPlanePeer> dial = {}, caf::timespan timeout = 10s) {
    std::string error;
    (*self)->request(broker, 20s, DataPlaneConnectMsg{std::move(dial), timeout})
      .receive([](bool) {}, [&](caf::error& e) { error = sys->render(e); });
    REQUIRE(error.empty());
  }
  /// Every message the broker handled before this call is done with.
  void sync() {
    (*self)->request(broker, 10s, DataPlanePortMsg{}).receive([](uint16_t) {}, [](caf::error&) {});
  }

  /// What the group heard next, or nothing within `wait`.
  struct Heard {
    std::optional<LinkFrameMsg> frame;
    std::optional<PeerLostMsg> loss;
  };
  Heard next(caf::timespan wait) {
    Heard heard;
    (*self)->receive([&](LinkFrameMsg& msg) { heard.frame = std::move(msg); },
                     [&](PeerLostMsg& msg) { heard.loss = std::move(msg); }, caf::after(wait) >> [] {});
    return heard;
  }
};

} // namespace

TEST_CASE("a peer whose control connection drops before its last frames are read leaves normally", "[net][data_plane]") {
  Broker b(setup_of(0));
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  // The control plane's news comes first, as on a busy machine where the
  // broker has not read the peer's last frames yet.
  (*b.self)->send(b.broker, PeerLostMsg{1, "its control connection went down"});
  b.sync();
  // Before: the broker declared the peer lost 50 ms after the news.
  CHECK_FALSE(b.next(500ms).loss);
  peer.send_frame(data_frame(0), std::vector<std::byte>(8));
  peer.send_frame(bye_frame());
  peer.close();
  auto first = b.next(10s);
  REQUIRE(first.frame);
  CHECK(first.frame->header.seq == 0);
  auto second = b.next(10s);
  REQUIRE(second.loss);
  CHECK(second.loss->rank == 1);
  CHECK(second.loss->left);
}

TEST_CASE("a peer whose control connection dropped is lost once its data connection stays silent", "[net][data_plane]") {
  auto setup = setup_of(0);
  setup.peer_timeout = 200ms;
  setup.hint_grace = 100ms;
  Broker b(setup);
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  // One frame first: the verdict says what this task last saw of the peer.
  auto header = data_frame(5);
  header.run = 3;
  peer.send_frame(header, std::vector<std::byte>(8));
  REQUIRE(b.next(10s).frame);
  (*b.self)->send(b.broker, PeerLostMsg{1, "its control connection went down"});
  auto heard = b.next(20s);
  REQUIRE(heard.loss);
  CHECK(heard.loss->rank == 1);
  CHECK_FALSE(heard.loss->left);
  CHECK_THAT(heard.loss->why, Catch::Contains("its control connection went down")
                                && Catch::Contains("data connection has been silent")
                                && Catch::Contains("the last frame from it was a data frame of group 7, run 3, "
                                                   "collective 5 (8 bytes)"));
  CHECK(peer.closed_by_broker(std::chrono::steady_clock::now() + 10s));
}

TEST_CASE("a peer busy for longer than the peer timeout is not lost while its control connection lives", "[net][data_plane]") {
  auto setup = setup_of(0);
  setup.peer_timeout = 100ms;
  setup.hint_grace = 100ms;
  Broker b(setup);
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  // Six peer timeouts without a byte: a worker computing between collectives.
  CHECK_FALSE(b.next(600ms).loss);
  peer.send_frame(data_frame(3), std::vector<std::byte>(4));
  auto heard = b.next(10s);
  REQUIRE(heard.frame);
  CHECK(heard.frame->header.seq == 3);
}

TEST_CASE("a hello frame of an older troupe instead of the handshake is refused, naming the cause", "[net][data_plane]") {
  Broker b(setup_of(0));
  bool closed = false;
  const auto log = troupe::testing::capture_stderr([&] {
    FakePeer older(b.port);
    // Version 4's opening: a 40-byte frame header and a 16-byte hello (rank, token hash).
    FrameHeader header;
    header.version = 4;
    header.type = static_cast<FrameType>(1);
    header.size = 16;
    // In one send: the broker refuses it at its first 4 bytes, and a second send could meet the closed socket.
    std::vector<std::byte> opening(sizeof header + 16);
    std::memcpy(opening.data(), &header, sizeof header);
    older.send_bytes(opening.data(), opening.size());
    closed = older.closed_by_broker(std::chrono::steady_clock::now() + 20s);
    b.sync(); // the log line is written before the close
  });
  CHECK(closed);
  CHECK_THAT(log, Catch::Contains("refused the connection from 127.0.0.1:")
                    && Catch::Contains("does not open with troupe's handshake"));
}

TEST_CASE("a peer lost in the middle of a frame is reported lost and the partial frame is not delivered", "[net][data_plane]") {
  Broker b(setup_of(0));
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  auto header = data_frame(0);
  header.size = 1000;
  peer.send_bytes(&header, sizeof header);
  std::vector<std::byte> part(100);
  peer.send_bytes(part.data(), part.size());
  peer.close();
  auto heard = b.next(10s);
  REQUIRE(heard.loss); // not a frame
  CHECK(heard.loss->rank == 1);
  CHECK_FALSE(heard.loss->left);
  CHECK_THAT(heard.loss->why, Catch::Contains("data connection closed"));
}

TEST_CASE("a frame that claims more payload than its type carries closes the connection before the payload is read", "[net][data_plane]") {
  Broker b(setup_of(0));
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  // An abort carries an error code and a reason, never 100 MiB: the broker
  // must refuse the header, not allocate and wait for the bytes.
  FrameHeader header;
  header.type = FrameType::abort;
  header.size = 100u << 20;
  peer.send_bytes(&header, sizeof header);
  auto heard = b.next(10s);
  REQUIRE(heard.loss);
  CHECK(heard.loss->rank == 1);
  CHECK_THAT(heard.loss->why, Catch::Contains("its abort frame claims 104857600 payload bytes, more than the "
                                              + std::to_string(max_control_payload_bytes)));
  CHECK(peer.closed_by_broker(std::chrono::steady_clock::now() + 10s));
}

TEST_CASE("a data frame past TROUPE_MAX_FRAME_MIB closes the connection before the payload is read",
          "[net][data_plane]") {
  auto setup = setup_of(0);
  setup.max_frame_bytes = 1u << 20;
  Broker b(std::move(setup));
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  // 4 GiB - 1 used to be allocated as soon as its header came.
  auto header = data_frame(0);
  header.size = UINT32_MAX;
  peer.send_bytes(&header, sizeof header);
  auto heard = b.next(10s);
  REQUIRE(heard.loss);
  CHECK(heard.loss->rank == 1);
  CHECK_THAT(heard.loss->why, Catch::Contains("its data frame claims 4294967295 payload bytes, more than the 1048576 "
                                              "that frame type carries (TROUPE_MAX_FRAME_MIB; every worker must use "
                                              "the same value)"));
  CHECK(peer.closed_by_broker(std::chrono::steady_clock::now() + 10s));
}

TEST_CASE("a frame of a type the protocol does not have closes the connection, naming the type", "[net][data_plane]") {
  Broker b(setup_of(0));
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
  FrameHeader header;
  header.type = static_cast<FrameType>(9);
  peer.send_bytes(&header, sizeof header);
  auto heard = b.next(10s);
  REQUIRE(heard.loss);
  CHECK_THAT(heard.loss->why, Catch::Contains("unknown type 9"));
}

TEST_CASE("a connection that never completes the handshake is closed after the hello timeout, naming its address", "[net][data_plane]") {
  auto setup = setup_of(0);
  setup.hello_timeout = 200ms;
  Broker b(setup);
  bool closed = false;
  const auto log = troupe::testing::capture_stderr([&] {
    FakePeer silent(b.port);
    closed = silent.closed_by_broker(std::chrono::steady_clock::now() + 20s);
    b.sync(); // the log line is written before the close
  });
  CHECK(closed);
  CHECK_THAT(log, Catch::Contains("closing the connection from 127.0.0.1:")
                    && Catch::Contains("did not complete troupe's handshake"));
}

TEST_CASE("a peer of another frame protocol version is refused at its first frame, naming both versions", "[net][data_plane]") {
  Broker b(setup_of(0));
  bool closed = false;
  const auto log = troupe::testing::capture_stderr([&] {
    FakePeer older(b.port);
    older.send_hello(1);
    auto header = data_frame(0);
    header.version = FrameHeader::current_version - 1;
    older.send_frame(header);
    closed = older.closed_by_broker(std::chrono::steady_clock::now() + 20s);
    b.sync(); // the log line is written before the close
  });
  CHECK(closed);
  CHECK_THAT(log, Catch::Contains("version " + std::to_string(FrameHeader::current_version - 1))
                    && Catch::Contains("this task version " + std::to_string(FrameHeader::current_version)));
}

TEST_CASE("the data plane dials lower ranks and proves the cluster token with its rank", "[net][data_plane]") {
  // The test listens as task 0; the broker is task 1 and dials it.
  const auto listener = listen_on_loopback(4);
  auth::AcceptOutcome outcome;
  std::thread task0([&] {
    const int accepted = accept_within(listener.fd);
    if (accepted < 0) {
      outcome.why = "the broker did not dial";
      return;
    }
    outcome = auth::accept_handshake(accepted, std::chrono::steady_clock::now() + 10s, test_key(),
                                     auth::Purpose::data_plane, 0, 0, [](int) { return std::string(); });
    ::close(accepted);
  });
  Broker b(setup_of(1));
  b.await_connected({DataPlanePeer{0, "127.0.0.1", listener.port(), {}, {}}});
  task0.join();
  ::close(listener.fd);
  CHECK(outcome.why == "");
  REQUIRE(outcome.rank);
  CHECK(*outcome.rank == 1);
}

namespace {

/// Task 0 for a broker of rank 1 that dials it: accepts the dial, says so,
/// and answers the handshake only when the test lets it.
struct GatedTask0 {
  troupe::testing::LoopbackSocket listener = listen_on_loopback(4);
  std::promise<void> accepted;
  std::promise<void> go;
  auth::AcceptOutcome outcome;
  std::thread thread;

  /// `answer`: whether it completes the handshake (and then leaves with a bye
  /// frame, as a task whose program ended) or stays silent until let go.
  explicit GatedTask0(bool answer) {
    thread = std::thread([this, answer] {
      const int fd = accept_within(listener.fd);
      accepted.set_value();
      if (fd < 0)
        return;
      FakePeer end(FakePeer::Adopt{}, fd);
      if (go.get_future().wait_for(20s) != std::future_status::ready || !answer)
        return; // closes its end
      outcome = auth::accept_handshake(fd, std::chrono::steady_clock::now() + 10s, test_key(),
                                       auth::Purpose::data_plane, 0, 0, [](int) { return std::string(); });
      end.send_frame(bye_frame());
    });
  }
  ~GatedTask0() {
    if (thread.joinable())
      thread.join();
    ::close(listener.fd);
  }
  DataPlanePeer peer() const { return DataPlanePeer{0, "127.0.0.1", listener.port(), {}, {}}; }
};

/// Asks `b` to connect to `peer` from a thread of its own; get() gives "" or
/// the error.
std::future<std::string> connect_async(Broker& b, DataPlanePeer peer, caf::timespan timeout) {
  return std::async(std::launch::async, [&b, peer, timeout] {
    caf::scoped_actor self{*b.sys};
    std::string error = "no answer";
    self->request(b.broker, 60s, DataPlaneConnectMsg{{peer}, timeout})
      .receive([&](bool) { error.clear(); }, [&](caf::error& e) { error = b.sys->render(e); });
    return error;
  });
}

} // namespace

TEST_CASE("a peer that accepts this task's dial and exits before the dial is heard of still connected",
          "[net][data_plane]") {
  // The handshake ends on the acceptor first: task 0 may run its program to
  // the end and exit, its control connection dropping, while this task's
  // dialer still reads task 0's verdict. Before: "task worker:0 was lost
  // while the data plane was connecting" failed this task's strategy.
  GatedTask0 task0(true);
  Broker b(setup_of(1));
  auto connected = connect_async(b, task0.peer(), 20s);
  REQUIRE(task0.accepted.get_future().wait_for(20s) == std::future_status::ready);
  (*b.self)->send(b.broker, PeerLostMsg{0, "its control connection went down"});
  b.sync();
  task0.go.set_value();
  REQUIRE(connected.wait_for(30s) == std::future_status::ready);
  CHECK(connected.get() == "");
  // Its bye came: it left normally.
  auto heard = b.next(20s);
  REQUIRE(heard.loss);
  CHECK(heard.loss->rank == 0);
  CHECK(heard.loss->left);
}

TEST_CASE("a peer reported down while this task dials it and never answering fails the connect within the hint grace",
          "[net][data_plane]") {
  GatedTask0 task0(false);
  auto setup = setup_of(1);
  setup.hint_grace = 300ms;
  Broker b(setup);
  const auto start = std::chrono::steady_clock::now();
  auto connected = connect_async(b, task0.peer(), 50s);
  REQUIRE(task0.accepted.get_future().wait_for(20s) == std::future_status::ready);
  (*b.self)->send(b.broker, PeerLostMsg{0, "its control connection went down"});
  REQUIRE(connected.wait_for(30s) == std::future_status::ready);
  // Well before the dial's own 50 s timeout.
  CHECK(std::chrono::steady_clock::now() - start < 30s);
  CHECK_THAT(connected.get(), Catch::Contains("task worker:0 was lost while the data plane was connecting")
                                && Catch::Contains("its control connection went down")
                                && Catch::Contains("did not complete within"));
  task0.go.set_value();
}

TEST_CASE("a peer that connected and left before this task asked for the data plane counts as connected",
          "[net][data_plane]") {
  // Task 1 ran its whole program while this task was still busy joining.
  // Before: this task waited for task 1 to connect until its init timeout.
  Broker b(setup_of(0));
  FakePeer peer(b.port);
  peer.send_hello(1);
  peer.send_frame(bye_frame());
  peer.close();
  auto heard = b.next(20s);
  REQUIRE(heard.loss);
  CHECK(heard.loss->left);
  b.await_connected();
}

TEST_CASE("a peer lost before this task asked for the data plane fails the connect at once, naming the loss",
          "[net][data_plane]") {
  Broker b(setup_of(0));
  FakePeer peer(b.port);
  peer.send_hello(1);
  peer.close(); // no bye: it crashed
  auto heard = b.next(20s);
  REQUIRE(heard.loss);
  CHECK_FALSE(heard.loss->left);
  std::string error;
  (*b.self)->request(b.broker, 20s, DataPlaneConnectMsg{{}, 10s})
    .receive([](bool) {}, [&](caf::error& e) { error = b.sys->render(e); });
  CHECK_THAT(error, Catch::Contains("task worker:1 was lost while the data plane was connecting")
                      && Catch::Contains("its data connection closed"));
}

TEST_CASE("a replayed handshake is refused and does not take the rank", "[net][data_plane]") {
  Broker b(setup_of(0));
  // Task 1's real connection, made by hand so that its bytes can be replayed.
  FakePeer real(b.port);
  auth::Transcript transcript;
  transcript.dialer_rank = 1;
  transcript.acceptor_rank = 0;
  transcript.dialer_nonce = auth::fresh_nonce();
  auth::DialerHello hello;
  hello.purpose = static_cast<uint8_t>(auth::Purpose::data_plane);
  hello.dialer_rank = 1;
  hello.acceptor_rank = 0;
  hello.nonce = transcript.dialer_nonce;
  real.send_bytes(&hello, sizeof hello);
  const auto challenge_bytes = real.read_bytes(sizeof(auth::AcceptorChallenge), std::chrono::steady_clock::now() + 10s);
  REQUIRE(challenge_bytes.size() == sizeof(auth::AcceptorChallenge));
  auth::AcceptorChallenge challenge;
  std::memcpy(&challenge, challenge_bytes.data(), sizeof challenge);
  transcript.acceptor_nonce = challenge.nonce;
  const auth::Mac proof = auth::prove(test_key(), auth::Role::dialer, transcript);
  real.send_bytes(proof.data(), proof.size());
  const auto verdict_bytes = real.read_bytes(sizeof(auth::AcceptorVerdict), std::chrono::steady_clock::now() + 10s);
  REQUIRE(verdict_bytes.size() == sizeof(auth::AcceptorVerdict));
  auth::AcceptorVerdict verdict;
  std::memcpy(&verdict, verdict_bytes.data(), sizeof verdict);
  CHECK(verdict.verdict == static_cast<uint32_t>(auth::Verdict::accepted));
  CHECK(auth::equal(verdict.proof, auth::prove(test_key(), auth::Role::acceptor, transcript)));
  b.await_connected();

  // Someone who recorded those bytes sends them again: the broker's fresh
  // nonce makes the recorded proof worthless.
  bool closed = false;
  const auto log = troupe::testing::capture_stderr([&] {
    FakePeer replay(b.port);
    replay.send_bytes(&hello, sizeof hello);
    const auto fresh = replay.read_bytes(sizeof(auth::AcceptorChallenge), std::chrono::steady_clock::now() + 10s);
    REQUIRE(fresh.size() == sizeof(auth::AcceptorChallenge));
    CHECK(std::memcmp(fresh.data(), challenge_bytes.data(), fresh.size()) != 0);
    replay.send_bytes(proof.data(), proof.size());
    const auto answer = replay.read_bytes(sizeof(auth::AcceptorVerdict), std::chrono::steady_clock::now() + 10s);
    REQUIRE(answer.size() == sizeof(auth::AcceptorVerdict));
    auth::AcceptorVerdict refused;
    std::memcpy(&refused, answer.data(), sizeof refused);
    CHECK(refused.verdict == static_cast<uint32_t>(auth::Verdict::wrong_key));
    CHECK(refused.proof == auth::Mac{});
    closed = replay.closed_by_broker(std::chrono::steady_clock::now() + 20s);
    b.sync();
  });
  CHECK(closed);
  CHECK_THAT(log, Catch::Contains("refused the connection from 127.0.0.1:")
                    && Catch::Contains("claims rank 1 but cannot prove the cluster token"));
  // The real task 1 keeps its connection: its frames still arrive, and nobody is lost.
  real.send_frame(data_frame(5), std::vector<std::byte>(4));
  auto heard = b.next(10s);
  REQUIRE(heard.frame);
  CHECK(heard.frame->header.seq == 5);
  CHECK(heard.frame->from == 1);
}

TEST_CASE("a dialer that proves the token but claims a rank already connected is refused", "[net][data_plane]") {
  Broker b(setup_of(0));
  FakePeer real(b.port);
  real.send_hello(1);
  b.await_connected();
  std::string second_error;
  const auto log = troupe::testing::capture_stderr([&] {
    FakePeer second(b.port);
    second_error = second.handshake(1);
    CHECK(second.closed_by_broker(std::chrono::steady_clock::now() + 20s));
    b.sync();
  });
  CHECK_THAT(second_error, Catch::Contains("refused this process"));
  CHECK_THAT(log, Catch::Contains("refused the connection from 127.0.0.1:"));
  // The first connection of rank 1 is untouched.
  real.send_frame(data_frame(2), std::vector<std::byte>(4));
  auto heard = b.next(10s);
  REQUIRE(heard.frame);
  CHECK(heard.frame->from == 1);
  CHECK(heard.frame->header.seq == 2);
}

TEST_CASE("a dialer with another cluster token is refused, and both ends name the token", "[net][data_plane]") {
  Broker b(setup_of(0));
  std::string dialer_error;
  const auto log = troupe::testing::capture_stderr([&] {
    FakePeer stranger(b.port);
    dialer_error = stranger.handshake(1, 0, auth::derive_key("another", auth::Purpose::data_plane));
    CHECK(stranger.closed_by_broker(std::chrono::steady_clock::now() + 20s));
    b.sync();
  });
  CHECK_THAT(dialer_error, Catch::Contains("its cluster token differs") && Catch::Contains("TROUPE_CLUSTER_TOKEN"));
  CHECK_THAT(log, Catch::Contains("claims rank 1 but cannot prove the cluster token"));
}

TEST_CASE("the dialer does not trust a task that cannot prove the cluster token", "[net][data_plane]") {
  // An impostor listening where task 0 should be: it answers the handshake
  // and says "accepted", but cannot make task 0's proof.
  const auto listener = listen_on_loopback(4);
  std::thread impostor([&] {
    const int fd = accept_within(listener.fd);
    if (fd < 0)
      return; // the broker did not dial: the check of its error below fails
    FakePeer end(FakePeer::Adopt{}, fd);
    (void)end.read_bytes(sizeof(auth::DialerHello), std::chrono::steady_clock::now() + 10s);
    auth::AcceptorChallenge challenge;
    challenge.acceptor_rank = 0;
    challenge.nonce = auth::fresh_nonce();
    end.send_bytes(&challenge, sizeof challenge);
    (void)end.read_bytes(auth::mac_bytes, std::chrono::steady_clock::now() + 10s);
    auth::AcceptorVerdict verdict; // accepted, with a proof of zeros
    end.send_bytes(&verdict, sizeof verdict);
    (void)end.closed_by_broker(std::chrono::steady_clock::now() + 10s);
  });
  Broker b(setup_of(1));
  std::string error;
  (*b.self)->request(b.broker, 60s, DataPlaneConnectMsg{{DataPlanePeer{0, "127.0.0.1", listener.port(), {}, {}}}, 10s})
    .receive([](bool) {}, [&](caf::error& e) { error = b.sys->render(e); });
  impostor.join();
  ::close(listener.fd);
  CHECK_THAT(error, Catch::Contains("cannot open the data connection to task worker:0")
                      && Catch::Contains("could not prove the cluster token"));
}

TEST_CASE("a data-plane connect that gets no answer fails after its timeout and blocks nothing meanwhile", "[net][data_plane]") {
  // A listener whose accept queue is full drops new SYNs, so a connect to it
  // hangs, as to a host that drops packets.
  const auto listener = listen_on_loopback(0);
  const uint16_t port = listener.port();
  std::vector<int> fillers;
  for (int i = 0; i < 3; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    (void)::connect(fd, reinterpret_cast<const sockaddr*>(&listener.address), sizeof listener.address);
    fillers.push_back(fd);
  }
  Broker b(setup_of(1));
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  (*b.self)->request(b.broker, 60s, DataPlaneConnectMsg{{DataPlanePeer{0, "127.0.0.1", port, {}, {}}}, 2s})
    .receive([](bool) {}, [&](caf::error& e) { error = b.sys->render(e); });
  // While the connect hung, the broker's thread kept working.
  CHECK(std::chrono::steady_clock::now() - start < 30s);
  for (int fd : fillers)
    ::close(fd);
  ::close(listener.fd);
  if (error.empty())
    return; // this kernel accepted the connect after all: nothing hung
  CHECK_THAT(error, Catch::Contains("cannot open the data connection to task worker:0 at 127.0.0.1:"));
}

TEST_CASE("a data port that is taken is an error that names where the port came from", "[net][data_plane]") {
  const auto listener = listen_on_loopback(4);
  caf::actor_system_config cfg;
  troupe::add_core_types(cfg);
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto setup = setup_of(0);
  setup.port = listener.port();
  setup.port_origin = "the task's port + TROUPE_DATA_PORT_OFFSET=7";
  caf::actor_config actor_cfg{&sys.middleman().backend()};
  auto broker = sys.spawn_class<DataPlaneBroker, caf::no_spawn_options>(actor_cfg, setup);
  std::string error;
  caf::scoped_actor self{sys};
  self->request(broker, 10s, DataPlanePortMsg{}).receive([](uint16_t) {}, [&](caf::error& e) { error = sys.render(e); });
  ::close(listener.fd);
  CHECK_THAT(error, Catch::Contains("port " + std::to_string(setup.port)) && Catch::Contains("TROUPE_DATA_PORT_OFFSET=7")
                      && Catch::Contains("is taken"));
  caf::anon_send_exit(broker, caf::exit_reason::user_shutdown);
}

TEST_CASE("a configured data port is the port the data plane listens on", "[net][data_plane]") {
  auto setup = setup_of(0);
  setup.port = static_cast<uint16_t>(troupe::testing::free_ports(1)[0]);
  setup.port_origin = "a test";
  Broker b(setup);
  CHECK(b.port == setup.port);
  FakePeer peer(b.port);
  peer.send_hello(1);
  b.await_connected();
}

// -- TROUPE_TLS=1 ---------------------------------------------------------------

namespace {

DataPlaneSetup tls_setup_of(int rank, const std::string& token = "secret") {
  auto setup = setup_of(rank);
  setup.tls = TlsContext::make(auth::derive_key(token, auth::Purpose::tls));
  return setup;
}

} // namespace

TEST_CASE("under TLS two data-plane brokers connect and carry frames both ways", "[net][data_plane][tls]") {
  Broker task0(tls_setup_of(0));
  Broker task1(tls_setup_of(1));
  // Task 1 dials task 0: TLS from the first byte, troupe's handshake inside it.
  task1.await_connected({DataPlanePeer{0, "127.0.0.1", task0.port, {}, {}}});
  task0.await_connected();
  auto payload = std::make_shared<std::vector<std::byte>>(100000);
  for (std::size_t i = 0; i < payload->size(); ++i)
    (*payload)[i] = static_cast<std::byte>(i * 7);
  auto header = data_frame(3);
  header.size = static_cast<uint32_t>(payload->size());
  const FrameBytes bytes{payload, payload->data(), payload->size()};
  (*task1.self)->send(task1.broker, LinkSendMsg{0, header, bytes});
  (*task0.self)->send(task0.broker, LinkSendMsg{1, header, bytes});
  for (auto* b : {&task0, &task1}) {
    auto heard = b->next(10s);
    REQUIRE(heard.frame);
    CHECK(heard.frame->header.seq == 3);
    const auto got = heard.frame->bytes.span();
    CHECK(std::vector<std::byte>(got.begin(), got.end()) == *payload);
  }
}

TEST_CASE("a TLS data port refuses a dialer in clear and one with another token", "[net][data_plane][tls]") {
  Broker b(tls_setup_of(0));
  {
    // troupe's handshake in clear is no TLS hello: the broker closes it.
    FakePeer plain(b.port);
    CHECK_THAT(plain.handshake(1), Catch::Contains("it refused this process's handshake, or is not a troupe task"));
  }
  {
    // The right troupe key but TLS keyed by another token: no TLS session.
    FakePeer other(b.port);
    const auto context = TlsContext::make(auth::derive_key("another", auth::Purpose::tls));
    std::string why;
    SSL* ssl = tls_connect(*context, other.fd(), std::chrono::steady_clock::now() + 10s, why);
    TlsHandoff owner(ssl);
    CHECK(ssl == nullptr);
    CHECK_THAT(why, Catch::Contains("TLS handshake failed"));
  }
  {
    // The right token: TLS, then troupe's handshake inside it, takes rank 1.
    FakePeer task1(b.port);
    const auto context = TlsContext::make(auth::derive_key("secret", auth::Purpose::tls));
    std::string why;
    SSL* ssl = tls_connect(*context, task1.fd(), std::chrono::steady_clock::now() + 10s, why);
    TlsHandoff owner(ssl);
    REQUIRE(ssl != nullptr);
    const auto end = auth::dial_handshake(tls_transfer(ssl, task1.fd()), std::chrono::steady_clock::now() + 10s,
                                          test_key(), auth::Purpose::data_plane, 0, 1, 0, 4242, true);
    CHECK(end.why == "");
    b.await_connected();
  }
}

// -- UCX shared memory (TROUPE_TRANSPORT=ucx) -----------------------------------

namespace {

DataPlaneSetup ucx_setup_of(int rank, const std::string& token = "secret") {
  auto setup = setup_of(rank);
  setup.transport = "ucx";
  setup.key = auth::derive_key(token, auth::Purpose::data_plane);
  return setup;
}

UcxOffer offer_of(Broker& b) {
  UcxOffer offer;
  (*b.self)->request(b.broker, 10s, DataPlaneUcxOfferMsg{}).receive([&](UcxOffer& o) { offer = std::move(o); },
                                                                     [&](caf::error& e) { FAIL(b.sys->render(e)); });
  return offer;
}

DataPlanePeer ucx_peer_of(int rank, const UcxOffer& offer) {
  return DataPlanePeer{rank, "127.0.0.1", 0, offer.address, offer.nonce};
}

/// Connects two brokers of ranks 0 and 1 over UCX: "" each, or its error.
std::pair<std::string, std::string> connect_ucx_pair(Broker& task0, Broker& task1) {
  const auto offer0 = offer_of(task0);
  const auto offer1 = offer_of(task1);
  REQUIRE_FALSE(offer0.address.empty());
  REQUIRE_FALSE(offer1.address.empty());
  auto first = std::async(std::launch::async, [&] {
    caf::scoped_actor self{*task0.sys};
    std::string error = "no answer";
    self->request(task0.broker, 30s, DataPlaneConnectMsg{{ucx_peer_of(1, offer1)}, 10s, true})
      .receive([&](bool) { error.clear(); }, [&](caf::error& e) { error = task0.sys->render(e); });
    return error;
  });
  std::string second = "no answer";
  (*task1.self)->request(task1.broker, 30s, DataPlaneConnectMsg{{ucx_peer_of(0, offer0)}, 10s, true})
    .receive([&](bool) { second.clear(); }, [&](caf::error& e) { second = task1.sys->render(e); });
  REQUIRE(first.wait_for(40s) == std::future_status::ready);
  return {first.get(), second};
}

FrameBytes pattern_bytes(std::size_t n, int salt) {
  auto payload = std::make_shared<std::vector<std::byte>>(n);
  for (std::size_t i = 0; i < n; ++i)
    (*payload)[i] = static_cast<std::byte>(i * 7 + static_cast<std::size_t>(salt));
  return FrameBytes{payload, payload->data(), payload->size()};
}

} // namespace

TEST_CASE("over UCX two data-plane brokers connect and carry eager and rendezvous frames in the order sent",
          "[net][data_plane][ucx]") {
  Broker task0(ucx_setup_of(0));
  Broker task1(ucx_setup_of(1));
  const auto [error0, error1] = connect_ucx_pair(task0, task1);
  REQUIRE(error0 == "");
  REQUIRE(error1 == "");
  // A large frame between two small ones: the rendezvous read completes
  // after the next eager frame arrived, and must still be delivered before it.
  const std::vector<std::size_t> sizes = {100, 3u << 20, 10, 0};
  std::vector<FrameBytes> sent;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(pattern_bytes(sizes[i], static_cast<int>(i)));
    auto header = data_frame(static_cast<uint32_t>(i));
    header.size = static_cast<uint32_t>(sizes[i]);
    (*task1.self)->send(task1.broker, LinkSendMsg{0, header, sent.back()});
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto heard = task0.next(10s);
    REQUIRE(heard.frame);
    CHECK(heard.frame->from == 1);
    CHECK(heard.frame->header.seq == i);
    const auto got = heard.frame->bytes.span();
    const auto want = sent[i].span();
    CHECK(std::equal(got.begin(), got.end(), want.begin(), want.end()));
  }
  // And back.
  auto header = data_frame(9);
  header.size = 64;
  (*task0.self)->send(task0.broker, LinkSendMsg{1, header, pattern_bytes(64, 9)});
  auto back = task1.next(10s);
  REQUIRE(back.frame);
  CHECK(back.frame->header.seq == 9);
}

TEST_CASE("over UCX a peer that said bye leaves normally when its control connection drops",
          "[net][data_plane][ucx]") {
  Broker task0(ucx_setup_of(0));
  Broker task1(ucx_setup_of(1));
  REQUIRE(connect_ucx_pair(task0, task1) == std::pair<std::string, std::string>{"", ""});
  bool said_bye = false;
  (*task1.self)->request(task1.broker, 10s, DataPlaneByeMsg{}).receive([&](bool) { said_bye = true; },
                                                                        [](caf::error&) {});
  REQUIRE(said_bye);
  // The bye arrives before the control plane's news (both from one process).
  task0.sync();
  for (int i = 0; i < 100; ++i) { // the bye crosses on task 0's progress thread
    (*task0.self)->send(task0.broker, PeerLostMsg{1, "its control connection went down"});
    auto heard = task0.next(100ms);
    if (heard.loss) {
      CHECK(heard.loss->rank == 1);
      CHECK(heard.loss->left);
      return;
    }
  }
  FAIL("task 0 never heard that task 1 left");
}

TEST_CASE("over UCX a peer reported down by the control plane is lost after the hint grace",
          "[net][data_plane][ucx]") {
  auto setup0 = ucx_setup_of(0);
  setup0.hint_grace = 200ms;
  Broker task0(setup0);
  Broker task1(ucx_setup_of(1));
  REQUIRE(connect_ucx_pair(task0, task1) == std::pair<std::string, std::string>{"", ""});
  (*task0.self)->send(task0.broker, PeerLostMsg{1, "its control connection went down"});
  CHECK_FALSE(task0.next(100ms).loss); // not before the grace
  auto heard = task0.next(10s);
  REQUIRE(heard.loss);
  CHECK_FALSE(heard.loss->left);
  CHECK_THAT(heard.loss->why, Catch::Contains("its control connection went down")
                                && Catch::Contains("sent nothing more over UCX shared memory"));
}

TEST_CASE("over UCX a peer reported down before its admission arrived still connects within the hint grace",
          "[net][data_plane][ucx]") {
  // A peer that admitted this task first may finish and exit before its own
  // hello is processed here (the TCP dial's race, over UCX).
  Broker task0(ucx_setup_of(0));
  Broker task1(ucx_setup_of(1));
  const auto offer0 = offer_of(task0);
  const auto offer1 = offer_of(task1);
  // The connect request leaves at once; the loss follows it in the mailbox.
  auto connecting =
    (*task0.self)->request(task0.broker, 30s, DataPlaneConnectMsg{{ucx_peer_of(1, offer1)}, 10s, true});
  (*task0.self)->send(task0.broker, PeerLostMsg{1, "its control connection went down"});
  task0.sync();
  std::string second = "no answer";
  (*task1.self)->request(task1.broker, 30s, DataPlaneConnectMsg{{ucx_peer_of(0, offer0)}, 10s, true})
    .receive([&](bool) { second.clear(); }, [&](caf::error& e) { second = task1.sys->render(e); });
  std::string first = "no answer";
  connecting.receive([&](bool) { first.clear(); }, [&](caf::error& e) { first = task0.sys->render(e); });
  CHECK(first == "");
  CHECK(second == "");
}

TEST_CASE("a UCX hello made with another cluster token is refused and fails the connect, naming the token",
          "[net][data_plane][ucx]") {
  Broker task0(ucx_setup_of(0));
  Broker task1(ucx_setup_of(1, "another secret"));
  const auto [error0, error1] = connect_ucx_pair(task0, task1);
  CHECK_THAT(error0, Catch::Contains("task worker:1 was lost while the data plane was connecting")
                       && Catch::Contains("does not prove the cluster token"));
  CHECK_THAT(error1, Catch::Contains("does not prove the cluster token"));
}

TEST_CASE("a UCX frame past TROUPE_MAX_FRAME_MIB loses its sender before anything is allocated for it",
          "[net][data_plane][ucx]") {
  auto setup0 = ucx_setup_of(0);
  setup0.max_frame_bytes = 1u << 20;
  Broker task0(setup0);
  Broker task1(ucx_setup_of(1));
  REQUIRE(connect_ucx_pair(task0, task1) == std::pair<std::string, std::string>{"", ""});
  auto header = data_frame(1);
  header.size = 2u << 20;
  (*task1.self)->send(task1.broker, LinkSendMsg{0, header, pattern_bytes(2u << 20, 1)});
  auto heard = task0.next(10s);
  REQUIRE(heard.loss);
  CHECK(heard.loss->rank == 1);
  CHECK_THAT(heard.loss->why, Catch::Contains("claims 2097152 payload bytes") && Catch::Contains("TROUPE_MAX_FRAME_MIB"));
}

TEST_CASE("a UCX data plane is offered only where it may run, saying why not", "[net][data_plane][ucx]") {
  auto tcp = setup_of(0); // transport "tcp"
  Broker plain(tcp);
  CHECK(offer_of(plain).address.empty());
  CHECK_THAT(offer_of(plain).error, Catch::Contains("TROUPE_TRANSPORT=tcp"));
  auto tls = ucx_setup_of(0);
  tls.tls = TlsContext::make(auth::derive_key("secret", auth::Purpose::tls));
  Broker encrypted(tls);
  CHECK(offer_of(encrypted).address.empty());
  CHECK_THAT(offer_of(encrypted).error, Catch::Contains("TROUPE_TLS=1"));
}
