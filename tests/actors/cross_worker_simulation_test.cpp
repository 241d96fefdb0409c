// The cross-worker collective protocols with several workers in one process
// over simulated links, under the seeded simulation scheduler (and threaded).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/error_code_of.hpp"
#include "support/replica_errors.hpp"
#include "support/runtime_modes.hpp"
#include "support/simulated_replica_groups.hpp"

using namespace troupe;
using namespace troupe::internal;
using troupe::testing::SimulatedReplicaGroups;
using Catch::Matchers::Contains;
using troupe::testing::require_all_ok;
using troupe::testing::what;

namespace {

CollectiveRequest all_reduce(ReduceOp op, std::vector<Tensor> tensors) {
  CollectiveRequest r;
  r.kind = CollectiveKind::all_reduce;
  r.op = op;
  r.tensors = std::move(tensors);
  return r;
}

CollectiveRequest all_gather(int axis, std::vector<Tensor> tensors) {
  CollectiveRequest r;
  r.kind = CollectiveKind::all_gather;
  r.axis = axis;
  r.tensors = std::move(tensors);
  return r;
}

// Global replica id g's value at element i: distinct, exact in float32.
Tensor values(int g, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(g * 100 + i % 89);
  return Tensor::from_vector(v);
}

std::vector<float> summed(int replicas, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), 0.0f);
  for (int g = 0; g < replicas; ++g)
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] += static_cast<float>(g * 100 + i % 89);
  return out;
}

} // namespace

TEST_CASE("all_reduce sums across 3 workers x 2 replicas by direct exchange, halving-doubling and chunked ring",
          "[actors][cluster]") {
  for (const auto& mode : troupe::testing::all_runtime_modes()) {
    CAPTURE(mode.name());
    auto rt = troupe::testing::make_runtime(mode, 2);
    GroupOptions options;
    options.cluster = CrossWorkerSetup{};
    options.cluster->ring.chunk_bytes = 512;
    options.cluster->direct_exchange_max_bytes = 256;
    options.cluster->halving_doubling_max_bytes = 1024;
    SimulatedReplicaGroups cluster(*rt, 3, 2, options);
    std::vector<std::vector<float>> got(6);
    auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
      const int g = w * 2 + r;
      // 16 elements: a direct exchange (2 peers x 64 bytes <= 256); 40:
      // halving-doubling; 3000: the ring, in 512-byte chunks.
      auto tiny = h.collective(all_reduce(ReduceOp::SUM, {values(g, 16)}));
      REQUIRE(tiny.tensors.at(0).to_vector<float>() == summed(6, 16));
      auto small = h.collective(all_reduce(ReduceOp::SUM, {values(g, 40)}));
      auto big = h.collective(all_reduce(ReduceOp::SUM, {values(g, 3000)}));
      REQUIRE(small.tensors.at(0).to_vector<float>() == summed(6, 40));
      got[static_cast<size_t>(g)] = big.tensors.at(0).to_vector<float>();
    });
    require_all_ok(errors);
    for (const auto& v : got)
      REQUIRE(v == summed(6, 3000));
  }
}

TEST_CASE("all_reduce MEAN of a mixed list divides by every worker's replicas, pack by pack", "[actors][cluster]") {
  for (const auto& mode : {troupe::testing::RuntimeMode{false, 0}, troupe::testing::RuntimeMode{true, 5}}) {
    CAPTURE(mode.name());
    auto rt = troupe::testing::make_runtime(mode, 2);
    GroupOptions options;
    options.cluster = CrossWorkerSetup{};
    options.cluster->bytes_per_pack = 64; // several packs
    SimulatedReplicaGroups cluster(*rt, 2, 2, options);
    auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
      const int g = w * 2 + r; // 0..3
      auto res = h.collective(all_reduce(
        ReduceOp::MEAN, {Tensor::full({5}, 4.0 * g, DType::float32), Tensor::full({30}, 8.0 * g, DType::float64),
                         Tensor::full({2, 2}, g, DType::int32), Tensor(static_cast<int64_t>(10 * g))}));
      REQUIRE(res.tensors.size() == 4);
      REQUIRE(res.tensors[0].to_vector<float>() == std::vector<float>(5, 6.0f));
      REQUIRE(res.tensors[1].to_vector<double>() == std::vector<double>(30, 12.0));
      REQUIRE(res.tensors[2].shape() == Shape{2, 2});
      REQUIRE(res.tensors[2].to_vector<int32_t>() == std::vector<int32_t>(4, 1)); // 6 / 4 truncates
      REQUIRE(res.tensors[3].item<int64_t>() == 15);
    });
    require_all_ok(errors);
  }
}

