#include <catch2/catch.hpp>

#include <support/error_code_of.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/ops/tensor_ops.hpp>
#include <troupe/datasets/batch_dataset.hpp>
#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/prefetch_dataset.hpp>

using namespace troupe;
using troupe::testing::error_code_of;
using Catch::Contains;

namespace {

/// The values of a dataset of int64 scalars.
std::vector<int64_t> values(const Dataset& ds) {
  std::vector<int64_t> result;
  for (const Element& e : ds) {
    const Tensor& t = e;
    REQUIRE(t.dtype() == DType::int64);
    REQUIRE(t.rank() == 0);
    result.push_back(t.item<int64_t>());
  }
  return result;
}

/// The values of a dataset of int64 vectors (batches).
std::vector<std::vector<int64_t>> batches(const Dataset& ds) {
  std::vector<std::vector<int64_t>> result;
  for (const Element& e : ds) {
    const Tensor& t = e;
    REQUIRE(t.rank() == 1);
    result.push_back(t.to_vector<int64_t>());
  }
  return result;
}

std::vector<Element> elements_of(const Dataset& ds) {
  std::vector<Element> elements;
  for (const Element& e : ds)
    elements.push_back(e);
  return elements;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> result(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    result[static_cast<std::size_t>(i)] = i;
  return result;
}

bool is_permutation_of_iota(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  return v == iota(n);
}

Tensor int32s(std::vector<int32_t> v) {
  return Tensor::from_vector(v);
}

} // namespace

// -- batch --------------------------------------------------------------------------------------

TEST_CASE("batch stacks consecutive elements, keeping a partial last batch",
          "[datasets][dataset][transformations]") {
  // tf.data.Dataset.range(8).batch(3) -> [0, 1, 2], [3, 4, 5], [6, 7]
  CHECK(batches(Dataset::range(8).batch(3))
        == std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6, 7}});
  // ... batch(3, drop_remainder=True) -> [0, 1, 2], [3, 4, 5]
  CHECK(batches(Dataset::range(8).batch(3, true))
        == std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}});
  CHECK(batches(Dataset::range(6).batch(3, true))
        == std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}});
  CHECK(batches(Dataset::range(2).batch(3, true)).empty());
  CHECK(batches(Dataset::range(2).batch(5)) == std::vector<std::vector<int64_t>>{{0, 1}});
  CHECK(batches(Dataset::range(0).batch(5)).empty());
}

TEST_CASE("batch stacks rows into a new axis 0 with every byte in place",
          "[datasets][dataset][transformations]") {
  const Tensor matrix =
    Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Shape{5, 2});
  const auto elements = elements_of(Dataset::from_tensor_slices(matrix).batch(2));
  REQUIRE(elements.size() == 3);
  CHECK(elements[0].tensor().shape() == Shape{2, 2});
  CHECK(elements[0] == Element(Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{2, 2})));
  CHECK(elements[1] == Element(Tensor::from_vector(std::vector<float>{5, 6, 7, 8}, Shape{2, 2})));
  CHECK(elements[2] == Element(Tensor::from_vector(std::vector<float>{9, 10}, Shape{1, 2})));
  // A batch owns its bytes (one copy), not a view of the source.
  CHECK_FALSE(elements[0].tensor().shares_buffer_with(matrix));

  // Batches of batches add another axis.
  const auto nested = elements_of(Dataset::from_tensor_slices(matrix).batch(2, true).batch(2));
  REQUIRE(nested.size() == 1);
  CHECK(nested[0].tensor().shape() == Shape{2, 2, 2});
  CHECK(nested[0].tensor().to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("batch stacks each component of tuple elements", "[datasets][dataset][transformations]") {
  const Tensor features = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{3, 2});
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{7, 8, 9});
  const auto ds = Dataset::from_tensor_slices(Element::tuple({features, labels})).batch(2);
  const auto elements = elements_of(ds);
  REQUIRE(elements.size() == 2);
  CHECK(elements[0]
        == Element::tuple({Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}),
                           Tensor::from_vector(std::vector<int64_t>{7, 8})}));
  CHECK(elements[1]
        == Element::tuple({Tensor::from_vector(std::vector<float>{5, 6}, Shape{1, 2}),
                           Tensor::from_vector(std::vector<int64_t>{9})}));
  CHECK(ds.element_spec().to_string()
        == "(TensorSpec(shape=(None, 2), dtype=float32), TensorSpec(shape=(None,), dtype=int64))");
}

