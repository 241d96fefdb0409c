// Messages that stay in their process (the input actor's, the replicas' and
// their collective group's): they print, and those that point into this
// process (a caller's slot, shared tensors) refuse to be serialised, naming
// themselves, rather than being dropped silently.

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/actors/replicas/collective_group_messages.hpp>
#include <troupe/actors/replicas/input_pipeline_messages.hpp>
#include <troupe/actors/replicas/replica_messages.hpp>

using namespace troupe::internal;
using Catch::Matchers::Contains;

TEST_CASE("an input fetch prints the steps it wants and cannot be serialised", "[actors][messages]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto slot = std::make_shared<FetchSlot>();
  slot->wanted = 3;
  InputFetchMsg fetch{slot};
  CHECK(caf::deep_to_string(fetch) == "troupe::InputFetchMsg(3)");
  InputFillMsg fill;
  CHECK(caf::deep_to_string(fill) == "troupe::InputFillMsg()");

  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  const auto error = sink(fetch);
  REQUIRE(error);
  CHECK(error.code() == static_cast<uint8_t>(troupe::Errc::not_supported));
  CHECK_THAT(sys.render(error), Contains("troupe::InputFetchMsg holds pointers into its process"));
  // The fill carries nothing, so it would travel.
  std::vector<char> fill_bytes;
  caf::binary_serializer fill_sink(sys, fill_bytes);
  CHECK_FALSE(fill_sink(fill));
}

TEST_CASE("a replica's contribution prints its key and fingerprint and cannot be serialised", "[actors][messages]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  ContributionMsg contribution{troupe::CollectiveKey{1, 7, 2}, 3,
                               troupe::CollectiveFingerprint::of(troupe::CollectiveKind::all_reduce,
                                                                 troupe::ReduceOp::SUM, 0,
                                                                 {troupe::Tensor::from_vector<float>({1, 2, 3})}),
                               nullptr};
  CHECK(caf::deep_to_string(contribution)
        == R"x(troupe::ContributionMsg(collective #2 of run 7 (group 1), 3, "all_reduce(SUM) of float32 (3,)"))x");
  ReplicaFinishedMsg finished{7, 1, 2, "boom"};
  CHECK(caf::deep_to_string(finished) == R"(troupe::ReplicaFinishedMsg(7, 1, 2, "boom"))");

  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  const auto error = sink(contribution);
  REQUIRE(error);
  CHECK_THAT(sys.render(error), Contains("troupe::ContributionMsg holds pointers into its process"));
  CollectiveDoneMsg done{troupe::CollectiveKey{1, 7, 2}, nullptr, troupe::Errc::timeout, "late", nullptr};
  std::vector<char> done_bytes;
  caf::binary_serializer done_sink(sys, done_bytes);
  CHECK(done_sink(done));
}
