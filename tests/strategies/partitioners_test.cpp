// Partitioners, ShardLayout and RoundRobinPlacement against TensorFlow's numbers.
// Sources of the expected values:
//   sharded_variable.py: the docstring examples of FixedShardsPartitioner,
//     MinSizePartitioner and MaxSizePartitioner, and their argument ValueErrors;
//   partitioned_variables.py: min_max_variable_partitioner and
//     variable_axis_size_partitioner, the formulas the two size partitioners call;
//   parameter_server_strategy_v2.py (_create_variable, _create_variable_round_robin) and
//   parameter_server_strategy_v2_test.py (testVariablePlacement, testBasic,
//     testNonCallableInitialValue, testNumPartitionsLargerThanSize, testPartitionToOne).
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/ops/tensor_ops.hpp>
#include <troupe/strategies/partitioners.hpp>
#include <troupe/strategies/round_robin_placement.hpp>
#include <troupe/strategies/shard_layout.hpp>

using namespace troupe;
using Catch::Matchers::Contains;

namespace {

// Runs `fn`, requires an Error with `code` and returns its message.
template <class Fn>
std::string error_message(Errc code, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.code() == code);
    return e.what();
  }
  FAIL("expected troupe::Error(" << name(code) << ")");
  return {};
}

std::vector<int64_t> all_rows(const ShardLayout& layout) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < layout.num_shards(); ++i)
    rows.push_back(layout.rows(i));
  return rows;
}

// 0, 1, 2, ... as int64 with `shape`: every element differs, so any misplaced row shows.
Tensor iota(const Shape& shape) {
  std::vector<int64_t> values(static_cast<size_t>(shape.num_elements()));
  std::iota(values.begin(), values.end(), int64_t{0});
  return Tensor::from_vector<int64_t>(values, shape);
}

} // namespace

// -- partitioners -----------------------------------------------------------------------

TEST_CASE("FixedShardsPartitioner gives its count capped at the first dimension", "[strategies]") {
  // sharded_variable.py docstring: FixedShardsPartitioner(num_shards=2) on [10, 3] -> [2, 1].
  CHECK(FixedShardsPartitioner(2)(Shape{10, 3}, DType::float32) == 2);
  // partitions[axis] = min(num_shards, shape.dims[axis]): testNumPartitionsLargerThanSize.
  CHECK(FixedShardsPartitioner(4)(Shape{3}, DType::int64) == 3);
  CHECK(FixedShardsPartitioner(5)(Shape{13, 2}, DType::float32) == 5);
  CHECK(FixedShardsPartitioner(3)(Shape{}, DType::float32) == 1);
  CHECK(FixedShardsPartitioner(2).name() == "FixedShardsPartitioner(num_shards=2)");
}

TEST_CASE("MinSizePartitioner matches TensorFlow's min_max_variable_partitioner", "[strategies]") {
  // Docstring: MinSizePartitioner(min_shard_bytes=4, max_shards=2) on float32 [6, 1] -> 2;
  // with max_shards=10 -> 6 (24 bytes / 4 = 6 shards).
  CHECK(MinSizePartitioner(4, 2)(Shape{6, 1}, DType::float32) == 2);
  CHECK(MinSizePartitioner(4, 10)(Shape{6, 1}, DType::float32) == 6);
  // API example: float32 [784, 256] is 802816 bytes; ceil(802816 / 262144) = 4 shards by size,
  // capped at max_shards.
  CHECK(MinSizePartitioner(256 << 10, 2)(Shape{784, 256}, DType::float32) == 2);
  CHECK(MinSizePartitioner(256 << 10, 10)(Shape{784, 256}, DType::float32) == 4);
  // The docstring of min_max_variable_partitioner: float32 [1024, 1024] over 256 KiB -> 16.
  CHECK(MinSizePartitioner(256 << 10, 100)(Shape{1024, 1024}, DType::float32) == 16);
  // Capped at shape[0]: 4 MiB in 3 rows -> 3.
  CHECK(MinSizePartitioner(256 << 10, 100)(Shape{3, 1 << 20}, DType::float32) == 3);
  // testPartitionToOne: 64 MiB minimum on int64 [10] -> 1 (the max(1, ...) floor).
  CHECK(MinSizePartitioner(64 << 20, 2)(Shape{10}, DType::int64) == 1);
  // TensorFlow's defaults (256 KiB, 1 shard) never split.
  CHECK(MinSizePartitioner()(Shape{1024, 1024}, DType::float32) == 1);
  CHECK(MinSizePartitioner(4, 2)(Shape{}, DType::float32) == 1);
  CHECK(MinSizePartitioner(4, 2)(Shape{0, 5}, DType::float32) == 1);
  CHECK(MinSizePartitioner(262144, 2).name()
        == "MinSizePartitioner(min_shard_bytes=262144, max_shards=2)");
}

