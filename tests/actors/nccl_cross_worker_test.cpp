// Collectives of GPU tensors across workers through NCCL, with several
// workers in one process over simulated links, on emulated GPUs and NCCL:
// the workers agree on each collective (fingerprints, and rank 0's
// communicator) before NCCL sees it.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include <troupe/actors/gpu/nccl_announcement.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include "support/error_code_of.hpp"
#include "support/replica_errors.hpp"
#include "support/simulated_replica_groups.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;
using troupe::testing::require_all_ok;
using troupe::testing::what;
using troupe::testing::EmulatedGpus;
using troupe::testing::EmulatedNccl;
using troupe::testing::SimulatedReplicaGroups;

namespace {

constexpr int workers = 2;
constexpr int replicas = 2;

CollectiveRequest request(CollectiveKind kind, ReduceOp op, std::vector<Tensor> tensors) {
  CollectiveRequest r;
  r.kind = kind;
  r.op = op;
  r.tensors = std::move(tensors);
  return r;
}

GroupOptions options(double timeout_seconds = 30) {
  GroupOptions o;
  o.timeout_seconds = timeout_seconds;
  o.cluster = CrossWorkerSetup{};
  return o;
}

// Worker w's replica r runs on its own card: GPU:(w * replicas + r).
SimulatedReplicaGroups::DeviceOf own_gpus(Runtime& rt) {
  return [&rt](int w, int r) { return rt.resolve_device("GPU:" + std::to_string(w * replicas + r)); };
}

// Every replica's four ones, summed over both workers (4 each). A failed
// collective throws at the latest when its value is read back (its group
// was handed to the GPU without waiting): outside REQUIRE, so that the
// replica's error is the collective's.
void sum_of_ones(int w, int r, ReplicaHandle& h) {
  const std::string device = "GPU:" + std::to_string(w * replicas + r);
  auto sum = h.collective(request(CollectiveKind::all_reduce, ReduceOp::SUM,
                                  {Tensor::full({4}, 1.0, DType::float32).to(device)}));
  const auto values = sum.tensors.at(0).to("CPU:0").to_vector<float>();
  REQUIRE(values == std::vector<float>(4, 4.0f));
}

} // namespace

TEST_CASE("workers all-reduce, broadcast, all-gather and reduce-scatter GPU tensors through one NCCL communicator",
          "[actors][gpu][nccl][cluster]") {
  EmulatedGpus gpus(workers * replicas);
  EmulatedNccl nccl;
  {
    Runtime rt({.logical_cpu_devices = 1});
    SimulatedReplicaGroups cluster(rt, workers, replicas, options(), own_gpus(rt));
    auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
      const int g = w * replicas + r;
      const std::string device = "GPU:" + std::to_string(g);
      auto sum = h.collective(request(CollectiveKind::all_reduce, ReduceOp::SUM,
                                      {Tensor::full({300}, g + 1.0, DType::float32).to(device)}));
      REQUIRE(sum.tensors.at(0).device().short_name() == device);
      REQUIRE(sum.tensors.at(0).to("CPU:0").to_vector<float>() == std::vector<float>(300, 10.0f));
      auto mean = h.collective(request(CollectiveKind::all_reduce, ReduceOp::MEAN,
                                       {Tensor::full({3}, 2.0 * g, DType::float32).to(device)}));
      REQUIRE(mean.tensors.at(0).to("CPU:0").to_vector<float>() == std::vector<float>(3, 3.0f));
      auto first = h.collective(request(CollectiveKind::broadcast, ReduceOp::SUM,
                                        {Tensor::full({2}, g + 7.0, DType::float32).to(device)}));
      REQUIRE(first.tensors.at(0).to("CPU:0").to_vector<float>() == std::vector<float>(2, 7.0f));
      auto gathered = h.collective(request(CollectiveKind::all_gather, ReduceOp::SUM,
                                           {Tensor::full({1, 2}, g, DType::int32).to(device)}));
      REQUIRE(gathered.tensors.at(0).shape() == Shape{4, 2});
      REQUIRE(gathered.tensors.at(0).to("CPU:0").to_vector<int32_t>() == std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3});
      // Uneven: replica g sends g + 1 rows; every rank learns every other's from the announces.
      auto uneven = h.collective(request(CollectiveKind::all_gather, ReduceOp::SUM,
                                         {Tensor::full({g + 1, 2}, g, DType::int32).to(device)}));
      std::vector<int32_t> want;
      for (int k = 0; k < workers * replicas; ++k)
        for (int row = 0; row <= k; ++row)
          want.insert(want.end(), {k, k});
      REQUIRE(uneven.tensors.at(0).shape() == Shape{10, 2});
      REQUIRE(uneven.tensors.at(0).to("CPU:0").to_vector<int32_t>() == want);
      // reduce_scatter: rank g gets block g of the sum of every rank's 0, 1, ..., 7.
      std::vector<float> ramp(8);
      for (int i = 0; i < 8; ++i)
        ramp[static_cast<std::size_t>(i)] = static_cast<float>(i);
      auto scattered = h.collective(request(CollectiveKind::reduce_scatter, ReduceOp::SUM,
                                            {Tensor::from_vector(ramp).to(device)}));
      REQUIRE(scattered.tensors.at(0).shape() == Shape{2});
      const std::vector<float> block{4.0f * static_cast<float>(2 * g), 4.0f * static_cast<float>(2 * g + 1)};
      REQUIRE(scattered.tensors.at(0).to("CPU:0").to_vector<float>() == block);
    });
    require_all_ok(errors);
    // Rank 0 named one communicator for all six collectives; each GPU joined it once.
    CHECK(nccl.backend->unique_ids() == 1);
    CHECK(nccl.backend->ranks_created() == workers * replicas);
    CHECK(nccl.backend->groups_run() == 6);
    CHECK(nccl.backend->calls_run(NcclCall::Kind::reduce_scatter) == 1);
  }
  CHECK(nccl.backend->ranks_alive() == 0);
  CHECK(nccl.backend->misuse().empty());
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("workers that issue mismatched GPU collectives fail on every worker before NCCL sees them",
          "[actors][gpu][nccl][cluster]") {
  EmulatedGpus gpus(workers * replicas);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  SimulatedReplicaGroups cluster(rt, workers, replicas, options(), own_gpus(rt));
  auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
    const std::string device = "GPU:" + std::to_string(w * replicas + r);
    (void) h.collective(request(CollectiveKind::all_reduce, ReduceOp::SUM,
                                {Tensor::full({w == 0 ? 4 : 5}, 1.0, DType::float32).to(device)}));
  });
  for (const auto& worker : errors)
    for (const auto& e : worker) {
      REQUIRE(e);
      CHECK_THAT(what(e), Contains("mismatched collectives"));
    }
  CHECK(nccl.backend->ranks_created() == 0);
  CHECK(nccl.backend->groups_run() == 0);
}

