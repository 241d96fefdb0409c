// Parameter-server reads and updates whose bytes are read straight out of the
// other process's memory. In one process: the test lets this process read
// "the other one" (itself) by registering its own node, so that every request
// through PsClient takes the cross-memory path a task on the same host takes.

#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <vector>

#include <unistd.h>

#include <caf/all.hpp>

#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/ps/parameter_server_actor.hpp>
#include <troupe/actors/ps/ps_client.hpp>
#include <troupe/actors/ps/ps_cross_memory.hpp>
#include <troupe/net/link/cross_memory.hpp>
#include <troupe/troupe.hpp>

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

/// Lets this process read its own actors' memory as it would a peer's, for
/// the test's lifetime.
struct ReadableSelf {
  explicit ReadableSelf(caf::actor_system& sys) {
    CrossMemoryPeers::set({{sys.node(), static_cast<int32_t>(::getpid())}});
  }
  ~ReadableSelf() { CrossMemoryPeers::clear(); }
};

Tensor ramp(int64_t n, float start) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = start + static_cast<float>(i % 1000);
  return Tensor::from_vector(v);
}

/// Stops the server at the end of the test, whatever happened: its lease
/// timers would keep it, and the runtime's end, waiting otherwise
/// (PsCluster stops its server the same way).
struct StopAtEnd {
  caf::actor actor;
  ~StopAtEnd() { caf::anon_send_exit(actor, caf::exit_reason::user_shutdown); }
};

PsStats stats_of(Runtime& rt, const ParameterServerActorHandle& ps) {
  return ps_request_all<PsStats>(rt.impl(), std::vector<PsRequest<PsStatsMsg>>{{ps, "stats", PsStatsMsg{}}}, "stats",
                                 false)
    .at(0)
    .value();
}

} // namespace

TEST_CASE("a cross-memory tensor is read whole from the process it names, and checked before anything is allocated",
          "[actors][ps][cross-memory]") {
  const auto source = ramp(100000, 1.0f);
  CrossMemoryTensor remote;
  auto loan = lend(source, remote);
  REQUIRE(loan);
  REQUIRE(remote.bytes == source.nbytes());
  Tensor out;
  REQUIRE(take_cross_memory(::getpid(), remote, &source, out).empty());
  CHECK(out.to_vector<float>() == source.to_vector<float>());
  CHECK_FALSE(out.shares_buffer_with(source));

  // Small, empty or device tensors travel in the message.
  CrossMemoryTensor none;
  CHECK_FALSE(lend(ramp(100, 0.0f), none));
  CHECK(none.bytes == 0);
  CHECK(cross_memory_of(Tensor{}).bytes == 0);

  auto lying = remote;
  lying.bytes += 4; // the shape does not hold that many bytes
  CHECK_THAT(take_cross_memory(::getpid(), lying, nullptr, out), Contains("does not hold 400004 bytes"));
  auto other_shape = remote;
  other_shape.dims = {50000, 2};
  CHECK_THAT(take_cross_memory(::getpid(), other_shape, &source, out),
             Contains("its tensor is float32 (50000, 2), the shard float32 (100000,)"));
  auto unknown = remote;
  unknown.dtype = 200;
  CHECK_THAT(take_cross_memory(::getpid(), unknown, nullptr, out), Contains("unknown dtype code 200"));
  auto unmapped = remote;
  unmapped.address = 4096; // the zero page: never mapped
  CHECK_THAT(take_cross_memory(::getpid(), unmapped, nullptr, out), Contains("process_vm_readv of 400000 bytes"));
  auto unlent = remote;
  unlent.lease = 0;
  CHECK_THAT(take_cross_memory(::getpid(), unlent, nullptr, out), Contains("without the sender's loan"));
  CHECK_FALSE(out.valid());

  // Taken back: a reader that comes late gets an error, not what the memory holds next.
  const auto open_before = CrossMemoryLoan::open_count();
  loan.reset();
  CHECK(CrossMemoryLoan::open_count() == open_before - 1);
  CHECK_THAT(take_cross_memory(::getpid(), remote, &source, out), Contains("had taken the value back"));
  CHECK_FALSE(out.valid());
}

TEST_CASE("read leases are loans, released by name, and bounded", "[actors][ps][cross-memory]") {
  const auto open_before = CrossMemoryLoan::open_count();
  {
    ReadLeases leases;
    const auto a = leases.hold(ramp(10, 0.0f));
    const auto b = leases.hold(ramp(10, 0.0f));
    CHECK(a.token != 0);
    CHECK(b.token != a.token);
    CHECK(CrossMemoryLoan::open_count() == open_before + 2);
    leases.release(a.token);
    leases.release(a.token); // twice: the timer's release after the reader's
    CHECK(leases.size() == 1);
    CHECK(CrossMemoryLoan::open_count() == open_before + 1);
    while (leases.size() < ReadLeases::max_held)
      REQUIRE(leases.hold(ramp(1, 0.0f)).token != 0);
    CHECK(leases.hold(ramp(1, 0.0f)).token == 0);
  }
  CHECK(CrossMemoryLoan::open_count() == open_before); // the server's end closes the rest
}