TEST_CASE("MaxSizePartitioner matches TensorFlow's variable_axis_size_partitioner",
          "[strategies]") {
  // Docstring: on float32 [6, 1], max_shard_bytes=4 -> 6; with max_shards=2 -> 2;
  // max_shard_bytes=1024 -> 1.
  CHECK(MaxSizePartitioner(4)(Shape{6, 1}, DType::float32) == 6);
  CHECK(MaxSizePartitioner(4, 2)(Shape{6, 1}, DType::float32) == 2);
  CHECK(MaxSizePartitioner(1024)(Shape{6, 1}, DType::float32) == 1);
  // float32 [784, 256]: 1024-byte rows, 256 rows per 256 KiB shard, ceil(784 / 256) = 4.
  CHECK(MaxSizePartitioner(256 << 10)(Shape{784, 256}, DType::float32) == 4);
  // A row larger than max_shard_bytes still makes one row per shard: max(1, floor(...)).
  CHECK(MaxSizePartitioner(100)(Shape{5, 64}, DType::float64) == 5);
  // 13 float32 rows of 8 bytes with 24-byte shards: 3 rows each, ceil(13 / 3) = 5.
  CHECK(MaxSizePartitioner(24)(Shape{13, 2}, DType::float32) == 5);
  CHECK(MaxSizePartitioner(4)(Shape{}, DType::float32) == 1);
  CHECK(MaxSizePartitioner(4)(Shape{0, 3}, DType::float32) == 1);
  CHECK(MaxSizePartitioner(4)(Shape{6, 0}, DType::float32) == 1);
  CHECK(MaxSizePartitioner(4).name() == "MaxSizePartitioner(max_shard_bytes=4, max_shards=None)");
  CHECK(MaxSizePartitioner(4, 2).name() == "MaxSizePartitioner(max_shard_bytes=4, max_shards=2)");
}

TEST_CASE("partitioners reject non-positive arguments naming the argument and value",
          "[strategies]") {
  // sharded_variable.py: "Argument `min_shard_bytes` must be positive. Received: 0", etc.
  auto message = error_message(Errc::invalid_argument, [] { (void)MinSizePartitioner(0, 2); });
  CHECK_THAT(message, Contains("MinSizePartitioner")
                        && Contains("`min_shard_bytes` must be positive")
                        && Contains("Received: 0"));
  message = error_message(Errc::invalid_argument, [] { (void)MinSizePartitioner(1024, -1); });
  CHECK_THAT(message, Contains("`max_shards` must be positive") && Contains("Received: -1"));
  message = error_message(Errc::invalid_argument, [] { (void)MaxSizePartitioner(-5); });
  CHECK_THAT(message, Contains("MaxSizePartitioner")
                        && Contains("`max_shard_bytes` must be positive")
                        && Contains("Received: -5"));
  message = error_message(Errc::invalid_argument, [] { (void)MaxSizePartitioner(1024, 0); });
  CHECK_THAT(message, Contains("`max_shards` must be positive") && Contains("Received: 0")
                        && Contains("std::nullopt"));
  message = error_message(Errc::invalid_argument, [] { (void)FixedShardsPartitioner(0); });
  CHECK_THAT(message, Contains("FixedShardsPartitioner")
                        && Contains("`num_shards` must be positive") && Contains("Received: 0"));
  message = error_message(Errc::invalid_argument,
                          [] { (void)Partitioner("custom", Partitioner::ShardCount{}); });
  CHECK_THAT(message, Contains("custom") && Contains("empty"));
}

