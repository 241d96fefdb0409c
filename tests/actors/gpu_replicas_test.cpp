// MirroredStrategy's replicas on GPUs emulated in host memory: the default
// device list, variables in GPU memory, and the all-reduce between GPU
// replicas (GpuAllReduce), which tests/gpu runs on a real card.

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include "support/error_code_of.hpp"
#include "support/temp_files.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using testing::EmulatedGpus;
using testing::error_message_of;

namespace {

/// Checks inside replica functions (Catch's assertions are not thread-safe):
/// a failure makes strategy.run throw.
void require(bool condition, const std::string& what) {
  if (!condition)
    throw std::runtime_error("replica check failed: " + what);
}

} // namespace

TEST_CASE("MirroredStrategy takes every GPU by default, as TensorFlow does",
          "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 2, .logical_gpu_devices_per_gpu = 3});
  MirroredStrategy strategy(rt);
  CHECK(strategy.num_replicas_in_sync() == 3);
  auto devices = strategy.run(
    [] { return Tensor(static_cast<int32_t>(get_replica_context().replica_id_in_sync_group())); });
  CHECK(devices.values().size() == 3);
}

TEST_CASE("GPU replicas all-reduce their GPU tensors into each replica's own GPU",
          "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  {
    Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 4});
    MirroredStrategy strategy(rt, {"GPU:0", "GPU:1", "GPU:2", "GPU:3"});
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1001}}) {
      auto results = strategy.run([&] {
        auto& ctx = get_replica_context();
        const int r = ctx.replica_id_in_sync_group();
        const std::string device = "GPU:" + std::to_string(r);
        // Replica r holds r + 1 everywhere, and (r + 1) * 10 in a second tensor.
        const Tensor a = Tensor::full({n}, r + 1.0, DType::float32).to(device);
        const Tensor b = Tensor::full({2, 3}, (r + 1.0) * 10, DType::float32).to(device);
        auto sums = ctx.all_reduce(ReduceOp::SUM, std::vector<Tensor>{a, b});
        const Tensor mean = ctx.all_reduce(ReduceOp::MEAN, a);
        require(sums[0].device().short_name() == device, "the sum is on the replica's GPU");
        require(mean.device().short_name() == device, "the mean is on the replica's GPU");
        return std::vector<Tensor>{sums[0].to("CPU:0"), sums[1].to("CPU:0"), mean.to("CPU:0")};
      });
      // One PerReplica per returned tensor.
      REQUIRE(results.size() == 3);
      for (std::size_t r = 0; r < 4; ++r) {
        CHECK(array_equal(results[0].values()[r], Tensor::full({n}, 10.0, DType::float32)));
        CHECK(array_equal(results[1].values()[r], Tensor::full({2, 3}, 100.0, DType::float32)));
        CHECK(array_equal(results[2].values()[r], Tensor::full({n}, 2.5, DType::float32)));
      }
    }
  }
  // Every stream waited only on events already recorded (CUDA would not
  // wait on one recorded later), and every event was destroyed.
  CHECK(gpus.backend->misuse().empty());
  CHECK(gpus.backend->events_alive() == 0);
}

TEST_CASE("variables of GPU replicas live in each GPU's memory", "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, {"GPU:0", "GPU:1"});
  Variable w = [&] {
    auto scope = strategy.scope();
    return strategy.create_variable(Tensor::from_vector(std::vector<float>{1, 2, 3}));
  }();
  auto updated = strategy.run([&] {
    auto& ctx = get_replica_context();
    const Tensor value = w.read_value();
    require(value.device().short_name() == "GPU:" + std::to_string(ctx.replica_id_in_sync_group()),
            "the variable's copy is on the replica's GPU");
    const Tensor grad = ctx.all_reduce(ReduceOp::MEAN, value * 2.0f);
    Tensor next = value;
    axpy_inplace(next, -0.5, grad); // the update runs on the replica's GPU
    strategy.extended().update(w, [&](const Tensor&) { return next; });
    return w.read_value().to("CPU:0");
  });
  for (const auto& value : updated.values())
    CHECK(array_equal(value, Tensor::from_vector(std::vector<float>{0, 0, 0})));
}

