// ReplicaContext::all_reduce_in_place: the result lands in the memory the
// caller's tensors had (a framework's gradient buffers), on every replica and
// every worker, at the same address.

#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <support/runtime_modes.hpp>
#include <troupe/troupe.hpp>

using namespace troupe;
using troupe::testing::cpu_devices;

namespace {

// Replica g's element i of tensor k: distinct everywhere, sums exact in float32.
float value_of(int replica, int k, int64_t i) {
  return static_cast<float>((replica + 1) * 1000 + k * 7 + i % 997);
}

std::vector<float> expected(int replicas, int k, int64_t count, ReduceOp op) {
  std::vector<float> out(static_cast<size_t>(count), 0.0f);
  for (int r = 0; r < replicas; ++r)
    for (int64_t i = 0; i < count; ++i)
      out[static_cast<size_t>(i)] += value_of(r, k, i);
  if (op == ReduceOp::MEAN)
    for (auto& x : out)
      x /= static_cast<float>(replicas);
  return out;
}

/// Every replica's memory: [replica][tensor] floats the "framework" owns.
using Memory = std::vector<std::vector<std::vector<float>>>;

/// What one replica saw: whether each returned handle was its memory, and
/// the values its memory held when the call returned.
struct Seen {
  bool same_addresses = true;
  std::vector<std::vector<float>> values;
};

/// The replica function: tensors over this replica's memory, reduced in place,
/// then the memory overwritten at once, as a framework's zero_grad() would.
/// A peer that still read the bytes afterwards would sum garbage.
Seen reduce_in_place(Memory& memory, int replica, ReduceOp op) {
  auto& mine = memory[static_cast<size_t>(replica)];
  std::vector<Tensor> tensors;
  for (auto& m : mine)
    tensors.push_back(Tensor::from_external(m.data(), Shape{static_cast<int64_t>(m.size())}, DType::float32, {}));
  auto out = get_replica_context().all_reduce_in_place(op, std::move(tensors));
  Seen seen;
  for (size_t k = 0; k < mine.size(); ++k) {
    seen.same_addresses = seen.same_addresses && out.at(k).raw_data() == reinterpret_cast<std::byte*>(mine[k].data());
    seen.values.push_back(mine[k]);
    std::fill(mine[k].begin(), mine[k].end(), std::nanf(""));
  }
  return seen;
}

Memory make_memory(int replicas, const std::vector<int64_t>& counts) {
  Memory memory(static_cast<size_t>(replicas));
  for (int r = 0; r < replicas; ++r)
    for (size_t k = 0; k < counts.size(); ++k) {
      auto& m = memory[static_cast<size_t>(r)].emplace_back(static_cast<size_t>(counts[k]));
      for (int64_t i = 0; i < counts[k]; ++i)
        m[static_cast<size_t>(i)] = value_of(r, static_cast<int>(k), i);
    }
  return memory;
}

/// Runs reduce_in_place on every replica of `strategy`; what each saw, by replica.
template <class S>
std::vector<Seen> run_in_place(S& strategy, Memory& memory, ReduceOp op) {
  std::vector<Seen> seen(memory.size());
  auto ids = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return Tensor(static_cast<int32_t>(vc.replica_id_in_sync_group)); });
  strategy.run(
    [&](const Tensor& id) {
      const int replica = id.item<int32_t>();
      seen[static_cast<size_t>(replica)] = reduce_in_place(memory, replica, op);
      return id;
    },
    ids);
  return seen;
}

} // namespace