TEST_CASE("batch's element_spec has batch dimension None unless drop_remainder",
          "[datasets][dataset][transformations]") {
  CHECK(Dataset::range(10).batch(4).element_spec().to_string()
        == "TensorSpec(shape=(None,), dtype=int64)");
  CHECK(Dataset::range(10).batch(4, true).element_spec().to_string()
        == "TensorSpec(shape=(4,), dtype=int64)");
  CHECK(Dataset::range(10).batch(4, true).batch(2).element_spec().to_string()
        == "TensorSpec(shape=(None, 4), dtype=int64)");
}

TEST_CASE("batch_size must be positive", "[datasets][dataset][transformations]") {
  REQUIRE_THROWS_WITH(Dataset::range(3).batch(0), Contains("batch_size must be positive, got 0"));
  REQUIRE_THROWS_WITH(Dataset::range(3).batch(-2), Contains("batch_size must be positive, got -2"));
  CHECK(error_code_of([] { (void)Dataset::range(3).batch(0); }) == Errc::invalid_argument);
}

TEST_CASE("batching elements of different shapes names both shapes and the fix",
          "[datasets][dataset][transformations]") {
  // Element 2 of the first batch is shorter.
  const auto ds = Dataset::range(4).map([](const Tensor& x) {
    return x.item<int64_t>() == 2 ? Tensor::zeros(Shape{2}, DType::int32)
                                  : Tensor::zeros(Shape{3}, DType::int32);
  });
  const auto run = [&] { (void)elements_of(ds.batch(4)); };
  REQUIRE_THROWS_WITH(run(), Contains("cannot batch tensors with different shapes in component 0")
                               && Contains("The first element had shape (3,) and element 2 had "
                                           "shape (2,)")
                               && Contains("pad or slice the elements to one shape with map()"));
  CHECK(error_code_of(run) == Errc::shape_mismatch);
  // Batches that do not mix the shapes are fine.
  CHECK(elements_of(ds.batch(1)).size() == 4);
}

TEST_CASE("batching elements of different dtypes or structures is an error",
          "[datasets][dataset][transformations]") {
  const auto mixed_dtypes = Dataset::range(3).map(
    [](const Tensor& x) { return x.item<int64_t>() == 1 ? Tensor(1.0f) : Tensor(int32_t{1}); });
  const auto run_dtypes = [&] { (void)elements_of(mixed_dtypes.batch(3)); };
  REQUIRE_THROWS_WITH(run_dtypes(), Contains("different dtypes in component 0")
                                      && Contains("first element had dtype int32 and element 1 "
                                                  "had dtype float32"));
  CHECK(error_code_of(run_dtypes) == Errc::dtype_mismatch);

  const auto mixed_structure = Dataset::range(3).map([](const Tensor& x) {
    return x.item<int64_t>() == 1 ? Element::tuple({x, x}) : Element(x);
  });
  const auto run_structure = [&] { (void)elements_of(mixed_structure.batch(3)); };
  REQUIRE_THROWS_WITH(run_structure(), Contains("different structures")
                                         && Contains("The first element was a tensor and element "
                                                     "1 was a tuple of 2 tensors"));
  CHECK(error_code_of(run_structure) == Errc::invalid_argument);
}

TEST_CASE("batch describes itself and exposes its parameters",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(6).batch(4);
  CHECK(ds.describe() == "range(0, 6, 1) -> batch(4, drop_remainder=false)");
  const auto* node = dynamic_cast<const internal::BatchDataset*>(ds.node().get());
  REQUIRE(node != nullptr);
  CHECK(node->batch_size() == 4);
  CHECK_FALSE(node->drop_remainder());
}

// -- shard
// ------------------------------------------------------------------------------------------

