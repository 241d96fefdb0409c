// Collectives through libnccl on real GPUs: a communicator of one rank per
// GPU of this machine (one rank on a one-GPU machine, as NCCL refuses two
// ranks on one GPU). Skips, naming why, without a GPU or NCCL;
// tests/actors/nccl_*_test.cpp cover the same paths on an emulated NCCL.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>
#include <troupe/troupe.hpp>

#include "gpu/no_gpu_reason.hpp"
#include "support/skip.hpp"
#include "support/test_values.hpp"

using namespace troupe;
using testing::no_gpu_reason;
using testing::test_values;

namespace {

std::string no_nccl_reason() {
  if (auto why = no_gpu_reason(); !why.empty())
    return why;
  auto& nccl = internal::nccl_backend();
  return nccl.available() ? std::string{} : "no NCCL: " + nccl.unavailable_reason();
}

CommunicationOptions nccl_options() {
  CommunicationOptions options;
  options.implementation = CommunicationImplementation::NCCL;
  options.timeout_seconds = 60;
  return options;
}

} // namespace

TEST_CASE("NCCL all-reduces, gathers, reduce-scatters and reduces again on one communicator, one rank per GPU",
          "[gpu][nccl]") {
  if (const auto why = no_nccl_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt, {}, nccl_options());  // every GPU, one replica each
  const int replicas = strategy.num_replicas_in_sync();
  const int64_t n = 3'000'017;
  std::vector<Tensor> inputs;
  Tensor expected_sum = Tensor::zeros({n}, DType::float32);
  for (int r = 0; r < replicas; ++r) {
    inputs.push_back(test_values({n}, 70 + static_cast<uint64_t>(r)));
    expected_sum = expected_sum + inputs.back();
  }
  for (int step = 0; step < 3; ++step) {
    auto results = strategy.run([&] {
      auto& ctx = get_replica_context();
      const int r = ctx.replica_id_in_sync_group();
      const std::string device = "GPU:" + std::to_string(r);
      const Tensor mine = inputs[static_cast<std::size_t>(r)].to(device);
      auto sums = ctx.all_reduce(ReduceOp::SUM, std::vector<Tensor>{mine, Tensor::full({7}, 1, DType::int32).to(device)});
      const Tensor mean = ctx.all_reduce(ReduceOp::MEAN, mine);
      const Tensor rows = ctx.all_gather(Tensor::full({r + 1, 3}, r, DType::float32).to(device), 0);
      const Tensor columns = ctx.all_gather(Tensor::full({2, r + 1}, r, DType::float32).to(device), 1);
      // A (2, 2 x replicas) of 10 r: each replica keeps its (2, 2) block along axis 1.
      const Tensor scattered =
        ctx.reduce_scatter(ReduceOp::SUM, Tensor::full({2, 2 * replicas}, 10.0 * r, DType::float32).to(device), 1);
      return std::vector<Tensor>{sums[0].to("CPU:0"), sums[1].to("CPU:0"), mean.to("CPU:0"), rows.to("CPU:0"),
                                 Tensor(sums[0].device().short_name() == device), columns.to("CPU:0"),
                                 scattered.to("CPU:0")};
    });
    std::vector<float> gathered;
    std::vector<float> row;  // of the gather along axis 1, both rows alike
    for (int r = 0; r < replicas; ++r) {
      gathered.insert(gathered.end(), static_cast<std::size_t>(3 * (r + 1)), static_cast<float>(r));
      row.insert(row.end(), static_cast<std::size_t>(r + 1), static_cast<float>(r));
    }
    std::vector<float> columns = row;
    columns.insert(columns.end(), row.begin(), row.end());
    for (int r = 0; r < replicas; ++r) {
      const auto i = static_cast<std::size_t>(r);
      CHECK(results[4].values()[i].item<bool>());
      CHECK(all_close(results[0].values()[i], expected_sum, 1e-6, 1e-6));
      CHECK(array_equal(results[1].values()[i], Tensor::full({7}, replicas, DType::int32)));
      CHECK(all_close(results[2].values()[i], expected_sum / static_cast<float>(replicas), 1e-6, 1e-6));
      CHECK(results[3].values()[i].to_vector<float>() == gathered);
      CHECK(results[5].values()[i].to_vector<float>() == columns);
      // Every replica's 10 r summed: 10 * replicas (replicas - 1) / 2 in each element of its (2, 2) block.
      CHECK(array_equal(results[6].values()[i],
                        Tensor::full({2, 2}, 10.0 * replicas * (replicas - 1) / 2, DType::float32)));
    }
  }
}

TEST_CASE("NCCL asked for on logical GPUs of one card fails naming the card, and AUTO reduces without it",
          "[gpu][nccl]") {
  if (const auto why = no_nccl_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  auto reduce = [] {
    auto& ctx = get_replica_context();
    return ctx.all_reduce(ReduceOp::SUM, Tensor::full({16}, 1.0, DType::float32).to(
                                           "GPU:" + std::to_string(ctx.replica_id_in_sync_group())))
      .to("CPU:0");
  };
  MirroredStrategy asked(rt, {"GPU:0", "GPU:1"}, nccl_options());
  try {
    asked.run(reduce);
    FAIL("NCCL ran two ranks on one GPU");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("shares physical GPU 0"));
  }
  MirroredStrategy automatic(rt, {"GPU:0", "GPU:1"});
  CHECK(array_equal(automatic.run(reduce).values()[1], Tensor::full({16}, 2.0, DType::float32)));
}
