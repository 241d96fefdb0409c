// ShardedVariable against real ParameterServerActors: layout and placement,
// parallel reads and updates, embedding_lookup, and errors that never hang.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/actors/ps/parameter_server_actor.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/strategies/sharded_variable.hpp>
#include <troupe/strategies/sharded_variable_factory.hpp>
#include <troupe/troupe.hpp>

#include "support/error_code_of.hpp"
#include "support/runtime_modes.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

using troupe::testing::error_message_of;

namespace {

/// Rows 0..rows-1 of width 2: row r is [10 r, 10 r + 1] (int64).
Tensor table(int64_t rows) {
  std::vector<int64_t> values;
  for (int64_t r = 0; r < rows; ++r) {
    values.push_back(10 * r);
    values.push_back(10 * r + 1);
  }
  return Tensor::from_vector<int64_t>(values).reshape(Shape{rows, 2});
}

/// A runtime with `num_ps` parameter servers "ps:0", "ps:1", ... and a
/// placement that already placed a 2-shard variable (so it starts at task 0
/// again with 2 servers, after going round once).
struct Servers {
  Servers(const testing::RuntimeMode& mode, int num_ps) : rt(testing::make_runtime(mode, 1)), placement(num_ps) {
    for (int i = 0; i < num_ps; ++i)
      ps.push_back(rt->impl().system().spawn<ParameterServerActor>(
        ParameterServerOptions{"ps:" + std::to_string(i)}));
    first = make_sharded_variable(*rt, ps, "first", table(4), Partitioner{FixedShardsPartitioner(2)}, placement);
  }
  ~Servers() {
    for (auto& server : ps)
      caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    ps.clear();
    rt->impl().drain();
  }

  /// The 13-row variable "w" split in 5 shards.
  ShardedVariable w() {
    return make_sharded_variable(*rt, ps, "w", table(13), Partitioner{FixedShardsPartitioner(5)}, placement);
  }

  /// Stops server `task`. The exit goes to its mailbox ahead of any later
  /// request (and is handled first), so every later request finds it gone.
  void stop(int task) {
    caf::anon_send_exit(ps[static_cast<std::size_t>(task)], caf::exit_reason::user_shutdown);
    rt->impl().drain();
  }

  std::unique_ptr<Runtime> rt; // declared first: the actor handles go before their runtime
  std::vector<ParameterServerActorHandle> ps;
  RoundRobinPlacement placement;
  std::optional<ShardedVariable> first;
};

} // namespace

TEST_CASE("a sharded variable splits 13 rows into 5 shards placed round robin", "[strategies][sharded_variable]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Servers s(mode, 2);
  auto w = s.w();
  CHECK(w.name() == "w");
  CHECK(w.dtype() == DType::int64);
  CHECK(w.shape() == Shape{13, 2});
  REQUIRE(w.num_shards() == 5);
  const std::vector<int64_t> rows{3, 3, 3, 2, 2};
  const std::vector<int> tasks{0, 1, 0, 1, 0};
  int64_t offset = 0;
  for (int64_t i = 0; i < 5; ++i) {
    auto shard = w.shard(i);
    CHECK(shard.shape() == Shape{rows[static_cast<std::size_t>(i)], 2});
    CHECK(shard.device().to_string()
          == "/job:ps/replica:0/task:" + std::to_string(tasks[static_cast<std::size_t>(i)]) + "/device:CPU:0");
    CHECK(shard.read_value().to_vector<int64_t>()
          == table(13).slice(offset, offset + rows[static_cast<std::size_t>(i)]).to_vector<int64_t>());
    offset += rows[static_cast<std::size_t>(i)];
  }
  CHECK(w.read_value().to_vector<int64_t>() == table(13).to_vector<int64_t>());
  CHECK(s.placement.variable_count() == 7);
  CHECK_THROWS_AS(w.shard(5), Error);
}

