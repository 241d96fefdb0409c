// The node actor's verdicts on lost members and its named actors, in one
// process: peers are local actors standing in for other tasks' node actors.

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/bootstrap/node_actor.hpp>
#include <troupe/net/link/link_messages.hpp>

using namespace troupe::internal;
using namespace std::chrono_literals;
using Catch::Contains;

namespace {

const std::vector<std::string> members = {"chief:0", "worker:0", "worker:1", "ps:0"};

/// A stand-in for another task's node actor, cast unchecked as dial_node
/// casts a remote one.
NodeActorHandle as_node(const caf::actor& stand_in) {
  return caf::actor_cast<NodeActorHandle>(stand_in);
}

/// The hello of task `task` (rank `rank`) of the spec with fingerprint 42.
HelloMsg test_hello(int rank, const std::string& task, int pid, const NodeActorHandle& node) {
  HelloMsg h;
  h.rank = rank;
  h.task = task;
  h.spec_fingerprint = 42;
  h.pid = pid;
  h.host = "127.0.0.1";
  h.node = node;
  return h;
}

/// A node actor of task `me` (a member index) with stand-ins for every other
/// member's node actor, added as peers.
struct Node {
  caf::actor_system_config cfg;
  std::optional<caf::actor_system> sys;
  NodeActorHandle node;
  std::vector<caf::actor> peers;

  Node(int me, const DataPlaneBrokerHandle& data_plane_of, std::string restartable_job = {}) {
    add_cluster_types(cfg);
    sys.emplace(cfg);
    HelloMsg hello = test_hello(me, members[static_cast<size_t>(me)], 1, NodeActorHandle{});
    node = sys->spawn<NodeActor>(NodeSetup{hello, members, {"h:1", "h:2", "h:3", "h:4"}, 3, data_plane_of,
                                           std::chrono::steady_clock::now(), 60, std::move(restartable_job)});
    for (int r = 0; r < static_cast<int>(members.size()); ++r) {
      auto peer = sys->spawn([]() -> caf::behavior { return {[](int) {}}; });
      peers.push_back(peer);
      if (r != me)
        caf::anon_send(node, NodePeerMsg{as_node(peer), test_hello(r, members[static_cast<size_t>(r)], 100 + r, as_node(peer))});
    }
  }
  ~Node() {
    for (auto& peer : peers)
      caf::anon_send_exit(peer, caf::exit_reason::kill);
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  }
};

TaskLostMsg next_verdict(caf::scoped_actor& self) {
  TaskLostMsg out;
  self->receive([&](const TaskLostMsg& verdict) { out = verdict; },
                caf::after(10s) >> [] { FAIL("no verdict within 10 s"); });
  return out;
}

} // namespace

TEST_CASE("a parameter server's node decides from the control connection: a member that exits normally left, "
          "one that dies is lost",
          "[net][node]") {
  Node ps(3, DataPlaneBrokerHandle{}); // ps:0 has no data plane
  caf::scoped_actor watcher{*ps.sys};
  caf::anon_send(ps.node, NodeWatchMsg{caf::actor_cast<caf::actor>(watcher)});

  caf::anon_send_exit(ps.peers[0], caf::exit_reason::user_shutdown);
  auto verdict = next_verdict(watcher);
  CHECK(verdict.task == "chief:0");
  CHECK(verdict.left);
  CHECK(verdict.why == "it shut down (its program ended)");

  caf::anon_send_exit(ps.peers[2], caf::exit_reason::kill);
  verdict = next_verdict(watcher);
  CHECK(verdict.task == "worker:1");
  CHECK_FALSE(verdict.left);
  CHECK_THAT(verdict.why, Contains("its control connection went down"));

  // A watcher that comes later hears both verdicts at once.
  caf::scoped_actor late{*ps.sys};
  caf::anon_send(ps.node, NodeWatchMsg{caf::actor_cast<caf::actor>(late)});
  CHECK(next_verdict(late).task == "chief:0");
  CHECK(next_verdict(late).task == "worker:1");
}