TEST_CASE("an all-reduce mixing GPU and host values fails on every replica, naming the fix",
          "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, {"GPU:0", "GPU:1"});
  const auto message = error_message_of([&] {
    strategy.run([] {
      auto& ctx = get_replica_context();
      const int r = ctx.replica_id_in_sync_group();
      const Tensor value = r == 0 ? Tensor(1.0f).to("GPU:0") : Tensor(1.0f);
      return ctx.all_reduce(ReduceOp::SUM, value);
    });
  });
  CHECK_THAT(message, Contains("replica 1 runs on GPU:1 but its value 0 is in CPU:0 memory"));
  // The strategy stays usable.
  auto ok = strategy.run([] {
    auto& ctx = get_replica_context();
    return ctx
      .all_reduce(ReduceOp::SUM,
                  Tensor(1.0f).to("GPU:" + std::to_string(ctx.replica_id_in_sync_group())))
      .to("CPU:0");
  });
  CHECK(ok.values()[1].item<float>() == 2.0f);
}

TEST_CASE("a checkpoint saves GPU replicas' variables and restores them into GPU memory",
          "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, {"GPU:0", "GPU:1"});
  Variable w = [&] {
    auto scope = strategy.scope();
    return strategy.create_variable(Tensor::from_vector(std::vector<float>{1, 2, 3}));
  }();
  testing::TempDir dir;
  const std::string path = dir.file("ckpt");
  Checkpoint({w}).save(path);
  w.assign(Tensor::from_vector(std::vector<float>{7, 8, 9}));
  Checkpoint({w}).restore(path);
  const Tensor restored = w.read_value();
  CHECK(restored.device().short_name() == "GPU:0");
  CHECK(array_equal(restored.to("CPU:0"), Tensor::from_vector(std::vector<float>{1, 2, 3})));
}

TEST_CASE("a distributed dataset hands GPU replicas their batches in GPU memory", "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, {"GPU:0", "GPU:1"});
  const auto dataset = Dataset::from_tensor_slices(Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}))
                         .batch(4);
  std::vector<float> seen;
  for (const auto& step : strategy.experimental_distribute_dataset(dataset)) {
    for (std::size_t r = 0; r < 2; ++r) {
      const Tensor& batch = step.values()[r];
      CHECK(batch.device().short_name() == "GPU:" + std::to_string(r));
      for (float v : batch.to("CPU:0").to_vector<float>())
        seen.push_back(v);
    }
  }
  CHECK(seen == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  // experimental_fetch_to_device = false leaves the batches on the host.
  InputOptions host_only;
  host_only.experimental_fetch_to_device = false;
  for (const auto& step : strategy.experimental_distribute_dataset(dataset, host_only))
    CHECK(step.values()[1].tensor().on_host());
}

TEST_CASE("collectives of host values on GPU replicas give host results", "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, {"GPU:0", "GPU:1"});
  auto results = strategy.run([] {
    auto& ctx = get_replica_context();
    const Tensor mine = Tensor(static_cast<float>(ctx.replica_id_in_sync_group() + 1));
    return std::vector<Tensor>{ctx.all_reduce(ReduceOp::SUM, mine), ctx.all_gather(mine.reshape({1}), 0)};
  });
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(results[0].values()[r].item<float>() == 3.0f);
    CHECK(results[1].values()[r].to_vector<float>() == std::vector<float>{1, 2});
  }
  MirroredStrategy one(rt, {"GPU:1"});
  auto single = one.run([] { return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(2.0f)); });
  CHECK(single.values()[0].item<float>() == 2.0f);
}

TEST_CASE("an all-reduce on one GPU replica gives back its own value without a copy", "[actors][gpu][replicas]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt, {"GPU:0"});
  const Tensor value = Tensor::full({3}, 2.0, DType::float32).to("GPU:0");
  auto same = strategy.run([&] {
    auto& ctx = get_replica_context();
    const Tensor sum = ctx.all_reduce(ReduceOp::SUM, value);
    const Tensor mean = ctx.all_reduce(ReduceOp::MEAN, value);
    return Tensor(sum.shares_buffer_with(value) && mean.shares_buffer_with(value));
  });
  CHECK(same.values()[0].item<bool>());
}