TEST_CASE("a sharded variable assigns, adds and subtracts across every shard", "[strategies][sharded_variable]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Servers s(mode, 3);
  auto w = s.w();
  auto ones = Tensor::full(Shape{13, 2}, 1.0, DType::int64);
  w.assign_add(table(13));
  auto doubled = table(13).to_vector<int64_t>();
  for (auto& x : doubled)
    x *= 2;
  CHECK(w.read_value().to_vector<int64_t>() == doubled);
  w.assign_sub(ones);
  for (auto& x : doubled)
    x -= 1;
  CHECK(w.read_value().to_vector<int64_t>() == doubled);
  w.assign(ones);
  CHECK(w.read_value().to_vector<int64_t>() == std::vector<int64_t>(26, 1));
  CHECK(w.shard(4).read_value().to_vector<int64_t>() == std::vector<int64_t>(4, 1));
}

TEST_CASE("embedding_lookup gathers rows across shards in the ids' order", "[strategies][sharded_variable]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Servers s(mode, 2);
  auto w = s.w();
  // Rows from shards 4, 0, 2, 0, 0, 3, 1, 4 and 0: out of order, with
  // repeats, and several different rows of one shard (0: rows 2, 0, 1).
  const std::vector<int64_t> ids{12, 2, 7, 0, 2, 10, 4, 12, 1};
  std::vector<int64_t> expected;
  for (int64_t id : ids) {
    expected.push_back(10 * id);
    expected.push_back(10 * id + 1);
  }
  auto rows = w.embedding_lookup(Tensor::from_vector<int64_t>(ids));
  CHECK(rows.shape() == Shape{9, 2});
  CHECK(rows.to_vector<int64_t>() == expected);
  auto rows32 = w.embedding_lookup(Tensor::from_vector<int32_t>({12, 2, 7, 0, 2, 10, 4, 12, 1}));
  CHECK(rows32.to_vector<int64_t>() == expected);
  CHECK(w.embedding_lookup(Tensor::from_vector<int64_t>(std::vector<int64_t>{})).shape() == Shape{0, 2});
}

TEST_CASE("sharded variable errors name the variable and are raised before sending", "[strategies][sharded_variable]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Servers s(mode, 2);
  auto w = s.w();
  auto text = error_message_of([&] { w.assign_add(Tensor::full(Shape{14, 2}, 1.0, DType::int64)); });
  CHECK_THAT(text, Contains("'w'") && Contains("(14, 2)") && Contains("(13, 2)"));
  text = error_message_of([&] { w.assign(Tensor::full(Shape{13, 3}, 1.0, DType::int64)); });
  CHECK_THAT(text, Contains("'w'") && Contains("(13, 3)") && Contains("(13, 2)"));
  text = error_message_of([&] { w.assign_sub(Tensor::full(Shape{13, 2}, 1.0, DType::float32)); });
  CHECK_THAT(text, Contains("'w'") && Contains("float32") && Contains("int64"));
  CHECK(w.read_value().to_vector<int64_t>() == table(13).to_vector<int64_t>()); // the servers are unchanged

  text = error_message_of([&] { (void) w.embedding_lookup(Tensor::from_vector<int64_t>({3, 13})); });
  CHECK_THAT(text, Contains("'w'") && Contains("id 13") && Contains("13 rows"));
  text = error_message_of([&] { (void) w.embedding_lookup(Tensor::from_vector<int32_t>({-1})); });
  CHECK_THAT(text, Contains("id -1"));
  text = error_message_of([&] { (void) w.embedding_lookup(Tensor::from_vector<float>({1.0f})); });
  CHECK_THAT(text, Contains("int32 or int64"));
}

TEST_CASE("a sharded variable on an exited parameter server fails naming it", "[strategies][sharded_variable]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Servers s(mode, 2);
  auto w = s.w();
  s.stop(1);
  const auto start = std::chrono::steady_clock::now();
  auto text = error_message_of([&] { (void) w.read_value(); });
  CHECK_THAT(text, Contains("'w'") && Contains("/job:ps/replica:0/task:1/device:CPU:0"));
  text = error_message_of([&] { w.assign_add(table(13)); });
  CHECK_THAT(text, Contains("assign_add") && Contains("task:1"));
  text = error_message_of([&] { (void) w.embedding_lookup(Tensor::from_vector<int64_t>({3})); }); // row 3: shard 1
  CHECK_THAT(text, Contains("embedding_lookup") && Contains("task:1"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  // The live server still answers for its own shards, which took the
  // assign_add: immediate updates are not transactional (docs/protocol.md).
  CHECK(w.shard(0).read_value().to_vector<int64_t>() == std::vector<int64_t>{0, 2, 20, 22, 40, 42});
}