TEST_CASE("a member's farewell puts its job's error into the verdict when it leaves, and only a member speaks for itself",
          "[net][node]") {
  Node ps(3, DataPlaneBrokerHandle{});
  caf::scoped_actor watcher{*ps.sys};
  caf::anon_send(ps.node, NodeWatchMsg{caf::actor_cast<caf::actor>(watcher)});
  // A farewell from an actor that is no member's node is not taken as any
  // member's. This one does not understand the answer and bounces an error
  // back, which must not end the node (CAF's default for an error message).
  auto stranger = ps.sys->spawn([]() -> caf::behavior { return {[](int) {}}; });
  caf::send_as(stranger, ps.node, NodeFarewellMsg{"a forged error"});
  caf::send_as(ps.peers[0], ps.node, NodeFarewellMsg{"function 'step' failed on worker:1: NaN"});
  caf::anon_send_exit(ps.peers[0], caf::exit_reason::user_shutdown);
  auto verdict = next_verdict(watcher);
  CHECK(verdict.task == "chief:0");
  CHECK(verdict.left);
  CHECK(verdict.job_error == "function 'step' failed on worker:1: NaN");
  CHECK(verdict.why == "it shut down after its job failed: function 'step' failed on worker:1: NaN");
  // A member that left without one left normally.
  caf::anon_send_exit(ps.peers[1], caf::exit_reason::user_shutdown);
  verdict = next_verdict(watcher);
  CHECK(verdict.task == "worker:0");
  CHECK(verdict.job_error.empty());
  caf::anon_send_exit(stranger, caf::exit_reason::kill);
}

TEST_CASE("a member lost after the chief's farewell carries the chief's word, one lost before it does not",
          "[net][node]") {
  Node worker(1, DataPlaneBrokerHandle{});
  caf::scoped_actor watcher{*worker.sys};
  caf::anon_send(worker.node, NodeWatchMsg{caf::actor_cast<caf::actor>(watcher)});
  caf::anon_send_exit(worker.peers[2], caf::exit_reason::kill);
  auto verdict = next_verdict(watcher);
  CHECK(verdict.task == "worker:1");
  CHECK_FALSE(verdict.chief_said_farewell);
  // The chief ends the job with an error; the parameter server, told too,
  // ends first (its verdict comes before the chief's).
  caf::send_as(worker.peers[0], worker.node, NodeFarewellMsg{"function 'step' failed: NaN"});
  caf::anon_send_exit(worker.peers[3], caf::exit_reason::kill);
  verdict = next_verdict(watcher);
  CHECK(verdict.task == "ps:0");
  CHECK_FALSE(verdict.left);
  CHECK(verdict.chief_said_farewell);
  CHECK(verdict.chief_job_error == "function 'step' failed: NaN");
}

TEST_CASE("a node's farewell is answered once every member acknowledged or failed to, within its wait",
          "[net][node]") {
  Node chief(0, DataPlaneBrokerHandle{});
  caf::scoped_actor self{*chief.sys};
  // The stand-in peers do not know the message: each answers with an error at once.
  bool answered = false;
  self->request(chief.node, 10s, NodeSayFarewellMsg{"the job failed", 2s})
    .receive([&](bool) { answered = true; }, [&](caf::error& e) { FAIL(chief.sys->render(e)); });
  CHECK(answered);
  // worker:1's node now takes the farewell and never answers: the farewell
  // is answered once its wait for that member is over, not later.
  auto promises = std::make_shared<std::vector<caf::response_promise>>();
  auto silent = chief.sys->spawn([promises](caf::event_based_actor* me) -> caf::behavior {
    return {[me, promises](const NodeFarewellMsg&) -> caf::result<bool> {
      promises->push_back(me->make_response_promise());
      return promises->back();
    }};
  });
  caf::anon_send(chief.node,
                 NodePeerMsg{as_node(silent), test_hello(2, members[2], 200, as_node(silent))});
  const auto start = std::chrono::steady_clock::now();
  answered = false;
  self->request(chief.node, 10s, NodeSayFarewellMsg{"the job failed", 500ms})
    .receive([&](bool) { answered = true; }, [&](caf::error& e) { FAIL(chief.sys->render(e)); });
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(answered);
  CHECK(waited >= 400ms);
  CHECK(waited < 5s);
  caf::anon_send_exit(silent, caf::exit_reason::kill);
}

