#include <atomic>
#include <chrono>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include <support/error_code_of.hpp>
#include <support/runtime_modes.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::cpu_devices;
using troupe::testing::error_code_of;
using troupe::testing::make_runtime;

namespace {

using Steps = std::vector<std::vector<std::vector<int64_t>>>;

Steps steps_of(DistributedDataset& dist) {
  Steps out;
  for (const auto& x : dist) {
    std::vector<std::vector<int64_t>> step;
    for (const auto& e : x.values())
      step.push_back(e.tensor().to_vector<int64_t>());
    out.push_back(step);
  }
  return out;
}

} // namespace

TEST_CASE("the seed's distributed dataset example prints its values in every runtime mode",
          "[strategies][distributed_dataset]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 2);
  MirroredStrategy strategy(*rt, {"CPU:0", "CPU:1"});
  auto dist = strategy.experimental_distribute_dataset(Dataset::range(4).batch(2));
  std::vector<PerReplica<Tensor>> result;
  for (const auto& x : dist)
    result.push_back(strategy.run([](const Tensor& input) { return input * 2; }, x));
  std::ostringstream out;
  out << result;
  CHECK(out.str() == "[PerReplica:{\n"
                     "  0: <Tensor: shape=(1,), dtype=int64, value=[0]>,\n"
                     "  1: <Tensor: shape=(1,), dtype=int64, value=[2]>\n"
                     "}, PerReplica:{\n"
                     "  0: <Tensor: shape=(1,), dtype=int64, value=[4]>,\n"
                     "  1: <Tensor: shape=(1,), dtype=int64, value=[6]>\n"
                     "}]");
}

TEST_CASE("experimental_distribute_dataset reproduces TensorFlow's documented partial batches",
          "[strategies][distributed_dataset]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 5);
  {
    MirroredStrategy two(*rt, cpu_devices(2));
    auto dist = two.experimental_distribute_dataset(Dataset::range(6).batch(4));
    CHECK(steps_of(dist) == Steps{{{0, 1}, {2, 3}}, {{4}, {5}}});
  }
  {
    MirroredStrategy five(*rt, cpu_devices(5));
    auto dist = five.experimental_distribute_dataset(Dataset::range(4).batch(4));
    CHECK(steps_of(dist) == Steps{{{0}, {1}, {2}, {3}, {}}});
  }
  {
    MirroredStrategy three(*rt, cpu_devices(3));
    auto dist = three.experimental_distribute_dataset(Dataset::range(8).batch(4));
    CHECK(steps_of(dist) == Steps{{{0, 1}, {2, 3}, {}}, {{4, 5}, {6, 7}, {}}});
  }
}

TEST_CASE("a distributed iterator ends cleanly and says so when asked past the end",
          "[strategies][distributed_dataset]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto dist = strategy.experimental_distribute_dataset(Dataset::range(3).batch(2));
  CHECK(dist.element_spec().to_string() == "TensorSpec(shape=(None,), dtype=int64)");
  auto it = dist.begin(); // positioned on the first step
  auto second = it.get_next();
  CHECK(second[0].tensor().to_vector<int64_t>() == std::vector<int64_t>{2});
  CHECK(second[1].tensor().shape() == Shape{0});
  CHECK_FALSE(it.get_next_as_optional());
  CHECK_THROWS_WITH(it.get_next(), Contains("End of sequence"));
  // A second pass starts again from the beginning.
  CHECK(steps_of(dist).size() == 2);
}

TEST_CASE("an unbatched dataset cannot be distributed and the error says to batch it",
          "[strategies][distributed_dataset]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  CHECK_THROWS_WITH(strategy.experimental_distribute_dataset(Dataset::range(4)),
                    Contains("batch it by the global batch size first: dataset.batch(global_batch_size)"));
}

TEST_CASE("a pipeline error reaches the caller of get_next, every time", "[strategies][distributed_dataset]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto dataset = Dataset::range(8).map([](const Tensor& x) {
    if (x.item<int64_t>() == 4)
      throw std::runtime_error("bad record 4");
    return x;
  }).batch(2);
  auto dist = strategy.experimental_distribute_dataset(dataset);
  auto it = dist.begin();
  (void)it.get_next();
  CHECK_THROWS_WITH(it.get_next(), "bad record 4");
  CHECK_THROWS_WITH(it.get_next(), "bad record 4");
}

TEST_CASE("the input actor prefetches the next step while the replicas work", "[strategies][distributed_dataset]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  std::atomic<int> produced{0};
  auto dataset = Dataset::range(100).map([&](const Tensor& x) {
    ++produced;
    return x;
  }).batch(2);
  auto dist = strategy.experimental_distribute_dataset(dataset);
  // (Finding the element spec ran the map function once, as TensorFlow traces it.)
  const int before = produced.load();
  auto it = dist.begin(); // the first step (2 elements) is consumed
  // Without asking for more, the actor prepares one more step (bounded wait: 10 s)
  // and then stops: its buffer holds one step.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (produced.load() < before + 4 && std::chrono::steady_clock::now() < deadline) {
  }
  CHECK(produced.load() == before + 4);
}

