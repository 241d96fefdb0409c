// Collectives of GPU tensors through NCCL, on GPUs and an NCCL emulated in
// host memory (tests/gpu runs them on a real card): which path a strategy
// takes, the values, one communicator reused across runs, and failures that
// never reach NCCL or never hang in it.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include <troupe/actors/fibers/fiber_waiter.hpp>
#include <troupe/troupe.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include "support/error_code_of.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using internal::NcclCall;
using testing::EmulatedGpus;
using testing::EmulatedNccl;
using testing::error_message_of;

namespace {

void require(bool condition, const std::string& what) {
  if (!condition)
    throw std::runtime_error("replica check failed: " + what);
}

CommunicationOptions nccl_options(double timeout_seconds = 0) {
  CommunicationOptions options;
  options.implementation = CommunicationImplementation::NCCL;
  options.timeout_seconds = timeout_seconds;
  return options;
}

std::string gpu_of_replica() {
  return "GPU:" + std::to_string(get_replica_context().replica_id_in_sync_group());
}

/// Replica r's (2, 4) host values: element i is 10 r + i.
Tensor ramp(int r) {
  std::vector<float> v;
  for (int i = 0; i < 8; ++i)
    v.push_back(static_cast<float>(10 * r + i));
  return Tensor::from_vector(v).reshape({2, 4});
}

/// A replica function: the sum of every replica's four ones, read back.
Tensor sum_of_ones() {
  return get_replica_context().all_reduce(ReduceOp::SUM, Tensor::full({4}, 1.0, DType::float32).to(gpu_of_replica()))
    .to("CPU:0");
}

/// What strategy.run(sum_of_ones) threw (to run on another thread).
std::string error_of_run(MirroredStrategy& strategy) {
  try {
    (void) strategy.run(sum_of_ones);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "the copies back returned";
}

/// Two replicas on emulated cards of their own, all-reducing through the
/// emulated NCCL with a collective timeout of `timeout_seconds`, after one
/// run of sum_of_ones that made their communicator.
struct TwoNcclReplicas {
  explicit TwoNcclReplicas(double timeout_seconds) : strategy(rt, {}, nccl_options(timeout_seconds)) {
    CHECK(array_equal(strategy.run(sum_of_ones).values()[0], Tensor::full({4}, 2.0, DType::float32)));
  }
  EmulatedGpus gpus{2};
  EmulatedNccl nccl;
  Runtime rt{{.logical_cpu_devices = 1}};
  MirroredStrategy strategy;  // last: made after the Runtime, destroyed before it
};

} // namespace

TEST_CASE("replicas on GPUs of separate cards all-reduce through NCCL, every tensor in one group",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(3);
  EmulatedNccl nccl;
  {
    Runtime rt({.logical_cpu_devices = 1});
    MirroredStrategy strategy(rt);  // AUTO: every replica has its own card
    REQUIRE(strategy.num_replicas_in_sync() == 3);
    for (int step = 0; step < 2; ++step) {
      auto results = strategy.run([&] {
        auto& ctx = get_replica_context();
        const int r = ctx.replica_id_in_sync_group();
        const std::string device = gpu_of_replica();
        const Tensor a = Tensor::full({1001}, r + 1.0, DType::float32).to(device);
        const Tensor b = Tensor::full({2, 3}, (r + 1.0) * 10, DType::float32).to(device);
        const Tensor c = Tensor::full({4}, r + step, DType::int32).to(device);
        auto sums = ctx.all_reduce(ReduceOp::SUM, std::vector<Tensor>{a, b, c});
        const Tensor mean = ctx.all_reduce(ReduceOp::MEAN, a);
        require(sums[0].device().short_name() == device && mean.device().short_name() == device,
                "the results are on the replica's GPU");
        return std::vector<Tensor>{sums[0].to("CPU:0"), sums[1].to("CPU:0"), sums[2].to("CPU:0"),
                                   mean.to("CPU:0")};
      });
      REQUIRE(results.size() == 4);
      for (std::size_t r = 0; r < 3; ++r) {
        CHECK(array_equal(results[0].values()[r], Tensor::full({1001}, 6.0, DType::float32)));
        CHECK(array_equal(results[1].values()[r], Tensor::full({2, 3}, 60.0, DType::float32)));
        CHECK(array_equal(results[2].values()[r], Tensor::full({4}, 3 + 3 * step, DType::int32)));
        CHECK(array_equal(results[3].values()[r], Tensor::full({1001}, 2.0, DType::float32)));
      }
    }
    // Two collectives per step, each one group: the three tensors went together.
    CHECK(nccl.backend->groups_run() == 4);
    CHECK(nccl.backend->calls_run(NcclCall::Kind::all_reduce) == 8);
    // One communicator, made at the first collective, one rank per GPU.
    CHECK(nccl.backend->ranks_created() == 3);
    CHECK(nccl.backend->ranks_alive() == 3);
  }
  CHECK(nccl.backend->ranks_alive() == 0);  // the device actors ended their ranks
  CHECK(nccl.backend->misuse().empty());
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("logical GPUs of one card all-reduce without NCCL, and asking for NCCL there names the shared card",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(1);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  {
    MirroredStrategy automatic(rt);
    auto results = automatic.run(sum_of_ones);
    CHECK(array_equal(results.values()[1], Tensor::full({4}, 2.0, DType::float32)));
    CHECK(nccl.backend->ranks_created() == 0);
  }
  MirroredStrategy asked(rt, {}, nccl_options());
  const auto message = error_message_of([&] { asked.run(sum_of_ones); });
  CHECK_THAT(message, Contains("GPU:1 shares physical GPU 0 with another replica, and NCCL takes one rank per GPU"));
  CHECK_THAT(message, Contains("CommunicationImplementation::AUTO"));
  CHECK(nccl.backend->ranks_created() == 0);
}

TEST_CASE("one replica asked to use NCCL runs a communicator of one rank", "[actors][gpu][nccl]") {
  EmulatedGpus gpus(1);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt, {"GPU:0"}, nccl_options());
  auto result = strategy.run([] {
    return get_replica_context().all_reduce(ReduceOp::MEAN, Tensor::full({5}, 3.0, DType::float32).to("GPU:0"))
      .to("CPU:0");
  });
  CHECK(array_equal(result.values()[0], Tensor::full({5}, 3.0, DType::float32)));
  CHECK(nccl.backend->ranks_created() == 1);
  CHECK(nccl.backend->calls_run(NcclCall::Kind::all_reduce) == 1);
}

TEST_CASE("with bytes_per_pack, small GPU tensors are packed: one NCCL all-reduce per pack, outputs shaped as "
          "the inputs",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  CommunicationOptions options;
  options.bytes_per_pack = 32;  // two float32 tensors of 4 elements per pack
  MirroredStrategy strategy(rt, {}, options);
  auto results = strategy.run([] {
    auto& ctx = get_replica_context();
    const double r = ctx.replica_id_in_sync_group();
    const std::string device = gpu_of_replica();
    std::vector<Tensor> values;
    for (int t = 0; t < 4; ++t)
      values.push_back(Tensor::full({2, 2}, (r + 1) * (t + 1), DType::float32).to(device));
    values.push_back(Tensor::full({3}, 5 + r, DType::int32).to(device));  // another dtype: its own pack
    std::vector<Tensor> host;
    for (const auto& sum : ctx.all_reduce(ReduceOp::SUM, values)) {
      require(sum.device().short_name() == device, "the packed results are on the replica's GPU");
      host.push_back(sum.to("CPU:0"));
    }
    return host;
  });
  REQUIRE(results.size() == 5);
  for (std::size_t r = 0; r < 2; ++r) {
    for (int t = 0; t < 4; ++t)
      CHECK(array_equal(results[static_cast<std::size_t>(t)].values()[r], Tensor::full({2, 2}, 3.0 * (t + 1), DType::float32)));
    CHECK(array_equal(results[4].values()[r], Tensor::full({3}, 11, DType::int32)));
  }
  CHECK(nccl.backend->calls_run(NcclCall::Kind::all_reduce) == 3);  // 2 packs of 2, and the int32 one
  CHECK(nccl.backend->groups_run() == 1);
  CHECK(gpus.backend->misuse().empty());
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("all_gather of GPU tensors: equal shapes through ncclAllGather, uneven rows through grouped broadcasts",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt);
  auto results = strategy.run([] {
    auto& ctx = get_replica_context();
    const int r = ctx.replica_id_in_sync_group();
    // Equal: 2 x 2 each. Uneven: replica 0 sends 1 row, replica 1 sends 3.
    const Tensor equal = Tensor::full({2, 2}, r + 1.0, DType::float32).to(gpu_of_replica());
    const Tensor uneven = Tensor::full({r == 0 ? 1 : 3, 2}, (r + 1.0) * 10, DType::float32).to(gpu_of_replica());
    auto gathered = ctx.all_gather(std::vector<Tensor>{equal, uneven}, 0);
    return std::vector<Tensor>{gathered[0].to("CPU:0"), gathered[1].to("CPU:0")};
  });
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(array_equal(results[0].values()[r],
                      Tensor::from_vector(std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2}).reshape({4, 2})));
    CHECK(array_equal(results[1].values()[r],
                      Tensor::from_vector(std::vector<float>{10, 10, 20, 20, 20, 20, 20, 20}).reshape({4, 2})));
  }
  CHECK(nccl.backend->calls_run(NcclCall::Kind::all_gather) == 1);
  CHECK(nccl.backend->calls_run(NcclCall::Kind::broadcast) == 2);
  CHECK(nccl.backend->groups_run() == 1);
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("all_gather of GPU tensors along an inner axis places every rank's block, even and uneven",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt);
  auto values = [](int r, int64_t columns) {
    std::vector<float> v;
    for (int64_t i = 0; i < 2 * columns; ++i)
      v.push_back(static_cast<float>(r * 10 + i));
    return Tensor::from_vector(v).reshape({2, columns});
  };
  auto results = strategy.run([&] {
    auto& ctx = get_replica_context();
    const int r = ctx.replica_id_in_sync_group();
    const Tensor even = values(r, 2).to(gpu_of_replica());
    const Tensor uneven = values(r, r == 0 ? 1 : 3).to(gpu_of_replica());
    return std::vector<Tensor>{ctx.all_gather(even, 1).to("CPU:0"), ctx.all_gather(uneven, -1).to("CPU:0")};
  });
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(array_equal(results[0].values()[r],
                      Tensor::from_vector(std::vector<float>{0, 1, 10, 11, 2, 3, 12, 13}).reshape({2, 4})));
    CHECK(array_equal(results[1].values()[r],
                      Tensor::from_vector(std::vector<float>{0, 10, 11, 12, 1, 13, 14, 15}).reshape({2, 4})));
  }
  CHECK(nccl.backend->calls_run(NcclCall::Kind::all_gather) == 1);
  CHECK(nccl.backend->calls_run(NcclCall::Kind::broadcast) == 2);
  CHECK(gpus.backend->misuse().empty());
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("reduce_scatter of GPU tensors is one ncclReduceScatter per tensor, along the outer and an inner axis",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(3);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt);
  auto results = strategy.run([&] {
    auto& ctx = get_replica_context();
    const int r = ctx.replica_id_in_sync_group();
    // Replica r's (2, 6, 2): element i is 100 r + i.
    std::vector<float> v;
    for (int i = 0; i < 24; ++i)
      v.push_back(static_cast<float>(100 * r + i));
    const Tensor x = Tensor::from_vector(v).reshape({2, 6, 2}).to(gpu_of_replica());
    const auto rows = ctx.reduce_scatter(ReduceOp::SUM, std::vector<Tensor>{x.reshape({6, 4}), x.reshape({12, 2})});
    const Tensor middle = ctx.reduce_scatter(ReduceOp::MEAN, x, 1);
    require(middle.device().short_name() == gpu_of_replica(), "the blocks stay on the replica's GPU");
    return std::vector<Tensor>{rows[0].to("CPU:0"), rows[1].to("CPU:0"), middle.to("CPU:0")};
  });
  // The sum of element i is 300 + 3 i, the mean 100 + i.
  for (int r = 0; r < 3; ++r) {
    INFO("replica " << r);
    std::vector<float> outer_block;  // flat elements 8 r .. 8 r + 7
    for (int i = 8 * r; i < 8 * r + 8; ++i)
      outer_block.push_back(static_cast<float>(300 + 3 * i));
    std::vector<float> middle_block;  // (o, j, t) with j in 2 r, 2 r + 1
    for (int o = 0; o < 2; ++o)
      for (int j = 2 * r; j < 2 * r + 2; ++j)
        for (int t = 0; t < 2; ++t)
          middle_block.push_back(static_cast<float>(100 + o * 12 + j * 2 + t));
    const auto i = static_cast<std::size_t>(r);
    CHECK(results[0].values()[i].shape() == Shape{2, 4});
    CHECK(results[0].values()[i].to_vector<float>() == outer_block);
    CHECK(results[1].values()[i].shape() == Shape{4, 2});
    CHECK(results[1].values()[i].to_vector<float>() == outer_block);
    CHECK(results[2].values()[i].shape() == Shape{2, 2, 2});
    CHECK(results[2].values()[i].to_vector<float>() == middle_block);
  }
  CHECK(nccl.backend->calls_run(NcclCall::Kind::reduce_scatter) == 3);
  CHECK(nccl.backend->calls_run(NcclCall::Kind::all_reduce) == 0);
  CHECK(gpus.backend->misuse().empty());
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("reduce_scatter of GPU tensors without NCCL (logical GPUs of one card) keeps each replica's block",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt);  // AUTO: the GPU all-reduce on the card
  auto results = strategy.run([&] {
    auto& ctx = get_replica_context();
    const int r = ctx.replica_id_in_sync_group();
    const Tensor x = ramp(r).to(gpu_of_replica());
    const Tensor rows = ctx.reduce_scatter(ReduceOp::SUM, x);
    const Tensor columns = ctx.reduce_scatter(ReduceOp::SUM, x, 1);
    require(rows.device().short_name() == gpu_of_replica() && columns.device().short_name() == gpu_of_replica(),
            "the blocks stay on the replica's GPU");
    return std::vector<Tensor>{rows.to("CPU:0"), columns.to("CPU:0")};
  });
  const std::vector<std::vector<float>> row_blocks{{10, 12, 14, 16}, {18, 20, 22, 24}};
  const std::vector<std::vector<float>> column_blocks{{10, 12, 18, 20}, {14, 16, 22, 24}};
  for (std::size_t r = 0; r < 2; ++r) {
    INFO("replica " << r);
    CHECK(results[0].values()[r].to_vector<float>() == row_blocks[r]);
    CHECK(results[1].values()[r].shape() == Shape{2, 2});
    CHECK(results[1].values()[r].to_vector<float>() == column_blocks[r]);
  }
}