TEST_CASE("a worker's node takes its verdicts on the chief and workers from the data plane and on ps tasks from the "
          "control connection",
          "[net][node]") {
  caf::actor_system_config plane_cfg;
  caf::actor_system plane_sys{plane_cfg};
  caf::scoped_actor plane{plane_sys}; // stands in for the data plane
  Node worker(1, caf::actor_cast<DataPlaneBrokerHandle>(plane));
  caf::scoped_actor watcher{*worker.sys};
  caf::anon_send(worker.node, NodeWatchMsg{caf::actor_cast<caf::actor>(watcher)});
  // The node listens to the data plane's verdicts as a collective group would.
  plane->receive([&](const LinkRegisterMsg& msg) {
    CHECK(msg.group == loss_watch_group_id);
    CHECK(msg.actor == worker.node);
  }, caf::after(10s) >> [] { FAIL("the node did not register with the data plane"); });

  // The chief's control connection goes down: only a hint to the data plane.
  caf::anon_send_exit(worker.peers[0], caf::exit_reason::kill);
  plane->receive([&](const PeerLostMsg& hint) { CHECK(hint.rank == 0); },
                 caf::after(10s) >> [] { FAIL("no hint to the data plane"); });
  // The parameter server's: decided at once, with no hint (it has no data connection).
  caf::anon_send_exit(worker.peers[3], caf::exit_reason::kill);
  auto verdict = next_verdict(watcher);
  CHECK(verdict.task == "ps:0");
  CHECK_FALSE(verdict.left);
  bool hinted = false;
  plane->receive([&](const PeerLostMsg&) { hinted = true; }, caf::after(0s) >> [] {});
  CHECK_FALSE(hinted);
  // The data plane decides on the chief.
  caf::anon_send(worker.node, PeerLostMsg{0, "its data connection closed", false});
  verdict = next_verdict(watcher);
  CHECK(verdict.task == "chief:0");
  CHECK(verdict.why == "its data connection closed");
}

TEST_CASE("a node answers a lookup of a published actor, at once or once it is published", "[net][node]") {
  Node ps(3, DataPlaneBrokerHandle{});
  caf::scoped_actor self{*ps.sys};
  auto published = ps.sys->spawn([]() -> caf::behavior { return {[](int) {}}; });
  caf::actor found;
  // Asked before it is published: answered when it is.
  auto early = self->request(ps.node, 10s, NodeLookupMsg{"server"});
  caf::anon_send(ps.node, NodePublishMsg{"server", published});
  early.receive([&](caf::actor& a) { found = a; }, [&](caf::error& e) { FAIL(ps.sys->render(e)); });
  CHECK(found == published);
  found = nullptr;
  self->request(ps.node, 10s, NodeLookupMsg{"server"})
    .receive([&](caf::actor& a) { found = a; }, [&](caf::error& e) { FAIL(ps.sys->render(e)); });
  CHECK(found == published);
  // A name longer than the bound is refused, naming the bound.
  std::string error;
  self->request(ps.node, 10s, NodeLookupMsg{std::string(NodeLookupMsg::max_name_bytes + 1, 'x')})
    .receive([](caf::actor&) { FAIL("an oversized name was answered"); },
             [&](caf::error& e) { error = ps.sys->render(e); });
  CHECK_THAT(error, Contains("at most 256 bytes"));
  caf::anon_send_exit(published, caf::exit_reason::kill);
}

TEST_CASE("a node lookup message round-trips through CAF's binary serializer", "[net][node]") {
  caf::actor_system_config cfg;
  add_cluster_types(cfg);
  caf::actor_system sys{cfg};
  NodeLookupMsg in{"parameter_server"};
  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  REQUIRE_FALSE(sink(in));
  NodeLookupMsg out;
  caf::binary_deserializer source(sys, bytes);
  REQUIRE_FALSE(source(out));
  CHECK(out.name == "parameter_server");
}