TEST_CASE("all_gather across workers concatenates uneven blocks in global replica order", "[actors][cluster]") {
  for (const auto& mode : {troupe::testing::RuntimeMode{false, 0}, troupe::testing::RuntimeMode{true, 11}}) {
    CAPTURE(mode.name());
    auto rt = troupe::testing::make_runtime(mode, 2);
    SimulatedReplicaGroups cluster(*rt, 3, 2, GroupOptions{});
    auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
      const int g = w * 2 + r;
      // Replica g contributes g+1 rows of two columns, all equal to g.
      auto res = h.collective(all_gather(0, {Tensor::full({g + 1, 2}, g, DType::int32)}));
      const auto& t = res.tensors.at(0);
      REQUIRE(t.shape() == Shape{21, 2});
      std::vector<int32_t> want;
      for (int k = 0; k < 6; ++k)
        for (int row = 0; row <= k; ++row)
          want.insert(want.end(), {k, k});
      REQUIRE(t.to_vector<int32_t>() == want);
    });
    require_all_ok(errors);
  }
}

TEST_CASE("broadcast gives every replica of every worker the first replica's tensors", "[actors][cluster]") {
  for (const auto& mode : {troupe::testing::RuntimeMode{false, 0}, troupe::testing::RuntimeMode{true, 6}}) {
    CAPTURE(mode.name());
    auto rt = troupe::testing::make_runtime(mode, 2);
    SimulatedReplicaGroups cluster(*rt, 3, 2, GroupOptions{});
    auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
      CollectiveRequest request;
      request.kind = CollectiveKind::broadcast;
      request.tensors = {values(w * 2 + r, 50), Tensor::zeros({0, 3}, DType::int32)};
      auto res = h.collective(std::move(request));
      REQUIRE(res.tensors.at(0).to_vector<float>() == values(0, 50).to_vector<float>());
      REQUIRE(res.tensors.at(1).shape() == Shape{0, 3});
    });
    require_all_ok(errors);
  }
}

TEST_CASE("workers that issue mismatched collectives all fail naming both tasks", "[actors][cluster]") {
  for (const auto& mode : {troupe::testing::RuntimeMode{false, 0}, troupe::testing::RuntimeMode{true, 2}}) {
    CAPTURE(mode.name());
    auto rt = troupe::testing::make_runtime(mode, 1);
    SimulatedReplicaGroups cluster(*rt, 3, 1, GroupOptions{});
    auto errors = cluster.run([&](int w, int, ReplicaHandle& h) {
      (void)h.collective(all_reduce(ReduceOp::SUM, {Tensor::zeros({w == 2 ? 4 : 3}, DType::float32)}));
    });
    for (int w = 0; w < 3; ++w) {
      REQUIRE(errors[static_cast<size_t>(w)][0]);
      INFO(what(errors[static_cast<size_t>(w)][0]));
      CHECK(troupe::testing::error_code_of([&] { std::rethrow_exception(errors[static_cast<size_t>(w)][0]); }) == Errc::key_mismatch);
      CHECK_THAT(what(errors[static_cast<size_t>(w)][0]), Contains("task worker:2 sent all_reduce(SUM) of float32 (4,)"));
    }
  }
}