TEST_CASE("mismatched collectives of GPU tensors fail on every replica before NCCL sees them",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt);
  const auto message = error_message_of([&] {
    strategy.run([] {
      const int n = get_replica_context().replica_id_in_sync_group() == 0 ? 4 : 5;
      return get_replica_context().all_reduce(ReduceOp::SUM, Tensor::full({n}, 1.0, DType::float32).to(gpu_of_replica()));
    });
  });
  CHECK_THAT(message, Contains("mismatched collectives"));
  CHECK(nccl.backend->groups_run() == 0);
  CHECK(nccl.backend->ranks_created() == 0);
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("an NCCL collective whose peers never arrive fails on every replica within its timeout, and the next "
          "one runs on a new communicator",
          "[actors][gpu][nccl]") {
  TwoNcclReplicas two(0.3);
  auto& nccl = two.nccl;
  auto& strategy = two.strategy;
  nccl.backend->stall_gpu(1);
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    strategy.run(sum_of_ones);
  } catch (const std::exception& e) {
    message = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK_THAT(message, Contains("did not get the collective going within 0.3s"));
  CHECK_THAT(message, Contains("the communicator was aborted"));
  CHECK(took < std::chrono::seconds{10});  // the timeout, not a hang
  CHECK(nccl.backend->ranks_aborted() == 2);
  nccl.backend->stall_gpu(1, false);
  // The devices stay usable, and the next collective makes a new communicator.
  CHECK(array_equal(strategy.run(sum_of_ones).values()[1], Tensor::full({4}, 2.0, DType::float32)));
  CHECK(nccl.backend->ranks_created() == 4);
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("an NCCL failure on one GPU aborts the other replicas' groups at once, long before their timeout",
          "[actors][gpu][nccl]") {
  TwoNcclReplicas two(60);
  auto& nccl = two.nccl;
  auto& strategy = two.strategy;
  nccl.backend->fail_gpu(1, "emulated network failure");
  const auto start = std::chrono::steady_clock::now();
  const auto message = error_message_of([&] { (void) strategy.run(sum_of_ones); });
  // GPU:1's rank fails; GPU:0's, which waits for it, is aborted through the group.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{20});
  CHECK_THAT(message, Contains("emulated network failure"));
  CHECK(nccl.backend->ranks_aborted() == 2);
}

TEST_CASE("a replica goes on while its NCCL group gets onto the stream, a failed group fails the read of its "
          "output, or else the run, and nothing of it is left for the next run",
          "[actors][gpu][nccl]") {
  TwoNcclReplicas two(0.3);
  auto& nccl = two.nccl;
  auto& strategy = two.strategy;
  auto ones = [] { return Tensor::full({4}, 1.0, DType::float32).to(gpu_of_replica()); };
  nccl.backend->stall_gpu(1);
  // The all_reduce returns before its group is on the stream (GPU:1 never
  // gets going), and nobody reads its result: the run still fails, when the
  // replica function returns.
  std::vector<int> returned(2, 0);
  const auto unread = error_message_of([&] {
    (void) strategy.run([&] {
      (void) get_replica_context().all_reduce(ReduceOp::SUM, ones());
      returned[static_cast<std::size_t>(get_replica_context().replica_id_in_sync_group())] = 1;
    });
  });
  CHECK(returned == std::vector<int>{1, 1});
  CHECK_THAT(unread, Contains("did not get the collective going within 0.3s"));
  nccl.backend->stall_gpu(1, false);
  CHECK(array_equal(strategy.run(sum_of_ones).values()[1], Tensor::full({4}, 2.0, DType::float32)));
  // A read of a failed output throws the failure instead of returning what
  // the memory held.
  nccl.backend->stall_gpu(1);
  std::vector<int> read(2, 0);
  const auto message = error_message_of([&] {
    (void) strategy.run([&] {
      const Tensor sum = get_replica_context().all_reduce(ReduceOp::SUM, ones());
      (void) sum.to("CPU:0");
      read[static_cast<std::size_t>(get_replica_context().replica_id_in_sync_group())] = 1;
    });
  });
  CHECK(read == std::vector<int>{0, 0});
  CHECK_THAT(message, Contains("did not get the collective going within 0.3s"));
  nccl.backend->stall_gpu(1, false);
  CHECK(array_equal(strategy.run(sum_of_ones).values()[0], Tensor::full({4}, 2.0, DType::float32)));
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("merge_call's function never reads the output of an NCCL collective that failed before the stream",
          "[actors][gpu][nccl]") {
  TwoNcclReplicas two(0.3);
  two.nccl.backend->stall_gpu(1);
  std::atomic<int> merges{0};
  const auto message = error_message_of([&] {
    (void) two.strategy.run([&] {
      auto& ctx = get_replica_context();
      const Tensor sum = ctx.all_reduce(ReduceOp::SUM, Tensor::full({4}, 1.0, DType::float32).to(gpu_of_replica()));
      // The function runs in the group actor, off the replicas' fibers: it
      // would read whatever the never-written outputs held.
      return ctx.merge_call(
        [&](Strategy&, const PerReplica<Tensor>& sums) {
          ++merges;
          return sums[0].to("CPU:0");
        },
        sum);
    });
  });
  CHECK(merges == 0);
  CHECK_THAT(message, Contains("did not get the collective going within 0.3s"));
}

TEST_CASE("a failed NCCL group surfaces at the replica's next collective when its output is never read",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt, {}, nccl_options(0.3));
  nccl.backend->stall_gpu(1);
  std::vector<int> collectives(2, 0);
  const auto message = error_message_of([&] {
    (void) strategy.run([&] {
      const int r = get_replica_context().replica_id_in_sync_group();
      const Tensor x = Tensor::full({4}, 1.0, DType::float32).to(gpu_of_replica());
      // The first group waits out its timeout, and every later one waits
      // behind it: once FiberWaiter::max_handoffs are outstanding, the next
      // collective waits for the first, and throws its failure.
      for (int i = 0; i < 1000; ++i) {
        (void) get_replica_context().all_reduce(ReduceOp::SUM, x);
        ++collectives[static_cast<std::size_t>(r)];
      }
    });
  });
  CHECK_THAT(message, Contains("did not get the collective going within 0.3s"));
  for (int done : collectives) {
    CHECK(done >= 1);
    CHECK(done <= static_cast<int>(internal::FiberWaiter::max_handoffs));
  }
}

TEST_CASE("one replica on a GPU gathers and broadcasts its own GPU values without NCCL", "[actors][gpu][nccl]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt);  // AUTO, one GPU: no NCCL
  auto result = strategy.run([] {
    const Tensor mine = Tensor::full({2, 3}, 4.0, DType::float32).to("GPU:0");
    const Tensor gathered = get_replica_context().all_gather(mine, 1);
    require(gathered.device().short_name() == "GPU:0", "the gathered value stays on the GPU");
    return gathered.to("CPU:0");
  });
  CHECK(array_equal(result.values()[0], Tensor::full({2, 3}, 4.0, DType::float32)));
}

TEST_CASE("a strategy destroyed while its collective still runs frees its NCCL ranks after it, without cutting it "
          "short",
          "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  Tensor kept;
  {
    MirroredStrategy strategy(rt, {}, nccl_options());
    gpus.backend->hold_completions(true);  // the collective is still on the GPU when the strategy goes
    kept = strategy.run([] {
      return get_replica_context().all_reduce(ReduceOp::SUM, Tensor::full({4}, 1.0, DType::float32).to(gpu_of_replica()));
    }).values()[0];
    CHECK(nccl.backend->ranks_alive() == 2);
  }
  CHECK(nccl.backend->ranks_aborted() == 0);  // not while the collective runs
  gpus.backend->hold_completions(false);
  // Its result is whole, and the ranks go once it finished (wait with a deadline).
  CHECK(array_equal(kept.to("CPU:0"), Tensor::full({4}, 2.0, DType::float32)));
  CHECK(nccl.backend->wait_for_aborted(2, std::chrono::seconds{20}));
  CHECK(nccl.backend->ranks_alive() == 0);
}

TEST_CASE("an NCCL failure reported while a collective runs on the GPU fails the copies back behind it, long before "
          "the timeout",
          "[actors][gpu][nccl]") {
  TwoNcclReplicas two(60);
  auto& nccl = two.nccl;
  auto& strategy = two.strategy;
  two.gpus.backend->hold_completions(true);  // on the stream, not finished
  const int copies_back = two.gpus.backend->copies(internal::GpuCopyKind::device_to_host);
  const auto start = std::chrono::steady_clock::now();
  auto running = std::async(std::launch::async, [&] { return error_of_run(strategy); });
  // Both groups are on the stream once both copies back were sent behind them.
  REQUIRE(two.gpus.backend->wait_for_copies(internal::GpuCopyKind::device_to_host, copies_back + 2,
                                        std::chrono::seconds{20}));
  nccl.backend->fail_gpu(0, "emulated network failure");  // what ncclCommGetAsyncError reports
  const bool aborted = nccl.backend->wait_for_aborted(2, std::chrono::seconds{20});
  two.gpus.backend->hold_completions(false);
  REQUIRE(aborted);
  REQUIRE(running.wait_for(std::chrono::seconds{20}) == std::future_status::ready);
  CHECK_THAT(running.get(), Contains("NCCL reported a failure of communicator"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{30});  // the timeout is 60 s
}

TEST_CASE("an NCCL mean of integer GPU tensors is a sum through NCCL divided truly, as TensorFlow's", "[actors][gpu][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt);
  // Replica r passes r + 1: the mean is 1.5, in float64, on each replica's GPU.
  const auto means = strategy.run([] {
    auto& context = get_replica_context();
    const double mine = context.replica_id_in_sync_group() + 1.0;
    return context.all_reduce(ReduceOp::MEAN, Tensor::full({2}, mine, DType::int32).to(gpu_of_replica()));
  });
  for (const auto& mean : means.values()) {
    CHECK(mean.device().is_gpu());
    CHECK(mean.dtype() == DType::float64);
    CHECK(mean.to("CPU:0").to_vector<double>() == std::vector<double>{1.5, 1.5});
  }
}

TEST_CASE("an NCCL collective that hangs on the GPU is aborted at its timeout, and a copy back queued behind it "
          "fails instead of returning what the aborted collective left",
          "[actors][gpu][nccl]") {
  TwoNcclReplicas two(0.3);
  auto& nccl = two.nccl;
  auto& strategy = two.strategy;
  // The streams never report the next collective done: it hangs on the GPU,
  // with each replica's copy back queued behind it.
  two.gpus.backend->hold_completions(true);
  auto running = std::async(std::launch::async, [&] { return error_of_run(strategy); });
  const bool aborted = nccl.backend->wait_for_aborted(2, std::chrono::seconds{20});
  two.gpus.backend->hold_completions(false);  // the aborted kernels return
  REQUIRE(aborted);
  REQUIRE(running.wait_for(std::chrono::seconds{20}) == std::future_status::ready);
  CHECK_THAT(running.get(), Contains("did not finish on the GPU within its timeout"));
  // Reported once: the devices stay usable, on a new communicator.
  CHECK(array_equal(strategy.run(sum_of_ones).values()[1], Tensor::full({4}, 2.0, DType::float32)));
  CHECK(nccl.backend->ranks_created() == 4);
  CHECK(nccl.backend->misuse().empty());
}
