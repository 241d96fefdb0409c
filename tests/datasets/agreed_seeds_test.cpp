// Unseeded random draws given one agreed seed (what a multi-worker strategy
// does before DATA sharding): the same pipeline built twice, as on two
// workers, then produces the same orders, pass after pass.

#include <catch2/catch.hpp>

#include <troupe/datasets/agreed_seeds.hpp>

#include "format_test_util.hpp"
#include "int64_values.hpp"

using namespace troupe;
using troupe::test::int64_values_of;
using troupe::test::strings_of;
using troupe::internal::SeedScope;
using troupe::internal::with_agreed_seeds;

namespace {

// The pipeline a worker builds: its unseeded shuffles draw their own seeds.
Dataset worker_pipeline() {
  return Dataset::range(64).shuffle(64).map([](const Tensor& x) { return x; }).shuffle(8);
}

} // namespace

TEST_CASE("unseeded shuffles given one agreed seed give every worker the same order in every pass",
          "[datasets][shuffle]") {
  const auto on_worker_0 = with_agreed_seeds(worker_pipeline(), 42, SeedScope::whole_pipeline);
  const auto on_worker_1 = with_agreed_seeds(worker_pipeline(), 42, SeedScope::whole_pipeline);
  CHECK(on_worker_0.seeded.size() == 2);
  const auto epoch_0 = int64_values_of(on_worker_0.dataset);
  CHECK(int64_values_of(on_worker_1.dataset) == epoch_0);
  // Reshuffled each pass, alike on both.
  const auto epoch_1 = int64_values_of(on_worker_0.dataset);
  CHECK(int64_values_of(on_worker_1.dataset) == epoch_1);
  CHECK(epoch_1 != epoch_0);
  // Another agreed seed, another order.
  CHECK(int64_values_of(with_agreed_seeds(worker_pipeline(), 43, SeedScope::whole_pipeline).dataset) != epoch_0);
}

TEST_CASE("agreeing seeds keeps user seeds and, before a shard, the shuffles after it", "[datasets][shuffle]") {
  const auto seeded = Dataset::range(32).shuffle(32, 7);
  const auto kept = with_agreed_seeds(seeded, 42, SeedScope::whole_pipeline);
  CHECK(kept.seeded.empty());
  CHECK(kept.dataset.node() == seeded.node());
  CHECK(int64_values_of(kept.dataset) == int64_values_of(Dataset::range(32).shuffle(32, 7)));

  const auto sharded = with_agreed_seeds(Dataset::range(32).shuffle(32).shard(2, 0).shuffle(4), 42,
                                         SeedScope::before_last_shard);
  REQUIRE(sharded.seeded.size() == 1);
  CHECK(sharded.seeded.front().rfind("shuffle(32", 0) == 0);
  CHECK(with_agreed_seeds(Dataset::range(8).shuffle(8), 42, SeedScope::before_last_shard).seeded.empty());
}

TEST_CASE("an unseeded list_files given one agreed seed lists the files alike on every worker",
          "[datasets][shuffle]") {
  const troupe::test::TempDir dir;
  for (int i = 0; i < 12; ++i)
    troupe::test::write_file(dir.file("f" + std::to_string(i) + ".txt"), std::to_string(i));
  const auto pattern = dir.file("*.txt");
  const auto a = with_agreed_seeds(Dataset::list_files(pattern), 42, SeedScope::whole_pipeline);
  const auto b = with_agreed_seeds(Dataset::list_files(pattern), 42, SeedScope::whole_pipeline);
  CHECK(a.seeded.size() == 1);
  CHECK(strings_of(a.dataset) == strings_of(b.dataset));
  CHECK(strings_of(a.dataset) == strings_of(b.dataset)); // the second pass too
}