TEST_CASE("named partitioners convert to Partitioner and keep their counts and names",
          "[strategies]") {
  const Partitioner fixed = FixedShardsPartitioner(3);
  const Partitioner min_size = MinSizePartitioner(256 << 10, 2);
  const Partitioner max_size = MaxSizePartitioner(4, 2);
  CHECK(fixed(Shape{10, 3}, DType::float32) == 3);
  CHECK(min_size(Shape{784, 256}, DType::float32) == 2);
  CHECK(max_size(Shape{6, 1}, DType::float32) == 2);
  CHECK(fixed.name() == "FixedShardsPartitioner(num_shards=3)");
  const std::optional<Partitioner> in_optional = MinSizePartitioner(4, 10);
  CHECK((*in_optional)(Shape{6, 1}, DType::float32) == 6);
}

// -- ShardLayout ------------------------------------------------------------------------

TEST_CASE("shard layout gives the first rows%n shards one more row", "[strategies]") {
  // API.md: 13 rows over 5 shards -> 3, 3, 3, 2, 2.
  const ShardLayout thirteen(Shape{13, 4}, 5);
  CHECK(thirteen.num_shards() == 5);
  CHECK(thirteen.is_sharded());
  CHECK(all_rows(thirteen) == std::vector<int64_t>{3, 3, 3, 2, 2});
  CHECK(thirteen.offsets() == std::vector<int64_t>{0, 3, 6, 9, 11, 13});
  CHECK(thirteen.shard_shape(0) == Shape{3, 4});
  CHECK(thirteen.shard_shape(4) == Shape{2, 4});
  CHECK(thirteen.row_offset(3) == 9);
  // _create_variable's comment: num_partitions=4, shape[0]=10 -> [3, 3, 2, 2],
  // offsets [0, 3, 6, 8, 10].
  const ShardLayout ten(Shape{10}, 4);
  CHECK(all_rows(ten) == std::vector<int64_t>{3, 3, 2, 2});
  CHECK(ten.offsets() == std::vector<int64_t>{0, 3, 6, 8, 10});
  // MinSizePartitioner(256 << 10, 10) on float32 [784, 256]: 4 shards of 196 rows.
  const ShardLayout dense(Shape{784, 256}, 4);
  CHECK(all_rows(dense) == std::vector<int64_t>{196, 196, 196, 196});
}

TEST_CASE("shard layout maps every row to the shard that holds it", "[strategies]") {
  const ShardLayout layout(Shape{13, 2}, 5);
  const auto offsets = layout.offsets();
  for (int64_t row = 0; row < 13; ++row) {
    CAPTURE(row);
    const int64_t shard = layout.shard_of_row(row);
    CHECK(offsets[static_cast<size_t>(shard)] <= row);
    CHECK(row < offsets[static_cast<size_t>(shard) + 1]);
  }
  CHECK(error_message(Errc::out_of_range, [&] { (void)layout.shard_of_row(13); })
          .find("need 0 <= row < 13")
        != std::string::npos);
  CHECK(error_message(Errc::out_of_range, [&] { (void)layout.rows(5); }).find("shards 0..4")
        != std::string::npos);
}

TEST_CASE("shard layout never splits scalars and caps the count at the first dimension",
          "[strategies]") {
  const ShardLayout scalar(Shape{}, 4);
  CHECK(scalar.num_shards() == 1);
  CHECK_FALSE(scalar.is_sharded());
  CHECK(scalar.shard_shape(0) == Shape{});
  // testNumPartitionsLargerThanSize: 4 shards of 3 rows -> 3 shards of 1 row.
  const ShardLayout three(Shape{3}, 4);
  CHECK(all_rows(three) == std::vector<int64_t>{1, 1, 1});
  // _create_variable caps after deciding to shard: one row asked for 3 shards is a
  // ShardedVariable with a single shard.
  const ShardLayout one_row(Shape{1, 8}, 3);
  CHECK(one_row.num_shards() == 1);
  CHECK(one_row.is_sharded());
  const ShardLayout whole(Shape{6, 2}, 1);
  CHECK(whole.num_shards() == 1);
  CHECK_FALSE(whole.is_sharded());
  const ShardLayout no_rows(Shape{0, 3}, 2);
  CHECK(no_rows.num_shards() == 1);
  CHECK(no_rows.shard_shape(0) == Shape{0, 3});
  CHECK_THAT(error_message(Errc::invalid_argument, [] { (void)ShardLayout(Shape{4}, 0); }),
             Contains("num_shards is 0") && Contains("at least 1"));
}