TEST_CASE("shard keeps every num_shards-th element from index",
          "[datasets][dataset][transformations]") {
  // The tf.data docstring example.
  const auto a = Dataset::range(10);
  CHECK(values(a.shard(3, 0)) == std::vector<int64_t>{0, 3, 6, 9});
  CHECK(values(a.shard(3, 1)) == std::vector<int64_t>{1, 4, 7});
  CHECK(values(a.shard(3, 2)) == std::vector<int64_t>{2, 5, 8});
  CHECK(values(a.shard(1, 0)) == iota(10));
  CHECK(values(Dataset::range(2).shard(4, 3)).empty());
  CHECK(a.shard(3, 1).describe() == "range(0, 10, 1) -> shard(3, index=1)");
  CHECK(a.shard(3, 1).element_spec() == a.element_spec());
}

TEST_CASE("shard refuses an index outside 0..num_shards-1",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(10);
  REQUIRE_THROWS_WITH(ds.shard(4, 4), Contains("shard: index 4 is out of range for num_shards 4")
                                        && Contains("0 <= index < num_shards (0..3)"));
  REQUIRE_THROWS_WITH(ds.shard(4, -1), Contains("index -1 is out of range for num_shards 4"));
  REQUIRE_THROWS_WITH(ds.shard(0, 0), Contains("shard: num_shards must be positive, got 0"));
  CHECK(error_code_of([&] { (void)ds.shard(4, 4); }) == Errc::invalid_argument);
  CHECK(error_code_of([&] { (void)ds.shard(4, -1); }) == Errc::invalid_argument);
  CHECK(error_code_of([&] { (void)ds.shard(0, 0); }) == Errc::invalid_argument);
}

// -- repeat
// -------------------------------------------------------------------------------------------

TEST_CASE("repeat replays the dataset count times", "[datasets][dataset][transformations]") {
  // tf.data.Dataset.from_tensor_slices([1, 2, 3]).repeat(3)
  const auto ds = Dataset::from_tensor_slices(Tensor::from_vector(std::vector<int64_t>{1, 2, 3}));
  CHECK(values(ds.repeat(3)) == std::vector<int64_t>{1, 2, 3, 1, 2, 3, 1, 2, 3});
  CHECK(values(ds.repeat(1)) == std::vector<int64_t>{1, 2, 3});
  CHECK(values(ds.repeat(0)).empty());
  CHECK(values(ds.repeat().take(7)) == std::vector<int64_t>{1, 2, 3, 1, 2, 3, 1});
  CHECK(values(ds.repeat(-1).take(4)) == std::vector<int64_t>{1, 2, 3, 1});
  CHECK(ds.repeat(3).describe()
        == "from_tensor_slices(TensorSpec(shape=(3,), dtype=int64)) -> repeat(3)");
  CHECK(ds.repeat().describe().ends_with("repeat(-1)"));
}

TEST_CASE("repeat makes a fresh input iterator for every pass",
          "[datasets][dataset][transformations]") {
  int passes = 0;
  const auto ds = Dataset::range(2).map([&passes](const Tensor& x) {
    if (x.item<int64_t>() == 0)
      ++passes;
    return x;
  });
  CHECK(values(ds.repeat(3)) == std::vector<int64_t>{0, 1, 0, 1, 0, 1});
  CHECK(passes == 3);
}

TEST_CASE("repeating an empty dataset forever ends", "[datasets][dataset][transformations]") {
  CHECK(values(Dataset::range(0).repeat()).empty());
  CHECK(values(Dataset::range(5).filter([](const Tensor&) { return false; }).repeat()).empty());
}

// -- shuffle
// ------------------------------------------------------------------------------------------

TEST_CASE("shuffle with a seed gives the same order run to run",
          "[datasets][dataset][transformations]") {
  const auto a = values(Dataset::range(100).shuffle(100, 42));
  const auto b = values(Dataset::range(100).shuffle(100, 42));
  CHECK(a == b);
  CHECK(is_permutation_of_iota(a, 100));
  CHECK(a != iota(100));
  const auto c = values(Dataset::range(100).shuffle(100, 43));
  CHECK(is_permutation_of_iota(c, 100));
  CHECK(c != a);
}