TEST_CASE("all_reduce_in_place writes the result into every replica's own memory", "[strategies][all_reduce]") {
  const auto op = GENERATE(ReduceOp::SUM, ReduceOp::MEAN);
  const int n = GENERATE(1, 3);
  // 300k floats split the local reduction over the replicas' threads.
  const std::vector<int64_t> counts = GENERATE(std::vector<int64_t>{5}, std::vector<int64_t>{1000, 3, 300'001});
  CAPTURE(n, counts.size());
  Runtime rt({.logical_cpu_devices = n});
  MirroredStrategy strategy(rt, cpu_devices(n));
  auto memory = make_memory(n, counts);
  const auto seen = run_in_place(strategy, memory, op);
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    CHECK(seen[static_cast<size_t>(r)].same_addresses);
    for (size_t k = 0; k < counts.size(); ++k)
      REQUIRE(seen[static_cast<size_t>(r)].values[k] == expected(n, static_cast<int>(k), counts[k], op));
  }
}

TEST_CASE("the handles all_reduce_in_place returns go straight back into it, as the only ones",
          "[strategies][all_reduce]") {
  // The group and the replicas' reduction parts must drop their handles
  // before any replica resumes; one left would make the next call a
  // "shares its bytes" error, in some runs (threads race).
  const auto [n, count, calls] = GENERATE(std::tuple{2, int64_t{4}, 1500}, std::tuple{3, int64_t{4}, 1500},
                                          std::tuple{4, int64_t{300'001}, 200});
  CAPTURE(n, count);
  Runtime rt({.logical_cpu_devices = n});
  MirroredStrategy strategy(rt, cpu_devices(n));
  auto memory = make_memory(n, {count});
  std::vector<std::string> failures(static_cast<size_t>(n));
  auto ids = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return Tensor(static_cast<int32_t>(vc.replica_id_in_sync_group)); });
  strategy.run(
    [&, calls = calls, count = count](const Tensor& id) {
      const auto r = static_cast<size_t>(id.item<int32_t>());
      auto& m = memory[r][0];
      auto t = Tensor::from_external(m.data(), Shape{count}, DType::float32, {});
      try {
        for (int call = 0; call < calls; ++call)
          t = get_replica_context().all_reduce_in_place(ReduceOp::MEAN, std::move(t));
      } catch (const Error& e) {
        failures[r] = e.what();
        throw;
      }
      return id;
    },
    ids);
  for (int r = 0; r < n; ++r) {
    CAPTURE(r, failures[static_cast<size_t>(r)]);
    // The mean of equal values stays where the first call put it: these
    // are integers and halves well inside float32, so n*x and n*x/n are exact.
    REQUIRE(memory[static_cast<size_t>(r)][0] == expected(n, 0, count, ReduceOp::MEAN));
  }
}

TEST_CASE("all_reduce_in_place lands in each worker's memory across a simulated cluster, for every algorithm",
          "[strategies][all_reduce][simulated_cluster]") {
  // (workers, floats): a direct exchange, the ring, and halving-doubling
  // (6 workers: a 60 KB pack is past the direct exchange's 256 KiB in all).
  const auto [workers, count] = GENERATE(std::pair{2, int64_t{3}}, std::pair{3, int64_t{3000}},
                                         std::pair{2, int64_t{90'000}}, std::pair{6, int64_t{15'000}});
  const int devices = GENERATE(1, 2);
  // 0: both tensors in one pack (copied through its buffer); 1: each alone,
  // reduced in its own memory.
  const int64_t bytes_per_pack = GENERATE(int64_t{0}, int64_t{1});
  const auto op = GENERATE(ReduceOp::SUM, ReduceOp::MEAN);
  const uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(workers, count, devices, bytes_per_pack, op == ReduceOp::MEAN, seed);
  const int replicas = workers * devices;
  const std::vector<int64_t> counts{count, 5};
  SimulatedCluster sim({.seed = seed, .workers = workers, .devices_per_worker = devices});
  sim.faults().delay(std::chrono::microseconds(0), std::chrono::microseconds(200));
  auto results = sim.run([&](Runtime& rt) {
    MultiWorkerMirroredStrategy strategy(rt, CommunicationOptions{.bytes_per_pack = bytes_per_pack});
    auto memory = make_memory(replicas, counts); // this worker's replicas' entries are used
    return run_in_place(strategy, memory, op);
  });
  REQUIRE(results.size() == static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    const auto& r = results[static_cast<size_t>(w)];
    INFO(r.task << (r.error ? std::string(": ") + r.error->what() : ""));
    REQUIRE(r.ok());
    for (int local = 0; local < devices; ++local) {
      const int replica = w * devices + local;
      CAPTURE(replica);
      const auto& seen = (*r.value)[static_cast<size_t>(replica)];
      CHECK(seen.same_addresses);
      for (size_t k = 0; k < counts.size(); ++k)
        REQUIRE(seen.values[k] == expected(replicas, static_cast<int>(k), counts[k], op));
    }
  }
}

TEST_CASE("all_reduce_in_place refuses a shared handle, a MEAN of integers, and replicas that mix it with all_reduce",
          "[strategies][all_reduce]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto ids = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return Tensor(static_cast<int32_t>(vc.replica_id_in_sync_group)); });
  auto message_of = [&](auto fn) -> std::string {
    try {
      strategy.run(fn, ids);
    } catch (const Error& e) {
      return std::string(name(e.code())) + ": " + e.what();
    }
    return "no error";
  };
  SECTION("a handle the caller kept") {
    std::atomic<int> kept_values{0};
    const auto what = message_of([&](const Tensor& id) {
      auto kept = Tensor::zeros(Shape{4}, DType::float32);
      std::vector<Tensor> values{kept}; // an initializer list copies: two handles
      try {
        get_replica_context().all_reduce_in_place(ReduceOp::SUM, std::move(values));
      } catch (const Error&) {
        // Refused before it took them: the caller still has its handles.
        if (values.size() == 1 && values[0].shares_buffer_with(kept))
          kept_values.fetch_add(1);
        throw;
      }
      return id;
    });
    CHECK_THAT(what, Catch::Contains("invalid_argument") && Catch::Contains("value 0 shares its bytes with 1 other")
                       && Catch::Contains("push_back(std::move(t))"));
    CHECK(kept_values.load() == 2);
  }
  SECTION("a MEAN of int32 over two replicas") {
    std::atomic<int> kept_value{0};
    const auto what = message_of([&](const Tensor& id) {
      auto t = Tensor::zeros(Shape{4}, DType::int32);
      try {
        get_replica_context().all_reduce_in_place(ReduceOp::MEAN, std::move(t));
      } catch (const Error&) {
        if (t.valid()) // refused: the single tensor comes back too
          kept_value.fetch_add(1);
        throw;
      }
      return id;
    });
    CHECK_THAT(what, Catch::Contains("invalid_argument") && Catch::Contains("int32")
                       && Catch::Contains("float64") && Catch::Contains("use SUM"));
    CHECK(kept_value.load() == 2);
  }
  SECTION("one replica in place, the other not") {
    const auto what = message_of([](const Tensor& id) {
      auto& ctx = get_replica_context();
      if (id.item<int32_t>() == 0)
        ctx.all_reduce_in_place(ReduceOp::SUM, Tensor::zeros(Shape{4}, DType::float32));
      else
        (void)ctx.all_reduce(ReduceOp::SUM, Tensor::zeros(Shape{4}, DType::float32));
      return id;
    });
    CHECK_THAT(what, Catch::Contains("key_mismatch") && Catch::Contains("replica 0 called all_reduce_in_place")
                       && Catch::Contains("replica 1 called all_reduce"));
  }
}

TEST_CASE("all_reduce_in_place of integers in a cluster of one worker leaves them as they are",
          "[strategies][all_reduce][simulated_cluster]") {
  // One replica in all: the MEAN is the value, in its dtype, as all_reduce's.
  const auto op = GENERATE(ReduceOp::SUM, ReduceOp::MEAN);
  SimulatedCluster sim({.seed = 1, .workers = 1});
  auto results = sim.run([&](Runtime& rt) {
    MultiWorkerMirroredStrategy strategy(rt);
    std::vector<int32_t> memory{3, -7, 11};
    auto out = strategy.run([&] {
      auto t = Tensor::from_external(memory.data(), Shape{3}, DType::int32, {});
      return get_replica_context().all_reduce_in_place(op, std::move(t));
    });
    return std::pair{strategy.experimental_local_results(out).front().raw_data()
                       == reinterpret_cast<const std::byte*>(memory.data()),
                     memory};
  });
  REQUIRE(results.size() == 1);
  INFO(results[0].task << (results[0].error ? std::string(": ") + results[0].error->what() : ""));
  REQUIRE(results[0].ok());
  CHECK(results[0].value->first);
  CHECK(results[0].value->second == std::vector<int32_t>{3, -7, 11});
}