TEST_CASE("an NCCL collective across workers that cannot complete fails everywhere within its timeout, and the "
          "next one runs on a communicator rank 0 names anew",
          "[actors][gpu][nccl][cluster]") {
  EmulatedGpus gpus(workers * replicas);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  SimulatedReplicaGroups cluster(rt, workers, replicas, options(0.3), own_gpus(rt));
  require_all_ok(cluster.run(sum_of_ones));
  nccl.backend->stall_gpu(3);  // worker 1's second replica never gets going
  auto errors = cluster.run(sum_of_ones);
  for (const auto& worker : errors)
    for (const auto& e : worker) {
      REQUIRE(e);
      CHECK_THAT(what(e), Contains("did not get the collective going within 0.3s"));
    }
  nccl.backend->stall_gpu(3, false);
  require_all_ok(cluster.run(sum_of_ones));
  CHECK(nccl.backend->unique_ids() == 2);
  CHECK(nccl.backend->ranks_created() == 2 * workers * replicas);
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("an NCCL failure on one worker's GPU aborts every worker's ranks at once, long before their timeout",
          "[actors][gpu][nccl][cluster]") {
  EmulatedGpus gpus(workers * replicas);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  SimulatedReplicaGroups cluster(rt, workers, replicas, options(60), own_gpus(rt));
  require_all_ok(cluster.run(sum_of_ones));
  nccl.backend->fail_gpu(3, "emulated network failure");  // worker 1's second replica
  const auto start = std::chrono::steady_clock::now();
  auto errors = cluster.run(sum_of_ones);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{20});
  for (int w = 0; w < workers; ++w)
    for (int r = 0; r < replicas; ++r) {
      INFO("worker " << w << " replica " << r);
      REQUIRE(errors[static_cast<std::size_t>(w)][static_cast<std::size_t>(r)]);
    }
  // Worker 0 learns it from worker 1's abort frame.
  CHECK_THAT(what(errors[0][0]), Contains("failed on task worker:1"));
  CHECK(nccl.backend->ranks_aborted() == workers * replicas);
}