TEST_CASE("shuffle reshuffles every pass unless told not to",
          "[datasets][dataset][transformations]") {
  // tf.data's docstring: range(3).shuffle(3, reshuffle_each_iteration=...).repeat(2)
  SECTION("reshuffle_each_iteration=true") {
    const auto all = values(Dataset::range(20).shuffle(20, 7, true).repeat(2));
    REQUIRE(all.size() == 40);
    const std::vector<int64_t> first(all.begin(), all.begin() + 20);
    const std::vector<int64_t> second(all.begin() + 20, all.end());
    CHECK(is_permutation_of_iota(first, 20));
    CHECK(is_permutation_of_iota(second, 20));
    CHECK(first != second);
    // Deterministic with the seed: the same sequence of passes every run.
    CHECK(values(Dataset::range(20).shuffle(20, 7, true).repeat(2)) == all);
  }
  SECTION("reshuffle_each_iteration=false") {
    const auto all = values(Dataset::range(20).shuffle(20, 7, false).repeat(2));
    REQUIRE(all.size() == 40);
    const std::vector<int64_t> first(all.begin(), all.begin() + 20);
    const std::vector<int64_t> second(all.begin() + 20, all.end());
    CHECK(is_permutation_of_iota(first, 20));
    CHECK(first == second);
  }
  SECTION("iterating one dataset twice also reshuffles") {
    const auto ds = Dataset::range(20).shuffle(20, 7);
    const auto first = values(ds);
    const auto second = values(ds);
    CHECK(first != second);
    const auto fixed = Dataset::range(20).shuffle(20, 7, false);
    CHECK(values(fixed) == values(fixed));
  }
  SECTION("without a seed") {
    const auto ds = Dataset::range(50).shuffle(50, std::nullopt, false);
    const auto first = values(ds);
    CHECK(is_permutation_of_iota(first, 50));
    CHECK(values(ds) == first);
    CHECK(is_permutation_of_iota(values(Dataset::range(50).shuffle(50)), 50));
  }
}

TEST_CASE("shuffle draws each output from the next buffer_size inputs",
          "[datasets][dataset][transformations]") {
  // With a buffer of b, output k is one of inputs 0 .. k + b - 1.
  for (const int64_t buffer : {1, 2, 5, 64}) {
    const auto out = values(Dataset::range(64).shuffle(buffer, 3));
    REQUIRE(is_permutation_of_iota(out, 64));
    for (std::size_t k = 0; k < out.size(); ++k)
      CHECK(out[k] < static_cast<int64_t>(k) + buffer);
    if (buffer == 1)
      CHECK(out == iota(64));
  }
}

TEST_CASE("asking for the element_spec does not change a seeded order",
          "[datasets][dataset][transformations]") {
  const auto make = [] {
    return Dataset::range(20).shuffle(20, 11).map([](const Tensor& x) { return x; });
  };
  const auto peeked = make();
  CHECK(peeked.element_spec().to_string() == "TensorSpec(shape=(), dtype=int64)");
  CHECK(values(peeked) == values(make()));
}

TEST_CASE("shuffle refuses a buffer_size that is not positive",
          "[datasets][dataset][transformations]") {
  REQUIRE_THROWS_WITH(Dataset::range(3).shuffle(0),
                      Contains("shuffle: buffer_size must be positive, got 0"));
  REQUIRE_THROWS_WITH(Dataset::range(3).shuffle(-1), Contains("got -1"));
  CHECK(error_code_of([] { (void)Dataset::range(3).shuffle(0); }) == Errc::invalid_argument);
}

TEST_CASE("shuffle keeps tuple elements whole and describes itself",
          "[datasets][dataset][transformations]") {
  const Tensor x = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 3, 4});
  const Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 10, 20, 30, 40});
  const auto ds = Dataset::from_tensor_slices(Element::tuple({x, y})).shuffle(5, 1);
  for (const Element& e : ds)
    CHECK(e[1].item<int64_t>() == 10 * e[0].item<int64_t>());
  CHECK(ds.element_spec().to_string()
        == "(TensorSpec(shape=(), dtype=int64), TensorSpec(shape=(), dtype=int64))");
  CHECK(Dataset::range(3).shuffle(8, 5).describe()
        == "range(0, 3, 1) -> shuffle(8, seed=5, reshuffle_each_iteration=true)");
  CHECK(Dataset::range(3).shuffle(8, std::nullopt, false).describe()
        == "range(0, 3, 1) -> shuffle(8, seed=None, reshuffle_each_iteration=false)");
}

// -- map
// ------------------------------------------------------------------------------------------------