TEST_CASE("the input actor's prefetching stops at its buffer of steps", "[strategies][distributed_dataset]") {
  // Under simulation, drain() runs every actor until none has work left: a
  // prefetcher that did not stop at its buffer would read all 100 elements.
  for (const int buffer_steps : {1, 3}) {
    CAPTURE(buffer_steps);
    Runtime rt(Simulation{.seed = 4, .logical_cpu_devices = 2});
    MirroredStrategy strategy(rt, cpu_devices(2));
    std::atomic<int> pulled{0};
    auto dataset = Dataset::range(100).map([&](const Tensor& x) {
      ++pulled;
      return x;
    }).batch(2);
    InputOptions options;
    options.experimental_per_replica_buffer_size = buffer_steps;
    auto dist = strategy.experimental_distribute_dataset(dataset, options);
    const int before = pulled.load(); // the element spec's probe
    auto it = dist.begin(); // consumes the first step: 2 elements
    rt.impl().drain();
    CHECK(pulled.load() == before + 2 * (1 + buffer_steps));
    for (int consumed = 2; consumed <= 4; ++consumed) {
      (void)it.get_next();
      rt.impl().drain();
      CHECK(pulled.load() == before + 2 * (consumed + buffer_steps));
    }
  }
}

TEST_CASE("get_next_steps takes n steps in one request and then keeps n ready ahead",
          "[strategies][distributed_dataset]") {
  Runtime rt(Simulation{.seed = 6, .logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  std::atomic<int> pulled{0};
  auto dataset = Dataset::range(22).map([&](const Tensor& x) {
    ++pulled;
    return x;
  }).batch(2);
  auto dist = strategy.experimental_distribute_dataset(dataset);
  const int before = pulled.load(); // the element spec's probe
  DistributedIterator it(dist);
  auto steps = it.get_next_steps(4);
  REQUIRE(steps.size() == 4);
  CHECK(steps[3][1][0].item<int64_t>() == 7);
  // After a request for 4 the input actor prepares the next 4 (8 elements) and stops.
  rt.impl().drain();
  CHECK(pulled.load() == before + 8 + 8);
  // 11 steps in all: 4, then 3 at the end, then none.
  CHECK(it.get_next_steps(4).size() == 4);
  auto last = it.get_next_steps(4);
  REQUIRE(last.size() == 3);
  CHECK(last[2][0][0].item<int64_t>() == 20);
  CHECK(it.get_next_steps(4).empty());
  CHECK(error_code_of([&] { (void)it.get_next_steps(0); }) == Errc::invalid_argument);
}

TEST_CASE("get_next_steps gives the steps before a pipeline error, then the error", "[strategies][distributed_dataset]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto dataset = Dataset::range(8).map([](const Tensor& x) {
    if (x.item<int64_t>() == 4)
      throw std::runtime_error("bad record 4");
    return x;
  }).batch(2);
  auto dist = strategy.experimental_distribute_dataset(dataset);
  DistributedIterator it(dist);
  CHECK(it.get_next_steps(3).size() == 2);
  CHECK_THROWS_WITH(it.get_next_steps(3), "bad record 4");
  CHECK_THROWS_WITH(it.get_next(), "bad record 4");
}

TEST_CASE("distribute_datasets_from_function gives each replica its own per-replica batch",
          "[strategies][distributed_dataset]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 2);
  MirroredStrategy strategy(*rt, cpu_devices(2));
  int calls = 0;
  auto dist = strategy.distribute_datasets_from_function([&](const InputContext& ctx) {
    ++calls;
    CHECK(ctx.num_input_pipelines() == 1);
    CHECK(ctx.input_pipeline_id() == 0);
    CHECK(ctx.num_replicas_in_sync() == 2);
    return Dataset::range(10).shard(ctx.num_input_pipelines(), ctx.input_pipeline_id())
      .batch(ctx.get_per_replica_batch_size(4));
  });
  CHECK(calls == 1);
  CHECK(steps_of(dist) == Steps{{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}, {{8, 9}, {}}});
}

TEST_CASE("get_per_replica_batch_size names an indivisible global batch", "[strategies][distributed_dataset]") {
  InputContext ctx(1, 0, 4);
  CHECK(ctx.get_per_replica_batch_size(256) == 64);
  CHECK_THROWS_WITH(ctx.get_per_replica_batch_size(30),
                    Contains("The `global_batch_size` 30 is not divisible by `num_replicas_in_sync` 4"));
}

TEST_CASE("a training-style loop sees every example exactly once", "[strategies][distributed_dataset]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 4);
  MirroredStrategy strategy(*rt, cpu_devices(4));
  auto dataset = Dataset::from_tensor_slices(Element::tuple({Tensor::from_vector<float>(std::vector<float>(37, 1.0f)),
                                                             Tensor::from_vector<int64_t>([] {
                                                               std::vector<int64_t> v(37);
                                                               for (int i = 0; i < 37; ++i) v[static_cast<size_t>(i)] = i;
                                                               return v;
                                                             }())}))
                   .batch(8);
  int64_t total = 0;
  float seen = 0;
  for (const auto& x : strategy.experimental_distribute_dataset(dataset)) {
    auto sums = strategy.run([](const Element& batch) {
      auto& ctx = get_replica_context();
      return ctx.all_reduce(ReduceOp::SUM, std::vector<Tensor>{reduce_sum(batch[0]), reduce_sum(batch[1])});
    }, x);
    seen += sums[0][0].item<float>();
    total += sums[1][0].item<int64_t>();
  }
  CHECK(seen == 37.0f);
  CHECK(total == 37 * 36 / 2);
}