TEST_CASE("a worker that returns without issuing a collective fails it on the others", "[actors][cluster]") {
  auto rt = troupe::testing::make_runtime({true, 3}, 1);
  SimulatedReplicaGroups cluster(*rt, 2, 1, GroupOptions{});
  auto errors = cluster.run([&](int w, int, ReplicaHandle& h) {
    if (w == 1)
      return;
    (void)h.collective(all_reduce(ReduceOp::SUM, {Tensor(1.0f)}));
  });
  REQUIRE(errors[0][0]);
  CHECK_THAT(what(errors[0][0]), Contains("task worker:1 returned from strategy.run #1 after issuing 0 collectives"));
  CHECK_FALSE(errors[1][0]);
}

TEST_CASE("a lost worker fails the collective on every worker with peer_lost", "[actors][cluster]") {
  for (const auto& mode : {troupe::testing::RuntimeMode{false, 0}, troupe::testing::RuntimeMode{true, 8}}) {
    CAPTURE(mode.name());
    auto rt = troupe::testing::make_runtime(mode, 1);
    SimulatedReplicaGroups cluster(*rt, 3, 1, GroupOptions{});
    cluster.cut(1, "connection closed");
    auto errors = cluster.run([&](int, int, ReplicaHandle& h) {
      (void)h.collective(all_reduce(ReduceOp::SUM, {Tensor(1.0f)}));
    });
    for (int w = 0; w < 3; ++w) {
      REQUIRE(errors[static_cast<size_t>(w)][0]);
      INFO(what(errors[static_cast<size_t>(w)][0]));
      CHECK(troupe::testing::error_code_of([&] { std::rethrow_exception(errors[static_cast<size_t>(w)][0]); }) == Errc::peer_lost);
      CHECK_THAT(what(errors[static_cast<size_t>(w)][0]), Contains("was lost: connection closed"));
    }
  }
}

TEST_CASE("workers issuing different collective kinds under one key fail with a mismatch, not a wait", "[actors][cluster]") {
  auto rt = troupe::testing::make_runtime({true, 4}, 1);
  GroupOptions options;
  options.timeout_seconds = 30; // simulated time
  SimulatedReplicaGroups cluster(*rt, 2, 1, options);
  auto errors = cluster.run([&](int w, int, ReplicaHandle& h) {
    (void)h.collective(all_reduce(ReduceOp::SUM, {Tensor(1.0f)}));
    if (w == 0)
      (void)h.collective(all_reduce(ReduceOp::SUM, {Tensor(2.0f)}));
    else
      (void)h.collective(all_gather(0, {Tensor::zeros({1}, DType::float32)}));
  });
  // Different collectives under one key: a mismatch on both, not a wait (a
  // timeout would be Errc::timeout and name no fingerprints).
  for (int w = 0; w < 2; ++w) {
    REQUIRE(errors[static_cast<size_t>(w)][0]);
    INFO(what(errors[static_cast<size_t>(w)][0]));
    CHECK(troupe::testing::error_code_of([&] { std::rethrow_exception(errors[static_cast<size_t>(w)][0]); })
          == Errc::key_mismatch);
    CHECK_THAT(what(errors[static_cast<size_t>(w)][0]), Contains("task worker:0 sent all_reduce(SUM)")
                                                           && Contains("task worker:1 sent all_gather(axis=0)"));
  }
}

TEST_CASE("the same seed replays the same cross-worker interleaving", "[actors][cluster]") {
  auto trace = [](uint64_t seed) {
    Runtime rt(Simulation{.seed = seed, .logical_cpu_devices = 2});
    {
      SimulatedReplicaGroups cluster(rt, 2, 2, GroupOptions{});
      require_all_ok(cluster.run([&](int w, int r, ReplicaHandle& h) {
        (void)h.collective(all_reduce(ReduceOp::SUM, {values(w * 2 + r, 100)}));
      }));
    }
    return rt.simulation_trace_hash();
  };
  CHECK(trace(17) == trace(17));
  CHECK(trace(17) != trace(18));
}