TEST_CASE("map applies a Tensor function", "[datasets][dataset][transformations]") {
  // tf.data.Dataset.range(1, 6).map(lambda x: x + 1) -> [2, 3, 4, 5, 6]
  const auto ds = Dataset::range(1, 6).map([](const Tensor& x) { return x + 1; });
  CHECK(values(ds) == std::vector<int64_t>{2, 3, 4, 5, 6});
  CHECK(ds.describe() == "range(1, 6, 1) -> map(fn)");
}

TEST_CASE("map applies an Element function", "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(3).map([](const Element& e) {
    return Element::tuple({e.tensor(), e.tensor() * 10});
  });
  const auto elements = elements_of(ds);
  REQUIRE(elements.size() == 3);
  CHECK(elements[2] == Element::tuple({Tensor(int64_t{2}), Tensor(int64_t{20})}));
  CHECK(ds.element_spec().to_string()
        == "(TensorSpec(shape=(), dtype=int64), TensorSpec(shape=(), dtype=int64))");
}

TEST_CASE("map calls an (x, y) function with the tuple's components",
          "[datasets][dataset][transformations]") {
  const Tensor features = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{5, 6});
  const auto ds =
    Dataset::from_tensor_slices(Element::tuple({features, labels}))
      .map([](const Tensor& x, const Tensor& y) { return std::make_tuple(x * 2.0f, y); });
  const auto elements = elements_of(ds);
  REQUIRE(elements.size() == 2);
  CHECK(elements[0]
        == Element::tuple({Tensor::from_vector(std::vector<float>{2, 4}), Tensor(int64_t{5})}));
  CHECK(elements[1]
        == Element::tuple({Tensor::from_vector(std::vector<float>{6, 8}), Tensor(int64_t{6})}));

  const auto three =
    Dataset::from_tensors(Element::tuple({Tensor(1.0f), Tensor(2.0f), Tensor(3.0f)}))
      .map([](const Tensor& a, const Tensor& b, const Tensor& c) { return a + b + c; });
  CHECK(elements_of(three).at(0) == Element(Tensor(6.0f)));
}

TEST_CASE("map accepts functions returning C++ scalars", "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(3).map([](const Tensor& x) { return x.item<double>() / 2; });
  const auto elements = elements_of(ds);
  REQUIRE(elements.size() == 3);
  CHECK(elements[1] == Element(Tensor(0.5)));
  CHECK(ds.element_spec().to_string() == "TensorSpec(shape=(), dtype=float64)");
}

TEST_CASE("map learns its element_spec from the first element",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(3).map([](const Tensor& x) {
    return Tensor::full(Shape{2, 3}, x.item<double>(), DType::float32);
  });
  CHECK(ds.element_spec().to_string() == "TensorSpec(shape=(2, 3), dtype=float32)");
  CHECK(ds.batch(2).element_spec().to_string() == "TensorSpec(shape=(None, 2, 3), dtype=float32)");

  const auto empty = Dataset::range(0).map([](const Tensor& x) { return x; });
  REQUIRE_THROWS_WITH(empty.element_spec(),
                      Contains("cannot infer the element spec of `range(0, 0, 1) -> map(fn)`")
                        && Contains("produced no elements"));
  CHECK(error_code_of([&] { (void)empty.element_spec(); }) == Errc::invalid_argument);
}

TEST_CASE("exceptions from map and filter functions propagate unchanged",
          "[datasets][dataset][transformations]") {
  struct Boom : std::runtime_error {
    Boom() : std::runtime_error("boom at 2") {}
  };
  const auto mapped = Dataset::range(5).map([](const Tensor& x) {
    if (x.item<int64_t>() == 2)
      throw Boom{};
    return x;
  });
  std::vector<int64_t> seen;
  REQUIRE_THROWS_AS(
    [&] {
      for (const Element& e : mapped)
        seen.push_back(e.tensor().item<int64_t>());
    }(),
    Boom);
  CHECK(seen == std::vector<int64_t>{0, 1});

  const auto filtered = Dataset::range(5).filter([](const Tensor& x) -> bool {
    if (x.item<int64_t>() == 3)
      throw std::logic_error("bad predicate");
    return true;
  });
  REQUIRE_THROWS_AS(values(filtered), std::logic_error);
  REQUIRE_THROWS_WITH(values(filtered), "bad predicate");
}

