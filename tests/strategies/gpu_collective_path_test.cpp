// How a multi-worker strategy's GPU tensors cross workers, decided alike on
// every worker from every worker's capability: NCCL when all can run it,
// else the host's ring (AUTO), or an error naming who cannot (NCCL).

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/gpu_collective_path.hpp>

#include "support/error_code_of.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;
using CI = CommunicationImplementation;

namespace {

using Capabilities = std::vector<std::pair<std::string, std::string>>;

} // namespace

TEST_CASE("GPU tensors cross workers through NCCL only when every worker can run it", "[strategies][nccl]") {
  const Capabilities all_nccl{{"worker:0", "nccl"}, {"worker:1", "nccl"}};
  CHECK_FALSE(gpu_tensors_through_host(CI::AUTO, all_nccl));
  CHECK_FALSE(gpu_tensors_through_host(CI::NCCL, all_nccl));
  CHECK(gpu_tensors_through_host(CI::RING, all_nccl));

  const Capabilities one_shares_a_card{{"worker:0", "nccl"},
                                       {"worker:1", "host: GPU:1 shares physical GPU 0 with another replica"}};
  CHECK(gpu_tensors_through_host(CI::AUTO, one_shares_a_card));
  const Capabilities one_on_cpu{{"worker:0", "nccl"}, {"worker:1", "cpu"}};
  CHECK(gpu_tensors_through_host(CI::AUTO, one_on_cpu));
  // No GPU replica anywhere: nothing goes through NCCL or needs staging.
  CHECK_FALSE(gpu_tensors_through_host(CI::NCCL, {{"worker:0", "cpu"}, {"worker:1", "cpu"}}));
}

TEST_CASE("asking for NCCL where a worker cannot run it fails naming the worker and why", "[strategies][nccl]") {
  const auto message = testing::error_message_of([] {
    (void) gpu_tensors_through_host(CI::NCCL, {{"worker:0", "nccl"},
                                               {"worker:1", "host: GPU:1 shares physical GPU 0 with another replica"},
                                               {"worker:2", "cpu"}});
  });
  CHECK_THAT(message, Contains("worker:1: GPU:1 shares physical GPU 0 with another replica"));
  CHECK_THAT(message, Contains("worker:2: its replicas run on CPU devices"));
  CHECK_THAT(message, Contains("troupe-launch --gpus-per-worker"));
  CHECK_THAT(message, !Contains("worker:0"));
}
