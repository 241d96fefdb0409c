// MirroredStrategy's replicas on logical GPUs of a real card: the all-reduce
// between them (GpuAllReduce's CUDA kernels reading the other replicas'
// memory) and a training step's variables. Skips, naming why, without a GPU;
// tests/actors/gpu_replicas_test.cpp covers the same paths on emulated GPUs.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/troupe.hpp>

#include "gpu/no_gpu_reason.hpp"
#include "support/skip.hpp"
#include "support/test_values.hpp"

using namespace troupe;
using testing::no_gpu_reason;
using testing::test_values;

namespace {

std::vector<std::string> logical_gpus(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i)
    names.push_back("GPU:" + std::to_string(i));
  return names;
}

} // namespace

TEST_CASE("GPU replicas all-reduce 3 million floats into each replica's GPU", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  for (int replicas : {2, 3, 4}) {
    Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = replicas});
    MirroredStrategy strategy(rt, logical_gpus(replicas));
    const int64_t n = 3'000'017;
    std::vector<Tensor> inputs;
    Tensor expected_sum = Tensor::zeros({n}, DType::float32);
    for (int r = 0; r < replicas; ++r) {
      inputs.push_back(test_values({n}, 40 + static_cast<uint64_t>(r)));
      expected_sum = expected_sum + inputs.back();
    }
    auto results = strategy.run([&] {
      auto& ctx = get_replica_context();
      const int r = ctx.replica_id_in_sync_group();
      const Tensor mine = inputs[static_cast<std::size_t>(r)].to("GPU:" + std::to_string(r));
      auto sums = ctx.all_reduce(ReduceOp::SUM, std::vector<Tensor>{mine, mine * 2.0f});
      const Tensor mean = ctx.all_reduce(ReduceOp::MEAN, mine);
      return std::vector<Tensor>{sums[0].to("CPU:0"), sums[1].to("CPU:0"), mean.to("CPU:0"),
                                 Tensor(sums[0].device().short_name() == "GPU:" + std::to_string(r))};
    });
    for (int r = 0; r < replicas; ++r) {
      const auto i = static_cast<std::size_t>(r);
      CHECK(results[3].values()[i].item<bool>());
      CHECK(all_close(results[0].values()[i], expected_sum, 1e-6, 1e-6));
      CHECK(all_close(results[1].values()[i], expected_sum * 2.0f, 1e-6, 1e-6));
      CHECK(all_close(results[2].values()[i], expected_sum / static_cast<float>(replicas), 1e-6, 1e-6));
    }
  }
}

TEST_CASE("a training step on GPU replicas keeps their variables equal and right", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, logical_gpus(2));
  const Tensor initial = test_values({64, 10}, 50);
  Variable w = [&] {
    auto scope = strategy.scope();
    return strategy.create_variable(initial);
  }();
  const Tensor x = test_values({8, 64}, 51);
  // Each replica's gradient of sum(x_r @ w) is x_r^T @ ones; the step applies their mean.
  auto after = strategy.run([&] {
    auto& ctx = get_replica_context();
    const int r = ctx.replica_id_in_sync_group();
    const Tensor xr = (x * static_cast<float>(r + 1)).to("GPU:" + std::to_string(r));
    const Tensor grad = matmul(xr, Tensor::ones({8, 10}, DType::float32).to("GPU:" + std::to_string(r)), true, false);
    Tensor value = w.read_value();
    axpy_inplace(value, -0.1, ctx.all_reduce(ReduceOp::MEAN, grad));
    strategy.extended().update(w, [&](const Tensor&) { return value; });
    return w.read_value().to("CPU:0");
  });
  const Tensor mean_grad = matmul(x * 1.5f, Tensor::ones({8, 10}, DType::float32), true, false);
  const Tensor expected = initial - mean_grad * 0.1f;
  CHECK(all_close(after.values()[0], expected, 1e-5, 1e-5));
  CHECK(array_equal(after.values()[0], after.values()[1]));
}