TEST_CASE("shard layout for a variable follows ParameterServerStrategy's decision",
          "[strategies]") {
  // No partitioner, or a rank-0 variable: one plain variable.
  CHECK_FALSE(
    ShardLayout::for_variable(Shape{784, 256}, DType::float32, std::nullopt).is_sharded());
  const std::optional<Partitioner> fixed = FixedShardsPartitioner(2);
  CHECK_FALSE(ShardLayout::for_variable(Shape{}, DType::float32, fixed).is_sharded());
  // testBasic: FixedShardsPartitioner(2) on (5, 2) -> 3 and 2 rows.
  const auto basic = ShardLayout::for_variable(Shape{5, 2}, DType::int64, fixed);
  CHECK(basic.is_sharded());
  CHECK(all_rows(basic) == std::vector<int64_t>{3, 2});
  // testPartitionToOne: a partitioner result of 1 gives a plain variable.
  const std::optional<Partitioner> large_min = MinSizePartitioner(64 << 20, 2);
  CHECK_FALSE(ShardLayout::for_variable(Shape{10}, DType::int64, large_min).is_sharded());
  // API.md example: MinSizePartitioner(256 << 10, 2) on float32 [784, 256] -> 2 x 392 rows.
  const std::optional<Partitioner> api = MinSizePartitioner(256 << 10, 2);
  CHECK(all_rows(ShardLayout::for_variable(Shape{784, 256}, DType::float32, api))
        == std::vector<int64_t>{392, 392});
  // TensorFlow rejects a partitioner result of 0 ("variable_partitioner must return ...
  // (non-zero)"); FixedShardsPartitioner returns min(n, 0) = 0 for a variable with no rows.
  CHECK_THAT(error_message(Errc::invalid_argument,
                           [&] {
                             (void)ShardLayout::for_variable(Shape{0, 3}, DType::float32, fixed);
                           }),
             Contains("FixedShardsPartitioner(num_shards=2) returned 0 shards")
               && Contains("(0, 3)") && Contains("at least 1 shard"));
  const std::optional<Partitioner> negative =
    Partitioner("Negative", [](const Shape&, DType) { return int64_t{-2}; });
  CHECK_THAT(
    error_message(Errc::invalid_argument,
                  [&] { (void)ShardLayout::for_variable(Shape{4}, DType::float32, negative); }),
    Contains("Negative returned -2 shards"));
}

TEST_CASE("shard layout splits a value into its shards and concatenates them back",
          "[strategies]") {
  const auto [shape, shards] = GENERATE(table<Shape, int64_t>(
    {{Shape{13, 3}, 5}, {Shape{10}, 4}, {Shape{5, 2}, 2}, {Shape{3, 2, 2}, 3}, {Shape{7, 1}, 1}}));
  CAPTURE(shape, shards);
  const ShardLayout layout(shape, shards);
  const Tensor full = iota(shape);
  const auto parts = layout.split(full);
  REQUIRE(static_cast<int64_t>(parts.size()) == layout.num_shards());
  for (int64_t i = 0; i < layout.num_shards(); ++i) {
    CAPTURE(i);
    const Tensor& part = parts[static_cast<size_t>(i)];
    CHECK(part.shape() == layout.shard_shape(i));
    // Shard i holds the rows starting at row_offset(i): its first element is that row's first.
    const int64_t row_elements = shape.num_elements() / shape[0];
    CHECK(part.to_vector<int64_t>().front() == layout.row_offset(i) * row_elements);
  }
  CHECK(array_equal(layout.concat(parts), full));
}