TEST_CASE("parameter-server reads and updates between tasks on one host go through the sender's memory",
          "[actors][ps][cross-memory]") {
  Runtime rt(RuntimeOptions{});
  auto& sys = rt.impl().system();
  auto ps = sys.spawn<ParameterServerActor>(ParameterServerOptions{"ps:0"});
  const StopAtEnd stop{caf::actor_cast<caf::actor>(ps)};
  const ShardKey key{1, 0, 0};
  const auto initial = ramp(1 << 18, 1.0f); // 1 MiB
  (void)ps_request_all<void>(rt.impl(),
                             std::vector<PsRequest<PsCreateMsg>>{{ps, "create", PsCreateMsg{key, "w", initial}}},
                             "create", false);
  ReadableSelf readable(sys);

  // A read: the value comes out of the server's memory, and its lease ends.
  auto read = [&] {
    return ps_request_all<Tensor>(rt.impl(), std::vector<PsRequest<PsReadMsg>>{{ps, "read", PsReadMsg{key, {}}}},
                                  "read", false)
      .at(0)
      .value();
  };
  CHECK(read().to_vector<float>() == initial.to_vector<float>());
  // The release is a message of its own: the stats request after it sees it handled.
  CHECK(stats_of(rt, ps).read_leases == 0);

  // What travels: a reference into the server's memory, held until released.
  {
    caf::scoped_actor self{sys};
    PsReadReply reply;
    self->request(ps, std::chrono::seconds(30), PsReadMsg{key, {}, true})
      .receive([&](PsReadReply& r) { reply = std::move(r); }, [](caf::error& e) { FAIL(to_string(e)); });
    CHECK_FALSE(reply.value.valid());
    CHECK(reply.remote.bytes == initial.nbytes());
    CHECK(reply.remote.lease != 0);
    CHECK(stats_of(rt, ps).read_leases == 1);
    self->send(ps, PsReleaseMsg{reply.remote.lease});
    CHECK(stats_of(rt, ps).read_leases == 0);
    // A reader that did not allow it gets the bytes in the message.
    self->request(ps, std::chrono::seconds(30), PsReadMsg{key, {}, false})
      .receive([&](PsReadReply& r) { reply = std::move(r); }, [](caf::error& e) { FAIL(to_string(e)); });
    CHECK(reply.value.valid());
    CHECK(reply.remote.bytes == 0);
  }
  // And an update lends its value instead of carrying it.
  const auto value = ramp(1 << 18, 0.0f);
  ShardUpdate lent_update{key, UpdateOp::ASSIGN_ADD, value, {}};
  CrossMemoryTensor remote;
  const auto lent = lend_to_server(ps, lent_update, remote);
  CHECK(lent);
  CHECK_FALSE(lent_update.value.valid());
  CHECK(remote.address == reinterpret_cast<uintptr_t>(value.raw_data()));
  CHECK(remote.lease != 0);

  // An immediate update and a staged one: the server reads each value out of this process.
  const auto delta = ramp(1 << 18, 0.5f);
  // One update through PsClient, as ShardedVariable sends it.
  const auto apply = [&](const char* what, const ShardUpdate& update) {
    (void)ps_request_all<void>(rt.impl(), std::vector<PsRequest<PsApplyMsg>>{{ps, what, PsApplyMsg{update}}}, what,
                               false);
  };
  apply("add", ShardUpdate{key, UpdateOp::ASSIGN_ADD, delta, {}});
  auto want = initial.to_vector<float>();
  const auto d = delta.to_vector<float>();
  for (std::size_t i = 0; i < want.size(); ++i)
    want[i] += d[i];
  CHECK(read().to_vector<float>() == want);
  const AttemptId attempt{1, 1};
  const PsStageMsg stage{attempt, 0, ShardUpdate{key, UpdateOp::ASSIGN, delta, {}}};
  (void)ps_request_all<void>(rt.impl(), std::vector<PsRequest<PsStageMsg>>{{ps, "stage", stage}}, "stage", false);
  auto staged_read = ps_request_all<Tensor>(
    rt.impl(), std::vector<PsRequest<PsReadMsg>>{{ps, "read", PsReadMsg{key, attempt}}}, "read", false);
  CHECK(staged_read.at(0).value().to_vector<float>() == d);
  CHECK(read().to_vector<float>() == want); // not committed

  // A lent update of another shape is named like any other mismatch, unread.
  try {
    apply("misfit", ShardUpdate{key, UpdateOp::ASSIGN_ADD, ramp(1 << 17, 0.0f), {}});
    FAIL("a misfit update was applied");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::shape_mismatch);
    CHECK_THAT(e.what(), Contains("the update is float32 (131072,) but the shard is"));
  }
}

TEST_CASE("an update that points into another process's memory is refused by a server that may not read it",
          "[actors][ps][cross-memory]") {
  Runtime rt(RuntimeOptions{});
  auto ps = rt.impl().system().spawn<ParameterServerActor>(ParameterServerOptions{"ps:0"});
  const StopAtEnd stop{caf::actor_cast<caf::actor>(ps)};
  const ShardKey key{1, 0, 0};
  const auto initial = ramp(1 << 16, 1.0f);
  (void)ps_request_all<void>(rt.impl(),
                             std::vector<PsRequest<PsCreateMsg>>{{ps, "create", PsCreateMsg{key, "w", initial}}},
                             "create", false);
  // Not registered as readable: a forged reference is an error, not a read.
  PsApplyMsg forged{ShardUpdate{key, UpdateOp::ASSIGN, Tensor{}, {}}};
  const auto loan = lend(initial, forged.remote);
  CHECK_THROWS_WITH(ps_request_all<void>(rt.impl(), std::vector<PsRequest<PsApplyMsg>>{{ps, "forged", forged}},
                                         "forged", false),
                    Contains("points into another process's memory, which this server may not read"));
}