TEST_CASE("a Tensor function over tuple elements names the fix",
          "[datasets][dataset][transformations]") {
  const auto ds =
    Dataset::from_tensors(Element::tuple({Tensor(1.0f), Tensor(2.0f)})).map([](const Tensor& x) {
      return x;
    });
  REQUIRE_THROWS_WITH(elements_of(ds), Contains("this element is a tuple of 2 tensors; index it"));
}

// -- filter
// ---------------------------------------------------------------------------------------------

TEST_CASE("filter keeps elements whose predicate is true", "[datasets][dataset][transformations]") {
  // tf.data.Dataset.from_tensor_slices([1, 2, 3]).filter(lambda x: x < 3) -> [1, 2]
  const auto ds = Dataset::from_tensor_slices(Tensor::from_vector(std::vector<int64_t>{1, 2, 3}));
  SECTION("a bool predicate") {
    CHECK(values(ds.filter([](const Tensor& x) { return x.item<int64_t>() < 3; }))
          == std::vector<int64_t>{1, 2});
  }
  SECTION("a bool scalar tensor predicate") {
    const auto kept = ds.filter([](const Tensor& x) { return Tensor(x.item<int64_t>() < 3); });
    CHECK(values(kept) == std::vector<int64_t>{1, 2});
    CHECK(kept.element_spec() == ds.element_spec());
    CHECK(kept.describe().ends_with(" -> filter(predicate)"));
  }
  SECTION("a tuple predicate") {
    const auto pairs = Dataset::range(6).map(
      [](const Tensor& x) { return std::make_tuple(x, Tensor(x.item<int64_t>() % 2 == 0)); });
    const auto even = pairs.filter([](const Tensor&, const Tensor& is_even) { return is_even; });
    std::vector<int64_t> kept;
    for (const Element& e : even)
      kept.push_back(e[0].item<int64_t>());
    CHECK(kept == std::vector<int64_t>{0, 2, 4});
  }
}

TEST_CASE("a filter predicate that is no bool scalar names its dtype and shape",
          "[datasets][dataset][transformations]") {
  const auto wrong_dtype = Dataset::range(3).filter([](const Tensor& x) { return x; });
  REQUIRE_THROWS_WITH(values(wrong_dtype), Contains("must return a bool or a bool scalar tensor")
                                             && Contains("a tensor of dtype int64 and shape ()"));
  CHECK(error_code_of([&] { (void)values(wrong_dtype); }) == Errc::invalid_argument);

  const auto wrong_shape = Dataset::range(3).filter([](const Tensor&) {
    return Tensor::from_vector(std::vector<bool>{true, false});
  });
  REQUIRE_THROWS_WITH(values(wrong_shape), Contains("a tensor of dtype bool and shape (2,)"));
  CHECK(detail::predicate_value(Tensor(true)));
  CHECK_FALSE(detail::predicate_value(Tensor(false)));
  REQUIRE_THROWS_WITH(detail::predicate_value(Tensor()), Contains("an empty Tensor handle"));
}

// -- take and skip
// ------------------------------------------------------------------------------------

TEST_CASE("take keeps the first count elements and -1 keeps all",
          "[datasets][dataset][transformations]") {
  CHECK(values(Dataset::range(10).take(3)) == std::vector<int64_t>{0, 1, 2});
  CHECK(values(Dataset::range(10).take(-1)) == iota(10));
  CHECK(values(Dataset::range(10).take(0)).empty());
  CHECK(values(Dataset::range(3).take(10)) == std::vector<int64_t>{0, 1, 2});
  CHECK(Dataset::range(10).take(3).describe() == "range(0, 10, 1) -> take(3)");
}

TEST_CASE("skip drops the first count elements and -1 drops all",
          "[datasets][dataset][transformations]") {
  CHECK(values(Dataset::range(10).skip(7)) == std::vector<int64_t>{7, 8, 9});
  CHECK(values(Dataset::range(10).skip(-1)).empty());
  CHECK(values(Dataset::range(10).skip(0)) == iota(10));
  CHECK(values(Dataset::range(3).skip(10)).empty());
  CHECK(values(Dataset::range(10).skip(2).take(3)) == std::vector<int64_t>{2, 3, 4});
  CHECK(Dataset::range(10).skip(7).describe() == "range(0, 10, 1) -> skip(7)");
  CHECK(Dataset::range(10).skip(7).element_spec() == Dataset::range(1).element_spec());
}