TEST_CASE("shard layout splits testBasic's values as TensorFlow does", "[strategies]") {
  // testBasic: [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]] over 2 shards.
  const ShardLayout layout(Shape{5, 2}, 2);
  const auto parts = layout.split(iota(Shape{5, 2}));
  CHECK(parts[0].to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(parts[1].to_vector<int64_t>() == std::vector<int64_t>{6, 7, 8, 9});
  // testNonCallableInitialValue: [0..9] over 4 shards -> [0,1,2] [3,4,5] [6,7] [8,9].
  const auto four = ShardLayout(Shape{10}, 4).split(iota(Shape{10}));
  CHECK(four[2].to_vector<int64_t>() == std::vector<int64_t>{6, 7});
  CHECK(four[3].to_vector<int64_t>() == std::vector<int64_t>{8, 9});
}

TEST_CASE("shard layout split and concat reject values that do not fit", "[strategies]") {
  const ShardLayout layout(Shape{5, 2}, 2);
  CHECK_THAT(error_message(Errc::shape_mismatch,
                           [&] {
                             (void)layout.split(iota(Shape{4, 2}));
                           }),
             Contains("(4, 2)") && Contains("(5, 2)"));
  CHECK_THAT(error_message(Errc::invalid_argument, [&] { (void)layout.split(Tensor{}); }),
             Contains("empty"));
  const auto parts = layout.split(iota(Shape{5, 2}));
  CHECK_THAT(error_message(Errc::invalid_argument, [&] { (void)layout.concat({parts[0]}); }),
             Contains("got 1 shards") && Contains("has 2"));
  CHECK_THAT(error_message(Errc::shape_mismatch,
                           [&] {
                             (void)layout.concat({parts[1], parts[0]});
                           }),
             Contains("shard 0 has shape (2, 2)") && Contains("(3, 2)"));
}

TEST_CASE("an unsplit layout passes scalars and whole values through", "[strategies]") {
  const ShardLayout scalar(Shape{}, 3);
  const Tensor value(2.5f);
  const auto parts = scalar.split(value);
  REQUIRE(parts.size() == 1);
  CHECK(array_equal(parts[0], value));
  CHECK(array_equal(scalar.concat(parts), value));
}

// -- RoundRobinPlacement ----------------------------------------------------------------

TEST_CASE("round robin placement cycles over parameter servers in creation order", "[strategies]") {
  // testVariablePlacement (3 ps): v2..v5 on tasks 0, 1, 2, 0.
  RoundRobinPlacement placement(3);
  CHECK(placement.next() == 0);
  CHECK(placement.next() == 1);
  CHECK(placement.next() == 2);
  CHECK(placement.next() == 0);
  CHECK(placement.variable_count() == 4);
  CHECK(RoundRobinPlacement::device(1).to_string() == "/job:ps/replica:0/task:1/device:CPU:0");
}

TEST_CASE("round robin placement continues each variable's shards where the last stopped",
          "[strategies]") {
  RoundRobinPlacement placement(2);
  // testNonCallableInitialValue (2 ps): 4 shards on 0, 1, 0, 1.
  CHECK(placement.place(ShardLayout(Shape{10}, 4)) == std::vector<int>{0, 1, 0, 1});
  // testNumPartitionsLargerThanSize: 3 shards on 0, 1, 0 (in a fresh strategy: here the
  // counter is 4, which is also task 0).
  CHECK(placement.place(ShardLayout(Shape{3}, 4)) == std::vector<int>{0, 1, 0});
  // The next variable, whole, takes the next task; then a 3-shard variable starts after it.
  CHECK(placement.place(ShardLayout(Shape{6}, 1)) == std::vector<int>{1});
  CHECK(placement.place(ShardLayout(Shape{6}, 3)) == std::vector<int>{0, 1, 0});
  CHECK(placement.variable_count() == 11);
  // testPartitionToOne: two unsplit variables on tasks 0 and 1 of a fresh strategy.
  RoundRobinPlacement fresh(2);
  CHECK(fresh.place(ShardLayout(Shape{10}, 1)) == std::vector<int>{0});
  CHECK(fresh.place(ShardLayout(Shape{10}, 1)) == std::vector<int>{1});
}

TEST_CASE("round robin placement needs at least one parameter server", "[strategies]") {
  CHECK_THAT(error_message(Errc::invalid_argument, [] { (void)RoundRobinPlacement(0); }),
             Contains("There must be at least one ps"));
}