TEST_CASE("a worker's node in a formed parameter-server cluster takes a restarted worker back and watches it by its "
          "control connection",
          "[net][node]") {
  caf::actor_system_config plane_cfg;
  caf::actor_system plane_sys{plane_cfg};
  caf::scoped_actor plane{plane_sys}; // stands in for the data plane
  Node worker(1, caf::actor_cast<DataPlaneBrokerHandle>(plane), "worker");
  caf::scoped_actor watcher{*worker.sys};
  caf::anon_send(worker.node, NodeWatchMsg{caf::actor_cast<caf::actor>(watcher)});
  plane->receive([](const LinkRegisterMsg&) {}, caf::after(10s) >> [] { FAIL("the node did not register"); });

  // worker:1 dies; its data connection has not decided yet.
  caf::anon_send_exit(worker.peers[2], caf::exit_reason::kill);
  plane->receive([&](const PeerLostMsg& hint) { CHECK(hint.rank == 2); },
                 caf::after(10s) >> [] { FAIL("no hint to the data plane"); });
  // Its restarted process says hello: taken back, and told so.
  auto restarted = worker.sys->spawn([]() -> caf::behavior { return {[](int) {}}; });
  worker.peers.push_back(restarted);
  caf::scoped_actor edge{*worker.sys};
  bool rejoined = false;
  edge->request(worker.node, 10s, test_hello(2, "worker:1", 999, as_node(restarted)))
    .receive([&](const HelloMsg& reply) { rejoined = reply.rejoined; },
             [&](caf::error& e) { FAIL("the restarted worker was refused: " << worker.sys->render(e)); });
  CHECK(rejoined);
  // The watchers hear the old process's verdict first, then the rejoin with the new node.
  auto verdict = next_verdict(watcher);
  CHECK(verdict.task == "worker:1");
  CHECK_FALSE(verdict.left);
  watcher->receive([&](const TaskJoinedMsg& joined) {
    CHECK(joined.task == "worker:1");
    CHECK(joined.node == restarted);
  }, caf::after(10s) >> [] { FAIL("no TaskJoinedMsg"); });
  // A second process as worker:1 while the restarted one lives is a duplicate.
  edge->request(worker.node, 10s, test_hello(2, "worker:1", 1000, as_node(restarted)))
    .receive([&](const HelloMsg&) { FAIL("a duplicate of a live task was taken"); },
             [&](caf::error& e) { CHECK_THAT(worker.sys->render(e), Contains("already taken by the process with pid 999")); });
  // The data plane's late verdict concerns the old process: dropped. The
  // restarted process (no data plane) is decided by its control connection.
  caf::anon_send(worker.node, PeerLostMsg{2, "its data connection closed", false});
  caf::anon_send_exit(restarted, caf::exit_reason::kill);
  verdict = next_verdict(watcher);
  CHECK(verdict.task == "worker:1");
  CHECK_THAT(verdict.why, Contains("its control connection went down"));
}

TEST_CASE("a node refuses a restarted task in a cluster without parameter servers",
          "[net][node]") {
  Node ps(0, DataPlaneBrokerHandle{}); // the chief, with no restartable job: a cluster whose tasks all run collectives
  caf::scoped_actor watcher{*ps.sys};
  caf::anon_send(ps.node, NodeWatchMsg{caf::actor_cast<caf::actor>(watcher)});
  caf::anon_send_exit(ps.peers[2], caf::exit_reason::kill);
  CHECK(next_verdict(watcher).task == "worker:1");
  caf::scoped_actor edge{*ps.sys};
  edge->request(ps.node, 10s, test_hello(2, "worker:1", 999, as_node(ps.peers[0])))
    .receive([&](const HelloMsg&) { FAIL("a restarted task was taken back"); },
             [&](caf::error& e) {
               CHECK_THAT(ps.sys->render(e), Contains("a formed cluster does not take a restarted task back"));
             });
}

TEST_CASE("a node answers the same process's hello again as the first time, and refuses another process as that task",
          "[net][node]") {
  Node chief(0, DataPlaneBrokerHandle{});
  caf::scoped_actor edge{*chief.sys};
  // worker:1's process (pid 102, node peers[2]) joined; its hello comes again
  // (the first answer came after it gave up waiting): answered, not refused.
  edge->request(chief.node, 10s, test_hello(2, "worker:1", 102, as_node(chief.peers[2])))
    .receive([&](const HelloMsg& reply) { CHECK(reply.task == "chief:0"); },
             [&](caf::error& e) { FAIL(chief.sys->render(e)); });
  // Another process claiming worker:1 is a duplicate.
  edge->request(chief.node, 10s, test_hello(2, "worker:1", 555, as_node(chief.peers[1])))
    .receive([&](const HelloMsg&) { FAIL("a second process was taken as worker:1"); },
             [&](caf::error& e) { CHECK_THAT(chief.sys->render(e), Contains("is already taken by the process with pid 102")); });
}