// -- enumerate
// ----------------------------------------------------------------------------------------

TEST_CASE("enumerate pairs each element with an int64 index",
          "[datasets][dataset][transformations]") {
  // tf.data.Dataset.from_tensor_slices([1, 2, 3]).enumerate(start=5) -> (5, 1), (6, 2), (7, 3)
  const auto ds = Dataset::from_tensor_slices(int32s({1, 2, 3})).enumerate(5);
  const auto elements = elements_of(ds);
  REQUIRE(elements.size() == 3);
  for (int32_t i = 0; i < 3; ++i)
    CHECK(elements[static_cast<std::size_t>(i)]
          == Element::tuple({Tensor(int64_t{5 + i}), Tensor(int32_t{1 + i})}));
  CHECK(ds.element_spec().to_string()
        == "(TensorSpec(shape=(), dtype=int64), TensorSpec(shape=(), dtype=int32))");
  CHECK(ds.describe().ends_with(" -> enumerate(start=5)"));
  CHECK(elements_of(Dataset::range(2).enumerate()).at(1)
        == Element::tuple({Tensor(int64_t{1}), Tensor(int64_t{1})}));
}

TEST_CASE("enumerate flattens a tuple element into (index, a, b)",
          "[datasets][dataset][transformations]") {
  // TensorFlow yields (0, (7, 9)), (1, (8, 10)); an Element cannot nest.
  const auto ds =
    Dataset::from_tensor_slices(Element::tuple({int32s({7, 8}), int32s({9, 10})})).enumerate();
  const auto elements = elements_of(ds);
  REQUIRE(elements.size() == 2);
  CHECK(elements[0]
        == Element::tuple({Tensor(int64_t{0}), Tensor(int32_t{7}), Tensor(int32_t{9})}));
  CHECK(elements[1]
        == Element::tuple({Tensor(int64_t{1}), Tensor(int32_t{8}), Tensor(int32_t{10})}));
  CHECK(ds.element_spec().components.size() == 3);
}

// -- prefetch
// -------------------------------------------------------------------------------------------

TEST_CASE("prefetch passes elements through on the calling thread",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(5).prefetch(3);
  CHECK(values(ds) == iota(5));
  CHECK(ds.element_spec() == Dataset::range(5).element_spec());
  CHECK(ds.describe() == "range(0, 5, 1) -> prefetch(3)");
  const auto* node = dynamic_cast<const internal::PrefetchDataset*>(ds.node().get());
  REQUIRE(node != nullptr);
  CHECK(node->buffer_size() == 3);
}

TEST_CASE("prefetch(-1) is AUTOTUNE and other sizes below 1 are refused",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(5).prefetch(-1);
  const auto* node = dynamic_cast<const internal::PrefetchDataset*>(ds.node().get());
  REQUIRE(node != nullptr);
  CHECK(node->buffer_size() == 2);
  CHECK(node->requested_buffer_size() == internal::PrefetchDataset::kAutotune);
  CHECK(ds.describe() == "range(0, 5, 1) -> prefetch(AUTOTUNE)");
  CHECK(values(ds) == iota(5));
  REQUIRE_THROWS_WITH(
    Dataset::range(5).prefetch(0),
    Contains("prefetch: buffer_size must be positive, or -1 for AUTOTUNE, got 0"));
  REQUIRE_THROWS_WITH(Dataset::range(5).prefetch(-2), Contains("got -2"));
  CHECK(error_code_of([] { (void)Dataset::range(5).prefetch(0); }) == Errc::invalid_argument);
}

// -- with_options
// ------------------------------------------------------------------------------------