TEST_CASE("a worker lost while the others wait in NCCL fails the collective on every survivor at once, naming it",
          "[actors][gpu][nccl][cluster]") {
  EmulatedGpus gpus(workers * replicas);
  EmulatedNccl nccl;
  Runtime rt({.logical_cpu_devices = 1});
  // A timeout far beyond the test's bound: the loss, not the timeout, ends it.
  SimulatedReplicaGroups cluster(rt, workers, replicas, options(60), own_gpus(rt));
  nccl.backend->stall_gpu(3);  // the collective cannot complete in NCCL
  const auto start = std::chrono::steady_clock::now();
  auto running = std::async(std::launch::async, [&] {
    return cluster.run([&](int w, int r, ReplicaHandle& h) {
      const std::string device = "GPU:" + std::to_string(w * replicas + r);
      (void) h.collective(request(CollectiveKind::all_reduce, ReduceOp::SUM,
                                  {Tensor::full({4}, 1.0, DType::float32).to(device)}));
    });
  });
  // Every rank issued its group: the workers agreed and wait in NCCL.
  REQUIRE(nccl.backend->wait_for_issued(workers * replicas, std::chrono::seconds{20}));
  cluster.cut(1, "the test cut it off");
  REQUIRE(running.wait_for(std::chrono::seconds{20}) == std::future_status::ready);
  auto errors = running.get();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds{20});
  for (int r = 0; r < replicas; ++r) {
    REQUIRE(errors[0][static_cast<std::size_t>(r)]);
    CHECK_THAT(what(errors[0][static_cast<std::size_t>(r)]), Contains("task worker:1 was lost"));
    REQUIRE(errors[1][static_cast<std::size_t>(r)]);
    CHECK_THAT(what(errors[1][static_cast<std::size_t>(r)]), Contains("task worker:0 was lost"));
  }
  CHECK(nccl.backend->ranks_aborted() == workers * replicas);
}

TEST_CASE("where NCCL cannot span the workers, their GPU tensors cross through host copies and the ring, and the "
          "results come back to each replica's GPU",
          "[actors][gpu][nccl][cluster]") {
  EmulatedGpus gpus(workers * replicas);  // no NCCL installed: the build's, unavailable without a GPU
  Runtime rt({.logical_cpu_devices = 1});
  auto through_host = options();
  through_host.cluster->gpu_tensors_through_host = true;  // what the strategy's agreement decided
  SimulatedReplicaGroups cluster(rt, workers, replicas, through_host, own_gpus(rt));
  auto errors = cluster.run([&](int w, int r, ReplicaHandle& h) {
    const int g = w * replicas + r;
    const std::string device = "GPU:" + std::to_string(g);
    auto mean = h.collective(request(CollectiveKind::all_reduce, ReduceOp::MEAN,
                                     {Tensor::full({5}, 2.0 * g, DType::float32).to(device)}));
    REQUIRE(mean.tensors.at(0).device().short_name() == device);
    REQUIRE(mean.tensors.at(0).to("CPU:0").to_vector<float>() == std::vector<float>(5, 3.0f));
    auto gathered = h.collective(request(CollectiveKind::all_gather, ReduceOp::SUM,
                                         {Tensor::full({g + 1}, g, DType::int32).to(device)}));
    REQUIRE(gathered.tensors.at(0).device().short_name() == device);
    REQUIRE(gathered.tensors.at(0).to("CPU:0").to_vector<int32_t>()
            == std::vector<int32_t>{0, 1, 1, 2, 2, 2, 3, 3, 3, 3});
  });
  require_all_ok(errors);
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("NCCL details read from another worker are bounded before they are used, naming the worker",
          "[actors][nccl][cluster]") {
  NcclAnnouncement sent;
  sent.communicator = "rank 0's communicator";
  sent.dropped = "group 1 gen 0";
  sent.sizes = {{1, 2}, {3, 4}};
  const std::string bytes = sent.encode();
  const auto read = NcclAnnouncement::decode(bytes, "worker:1", 2, 2);
  CHECK(read.communicator == sent.communicator);
  CHECK(read.dropped == sent.dropped);
  CHECK(read.sizes == sent.sizes);

  using troupe::testing::error_code_of;
  using troupe::testing::error_message_of;
  CHECK(error_code_of([&] { (void) NcclAnnouncement::decode(bytes.substr(0, bytes.size() - 1), "worker:1", 2, 2); })
        == Errc::data_loss);
  CHECK_THAT(error_message_of([&] { (void) NcclAnnouncement::decode(bytes + "x", "worker:1", 2, 2); }),
             Contains("task worker:1") && Contains("left over"));
  CHECK_THAT(error_message_of([&] { (void) NcclAnnouncement::decode(bytes, "worker:1", 3, 2); }),
             Contains("2 replicas x 2 tensors, where every worker has 3 x 2"));
  // A communicator length beyond the bytes: refused before anything is read or allocated.
  std::string huge = bytes;
  const uint32_t lie = 0xFFFFFFF0u;
  huge.replace(0, sizeof lie, reinterpret_cast<const char*>(&lie), sizeof lie);
  CHECK(error_code_of([&] { (void) NcclAnnouncement::decode(huge, "worker:1", 2, 2); }) == Errc::data_loss);
}