TEST_CASE("with_options attaches options for the dataset and its consumers",
          "[datasets][dataset][transformations]") {
  DatasetOptions data;
  data.auto_shard_policy = AutoShardPolicy::DATA;
  const auto ds = Dataset::range(4).with_options(data);
  CHECK(ds.options().auto_shard_policy == AutoShardPolicy::DATA);
  CHECK(ds.batch(2).map([](const Tensor& x) { return x; }).options().auto_shard_policy
        == AutoShardPolicy::DATA);
  CHECK(values(ds) == iota(4));
  CHECK(ds.element_spec() == Dataset::range(4).element_spec());
  CHECK(ds.describe()
        == "range(0, 4, 1) -> with_options(auto_shard_policy=DATA, deterministic=true)");

  DatasetOptions off;
  off.auto_shard_policy = AutoShardPolicy::OFF;
  off.deterministic = false;
  const auto overridden = ds.batch(2).with_options(off);
  CHECK(overridden.options().auto_shard_policy == AutoShardPolicy::OFF);
  CHECK_FALSE(overridden.options().deterministic);
  // The input keeps its own.
  CHECK(ds.options().auto_shard_policy == AutoShardPolicy::DATA);
}

// -- pipelines
// ------------------------------------------------------------------------------------------

TEST_CASE("describe names the whole pipeline, source first",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(100)
                    .shuffle(10, 1)
                    .map([](const Tensor& x) { return x * 2; })
                    .filter([](const Tensor&) { return true; })
                    .batch(4, true)
                    .repeat(2)
                    .prefetch(1);
  CHECK(ds.describe()
        == "range(0, 100, 1) -> shuffle(10, seed=1, reshuffle_each_iteration=true) -> map(fn) "
           "-> filter(predicate) -> batch(4, drop_remainder=true) -> repeat(2) -> prefetch(1)");
  CHECK(ds.element_spec().to_string() == "TensorSpec(shape=(4,), dtype=int64)");
}

TEST_CASE("with_input rebuilds a transformation over another input",
          "[datasets][dataset][transformations]") {
  // Insert shard(2, 1) between the source and batch, as FILE/DATA auto-sharding does.
  const auto original = Dataset::range(10).batch(2);
  const auto& batch = original.node();
  const auto sharded_source = Dataset(batch->input()).shard(2, 1);
  const Dataset rewritten(batch->with_input(sharded_source.node()));
  CHECK(rewritten.describe()
        == "range(0, 10, 1) -> shard(2, index=1) -> batch(2, drop_remainder=false)");
  CHECK(batches(rewritten) == std::vector<std::vector<int64_t>>{{1, 3}, {5, 7}, {9}});
  // The original is untouched.
  CHECK(batches(original)
        == std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}});

  // Every transformation can be rebuilt, keeping its parameters.
  DatasetOptions options;
  options.auto_shard_policy = AutoShardPolicy::OFF;
  const auto other = Dataset::range(3, 9).node();
  for (const Dataset& ds :
       {Dataset::range(6).batch(2, true), Dataset::range(6).shard(2, 0),
        Dataset::range(6).repeat(2), Dataset::range(6).shuffle(4, 9),
        Dataset::range(6).map([](const Tensor& x) { return x + 1; }),
        Dataset::range(6).filter([](const Tensor& x) { return x.item<int64_t>() % 2 == 0; }),
        Dataset::range(6).take(2), Dataset::range(6).skip(2), Dataset::range(6).enumerate(3),
        Dataset::range(6).prefetch(2), Dataset::range(6).with_options(options)}) {
    const Dataset moved(ds.node()->with_input(other));
    CHECK(moved.node()->input() == other);
    CHECK(moved.node()->describe() == ds.node()->describe());
    const Dataset expected = Dataset(ds.node()->with_input(other));
    CHECK(elements_of(moved) == elements_of(expected));
  }
}

TEST_CASE("the unseeded shuffle keeps its order through with_input when not reshuffling",
          "[datasets][dataset][transformations]") {
  const auto ds = Dataset::range(30).shuffle(30, std::nullopt, false);
  const Dataset moved(ds.node()->with_input(Dataset::range(30).node()));
  CHECK(values(moved) == values(ds));
}

TEST_CASE("stack_elements copies each element once into the batch",
          "[datasets][dataset][transformations]") {
  const std::vector<Element> elements{Element(int32s({1, 2})), Element(int32s({3, 4})),
                                      Element(int32s({5, 6}))};
  const Element stacked = internal::stack_elements(elements);
  CHECK(stacked
        == Element(Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{3, 2})));
  const std::vector<Element> scalars{Element(Tensor(true)), Element(Tensor(false))};
  CHECK(internal::stack_elements(scalars)
        == Element(Tensor::from_vector(std::vector<bool>{true, false})));
}
