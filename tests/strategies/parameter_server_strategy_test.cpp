// ParameterServerStrategy and ClusterCoordinator on a cluster in this process
// (LocalCluster, threaded) and in the deterministic simulation: variable
// placement, scheduled functions on the workers' replicas, per-worker
// datasets, exactly-once updates when a worker is lost, and bad input.

#include <catch2/catch.hpp>

#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/ps/coordinator_handle.hpp>
#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/troupe.hpp>

#include "support/error_code_of.hpp"
#include "support/runtime_modes.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

std::unique_ptr<Runtime> make_cluster(const testing::RuntimeMode& mode, int workers, int ps, int devices = 1) {
  if (mode.simulate)
    return std::make_unique<Runtime>(
      Simulation{.seed = mode.seed, .workers = workers, .ps = ps, .devices_per_worker = devices});
  return std::make_unique<Runtime>(LocalCluster{.workers = workers, .ps = ps, .devices_per_worker = devices});
}

/// `initial` as a variable of `strategy`, created in its scope.
ShardedVariable variable_of(ParameterServerStrategy& strategy, const Tensor& initial, const std::string& name) {
  auto scope = strategy.scope();
  return strategy.create_variable(initial, {.name = name});
}

int64_t scalar_of(const Tensor& t) {
  return t.to_vector<int64_t>().at(0);
}

/// The index of the worker the calling scheduled function runs on.
int this_worker() {
  auto* worker = internal::WorkerContext::current();
  REQUIRE(worker != nullptr);
  return worker->worker_index();
}

} // namespace

TEST_CASE("ParameterServerStrategy refuses a cluster without ps or worker tasks with TensorFlow's words",
          "[strategies][parameter_server]") {
  {
    Runtime rt(LocalCluster{.workers = 1, .ps = 0});
    CHECK(error_message_of([&] { ParameterServerStrategy strategy(rt); }) == "There must be at least one ps.");
  }
  {
    Runtime rt(LocalCluster{.workers = 0, .ps = 1});
    CHECK(error_message_of([&] { ParameterServerStrategy strategy(rt); }) == "There must be at least one worker.");
  }
  {
    Runtime rt;
    CHECK_THAT(error_message_of([&] { ParameterServerStrategy strategy(rt); }),
               Contains("Cluster spec must be non-empty") && Contains("LocalCluster"));
  }
  CHECK_THAT(error_message_of([] { Runtime rt(LocalCluster{.workers = 1, .ps = 1, .devices_per_worker = 0}); }),
             Contains("devices_per_worker"));
}

TEST_CASE("ParameterServerStrategy places variables round robin over the servers and shards with a partitioner",
          "[strategies][parameter_server]") {
  Runtime rt(LocalCluster{.workers = 1, .ps = 2, .devices_per_worker = 2});
  ParameterServerStrategy strategy(rt, Partitioner{FixedShardsPartitioner(2)});
  CHECK(strategy.num_replicas_in_sync() == 2);
  CHECK(strategy.num_ps() == 2);
  ShardedVariable a{nullptr}, b{nullptr}, c{nullptr};
  {
    auto scope = strategy.scope();
    a = strategy.create_variable(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5}), {.name = "a"});
    b = strategy.create_variable(Tensor(int64_t{7}), {.name = "a"});
    c = strategy.create_variable(Tensor::from_vector<int64_t>({1, 2, 3}));
  }
  CHECK(a.name() == "a");
  CHECK(b.name() == "a_1");
  CHECK(c.name() == "Variable");
  REQUIRE(a.num_shards() == 2);
  CHECK(a.shard(0).shape() == Shape{3});
  CHECK(a.shard(0).device().to_string() == "/job:ps/replica:0/task:0/device:CPU:0");
  CHECK(a.shard(1).device().to_string() == "/job:ps/replica:0/task:1/device:CPU:0");
  REQUIRE(b.num_shards() == 1); // scalars are never split
  CHECK(b.shard(0).device().to_string() == "/job:ps/replica:0/task:0/device:CPU:0");
  CHECK(c.shard(0).device().to_string() == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(a.read_value().to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4, 5});
  // Outside the scope, and through Strategy& (which would make a mirrored variable), creation is refused.
  CHECK(error_code_of([&] { (void) strategy.create_variable(Tensor(int64_t{1})); }) == Errc::failed_precondition);
  Strategy& base = strategy;
  auto scope = strategy.scope();
  CHECK_THAT(error_message_of([&] { (void) base.create_variable(Tensor(int64_t{1})); }),
             Contains("ShardedVariable"));
}

TEST_CASE("scheduled functions run the seed example on a worker's replicas", "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  // One worker with two devices runs its closures in order: the seed's values.
  auto rt = make_cluster(mode, 1, 1, 2);
  ParameterServerStrategy strategy(*rt);
  ClusterCoordinator coordinator(strategy);
  auto per_worker = coordinator.create_per_worker_dataset(
    [&](const InputContext&) { return strategy.experimental_distribute_dataset(Dataset::range(4).batch(2)); });
  auto iterators = per_worker.iterator();
  auto step = remote_function("ps_test_seed_step", [&](DistributedIterator& it) {
    return strategy.run([](const Tensor& x) { return x * 2; }, it.get_next());
  });
  auto first = coordinator.schedule(step, iterators);
  auto second = coordinator.schedule(step, iterators);
  auto past_the_end = coordinator.schedule(step, iterators);
  CHECK_THAT(error_message_of([&] { coordinator.join(); }), Contains("End of sequence"));
  CHECK(coordinator.done());
  const auto a = first.fetch();
  const auto b = second.fetch();
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  CHECK(std::vector<int64_t>{scalar_of(a[0]), scalar_of(a[1])} == std::vector<int64_t>{0, 2});
  CHECK(std::vector<int64_t>{scalar_of(b[0]), scalar_of(b[1])} == std::vector<int64_t>{4, 6});
  CHECK(error_code_of([&] { (void) past_the_end.fetch(); }) == Errc::out_of_range);
}

TEST_CASE("updates of scheduled functions add up on the servers, and a function reads its own updates",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 2, 2);
  ParameterServerStrategy strategy(*rt, Partitioner{FixedShardsPartitioner(2)});
  ClusterCoordinator coordinator(strategy);
  auto w = variable_of(strategy, Tensor::zeros({4}, DType::int64), "w");
  auto add = remote_function("ps_test_add", [&](int64_t k) {
    const auto before = w.read_value();
    w.assign_add(Tensor::full({4}, static_cast<double>(k), DType::int64));
    // Read-your-writes: this function sees its own staged update (and any
    // commits of other workers' functions meanwhile).
    const auto after = w.read_value();
    return scalar_of(after) - scalar_of(before);
  });
  std::vector<RemoteValue<int64_t>> deltas;
  int64_t sum = 0;
  for (int64_t k = 1; k <= 12; ++k) {
    deltas.push_back(coordinator.schedule(add, k));
    sum += k;
  }
  coordinator.join();
  // Other workers' functions may commit between a function's two reads.
  for (int64_t k = 1; k <= 12; ++k)
    CHECK(deltas[static_cast<std::size_t>(k - 1)].fetch() >= k);
  CHECK(w.read_value().to_vector<int64_t>() == std::vector<int64_t>(4, sum));
}

TEST_CASE("a worker lost in the middle of a function: the function runs again and its updates count once",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 2, 2);
  auto& cluster = *rt->impl().ps_cluster();
  ParameterServerStrategy strategy(*rt, Partitioner{FixedShardsPartitioner(2)});
  ClusterCoordinator coordinator(strategy);
  auto w = variable_of(strategy, Tensor::zeros({2}, DType::int64), "w");
  // The first attempt of the first function stages +1, tells the test where
  // it runs and waits at the gate; the test kills that worker, then opens the
  // gate, so the cut-off attempt stages +10 too, which must never count.
  auto staged = std::make_shared<internal::Completion>();
  auto gate = std::make_shared<internal::Completion>();
  auto victim = std::make_shared<int>(-1);
  auto attempts = std::make_shared<int>(0);
  auto step = remote_function("ps_test_step_once", [&, staged, gate, victim, attempts](int64_t id) {
    w.assign_add(Tensor::full({2}, 1.0, DType::int64));
    if (id == 0 && (*attempts)++ == 0) {
      *victim = this_worker();
      staged->set();
      rt->impl().wait(*gate, "the test's gate");
    }
    w.assign_add(Tensor::full({2}, 10.0, DType::int64));
    return id;
  });
  std::vector<RemoteValue<int64_t>> results;
  results.push_back(coordinator.schedule(step, int64_t{0}));
  rt->impl().wait(*staged, "the first attempt to stage its update");
  // The chief's flight recorder names the function that ran on the lost worker.
  std::mutex mutex;
  std::string block;
  set_log_sink([&](LogLevel, std::string_view line) {
    std::lock_guard<std::mutex> guard(mutex);
    if (line.find("flight recorder of chief:0 (worker ") != std::string_view::npos)
      block = std::string(line);
  });
  cluster.kill_worker(*victim, "killed by the test");
  gate->set();
  for (int64_t id = 1; id < 6; ++id)
    results.push_back(coordinator.schedule(step, id));
  coordinator.join();
  for (int64_t id = 0; id < 6; ++id)
    CHECK(results[static_cast<std::size_t>(id)].fetch() == id);
  CHECK(*attempts >= 2);
  // Six committed functions of +11 each: the cut-off attempt's +1 (and its
  // +10, if it got that far) are discarded.
  CHECK(w.read_value().to_vector<int64_t>() == std::vector<int64_t>(2, 66));
  set_log_sink(nullptr);
  std::lock_guard<std::mutex> guard(mutex);
  const auto worker = "/job:worker/replica:0/task:" + std::to_string(*victim);
  CHECK_THAT(block, Contains("flight recorder of chief:0 (worker " + worker + " was lost: killed by the test): the last 1 "
                             "scheduled functions")
                      && Contains("closure 1 attempt 1 ps_test_step_once on " + worker + ": lost with its worker after"));
}

TEST_CASE("a restarted worker gets work again and rebuilds its per-worker iterator",
          "[strategies][parameter_server]") {
  auto rt = make_cluster({true, 5}, 1, 1);
  auto& cluster = *rt->impl().ps_cluster();
  ParameterServerStrategy strategy(*rt);
  ClusterCoordinator coordinator(strategy);
  auto per_worker = coordinator.create_per_worker_dataset(
    [&](const InputContext&) { return strategy.experimental_distribute_dataset(Dataset::range(10).batch(1)); });
  auto iterators = per_worker.iterator();
  auto next = remote_function("ps_test_next", [&](DistributedIterator& it) { return scalar_of(it.get_next()[0]); });
  CHECK(coordinator.schedule(next, iterators).fetch() == 0);
  CHECK(coordinator.schedule(next, iterators).fetch() == 1);
  cluster.kill_worker(0, "killed by the test");
  cluster.restart_worker(0);
  // A new process has a new iterator: it starts again at the first element.
  CHECK(coordinator.schedule(next, iterators).fetch() == 0);
}

TEST_CASE("errors of scheduled functions: raised by join, later functions cancelled, bad arguments refused",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 1, 1);
  ParameterServerStrategy strategy(*rt);
  ClusterCoordinator coordinator(strategy);
  auto w = variable_of(strategy, Tensor::zeros({1}, DType::int64), "w");
  SECTION("a function that throws: its updates are discarded and join raises its error once") {
    auto gate = std::make_shared<internal::Completion>();
    auto throws = remote_function("ps_test_throws", [&, gate](int64_t) -> int64_t {
      w.assign_add(Tensor::full({1}, 5.0, DType::int64));
      rt->impl().wait(*gate, "the test's gate");
      throw std::runtime_error("the step diverged");
    });
    auto ok = remote_function("ps_test_ok", [](int64_t x) { return x; });
    auto failing = coordinator.schedule(throws, int64_t{1});
    auto cancelled = coordinator.schedule(ok, int64_t{2});
    gate->set();
    CHECK_THAT(error_message_of([&] { coordinator.join(); }), Contains("the step diverged"));
    CHECK(error_code_of([&] { (void) failing.fetch(); }) == Errc::unknown);
    CHECK(cancelled.status() == RemoteValueStatus::cancelled);
    CHECK(error_code_of([&] { (void) cancelled.fetch(); }) == Errc::cancelled);
    coordinator.join(); // raised once
    CHECK(w.read_value().to_vector<int64_t>() == std::vector<int64_t>{0});
    CHECK(coordinator.schedule(ok, int64_t{3}).fetch() == 3);
  }
  SECTION("creating a variable inside a scheduled function") {
    auto creates = remote_function("ps_test_creates", [&](int64_t) {
      auto scope = strategy.scope();
      (void) strategy.create_variable(Tensor(int64_t{1}));
      return int64_t{0};
    });
    auto rv = coordinator.schedule(creates, int64_t{0});
    CHECK_THAT(error_message_of([&] { coordinator.join(); }), Contains("inside a scheduled function"));
    CHECK(error_code_of([&] { (void) rv.fetch(); }) == Errc::failed_precondition);
  }
  SECTION("a RemoteValue passed as an argument") {
    auto twice = remote_function("ps_test_twice", [](int64_t x) { return 2 * x; });
    auto first = coordinator.schedule(twice, int64_t{4});
    CHECK_THAT(error_message_of([&] { (void) coordinator.schedule(twice, first); }),
               Contains("RemoteValue") && Contains("fetch()"));
    CHECK(coordinator.schedule(twice, first.fetch()).fetch() == 16);
  }
  SECTION("a handle of a function registered again under its name") {
    auto old_handle = remote_function("ps_test_renamed", [](int64_t x) { return x; });
    auto new_handle = remote_function("ps_test_renamed", [](int64_t x) { return x + 1; });
    CHECK_THAT(error_message_of([&] { (void) coordinator.schedule(old_handle, int64_t{1}); }),
               Contains("registered again"));
    CHECK(coordinator.schedule(new_handle, int64_t{1}).fetch() == 2);
  }
}

TEST_CASE("a NaN gradient caught by check_numerics fails its function naming the worker and the step, and "
          "changes nothing on the servers",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 2, 1);
  ParameterServerStrategy strategy(*rt);
  ClusterCoordinator coordinator(strategy);
  auto w = variable_of(strategy, Tensor::zeros({2}, DType::float32), "w");
  // Worker 1's gradients are NaN: the check ends its function before the update.
  auto step = remote_function("ps_test_nan_step", [&](int64_t id) {
    auto gradient = Tensor::full({2}, 1.0, DType::float32);
    if (this_worker() == 1)
      gradient = gradient * Tensor(std::numeric_limits<float>::quiet_NaN());
    w.assign_add(check_numerics(gradient, "the gradient at step " + std::to_string(id)));
    return id;
  });
  std::vector<RemoteValue<int64_t>> results;
  // Rounds of functions until worker 1 ran one (the coordinator adds the
  // workers asynchronously); its error is raised once, by a schedule or a join.
  const auto error = error_message_of([&] {
    for (int64_t id = 1; id <= 1000; ++id) {
      results.push_back(coordinator.schedule(step, id));
      if (id % 8 == 0)
        coordinator.join();
    }
  });
  CHECK_THAT(error, Contains("failed on worker /job:worker/replica:0/task:1: the gradient at step ")
                      && Contains(" : Tensor had NaN values"));
  // Only finite updates were applied: as many ones as functions that ran to the end.
  const auto value = w.read_value().to_vector<float>();
  int64_t finished = 0;
  for (auto& result : results)
    finished += result.status() == RemoteValueStatus::ready ? 1 : 0;
  CHECK(value == std::vector<float>(2, static_cast<float>(finished)));
}

TEST_CASE("a worker told to run a function this process never registered fails it naming the function",
          "[strategies][parameter_server]") {
  Runtime rt(LocalCluster{.workers = 1, .ps = 1});
  internal::CoordinatorHandle handle(rt.executor(), rt.impl().ps_cluster(), {});
  rt.impl().ps_cluster()->attach_coordinator(handle.actor());
  auto closure = handle.schedule(internal::ClosureSpec{"ps_test_never_registered", {}});
  CHECK_THAT(error_message_of([&] { handle.join(); }),
             Contains("'ps_test_never_registered' is not registered in worker /job:worker/replica:0/task:0")
               && Contains("remote_function"));
  CHECK(closure.outcome->code == Errc::not_found);
  rt.impl().ps_cluster()->detach_coordinator();
}

TEST_CASE("each function reads what the functions before it committed, no more",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 1, 1);
  ParameterServerStrategy strategy(*rt);
  ClusterCoordinator coordinator(strategy);
  auto v = variable_of(strategy, Tensor::zeros({4}, DType::float32), "v");
  // The read shares the server's buffer in one process: the commit of this
  // function's update must not change what it read.
  auto count = remote_function("ps_test_count", [&] {
    const Tensor value = v.read_value();
    v.assign_add(value * 0.0f + 1.0f);
    return value.data<float>()[0];
  });
  for (int i = 0; i < 5; ++i) {
    CHECK(coordinator.schedule(count).fetch() == static_cast<float>(i));
    CHECK(v.read_value().to_vector<float>() == std::vector<float>(4, static_cast<float>(i + 1)));
  }
}

TEST_CASE("an empty ShardedVariable handle fails its calls instead of crashing", "[strategies][parameter_server]") {
  ShardedVariable empty;
  CHECK_THAT(error_message_of([&] { (void) empty.read_value(); }), Contains("empty ShardedVariable"));
  CHECK(error_code_of([&] { (void) empty.name(); }) == Errc::failed_precondition);
  CHECK(error_code_of([&] { empty.assign_add(Tensor(int64_t{1})); }) == Errc::failed_precondition);
}

// -- several variables in one round trip (read_values, apply_adam, apply_momentum) --

namespace {

/// `scale` * (0, 1, 2, ...) - 1 of `shape`, float32: distinct values per element.
Tensor batch_ramp(Shape shape, float scale) {
  std::vector<float> values(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = scale * static_cast<float>(i) - 1.0f;
  return Tensor::from_vector<float>(values, std::move(shape));
}

/// A 4x3 and a 5-vector (both split over the 2 servers) and a scalar (one shard).
std::vector<ShardedVariable> three_variables(ParameterServerStrategy& strategy, const std::string& prefix) {
  auto scope = strategy.scope();
  return {strategy.create_variable(batch_ramp({4, 3}, 0.5f), {.name = prefix + "w"}),
          strategy.create_variable(batch_ramp({5}, 0.25f), {.name = prefix + "b"}),
          strategy.create_variable(Tensor(2.0f), {.name = prefix + "s"})};
}

std::vector<Tensor> three_gradients(float scale) {
  return {batch_ramp({4, 3}, 0.1f * scale), batch_ramp({5}, -0.2f * scale), Tensor(0.3f * scale)};
}

/// Values and optimizer slots of every variable, as the servers hold them.
std::vector<std::vector<float>> values_of(const std::vector<ShardedVariable>& variables) {
  std::vector<std::vector<float>> out;
  for (const auto& v : variables)
    out.push_back(v.read_value().to_vector<float>());
  return out;
}

std::vector<std::map<std::string, std::vector<double>>> slots_of(const std::vector<ShardedVariable>& variables) {
  std::vector<std::map<std::string, std::vector<double>>> out;
  for (const auto& v : variables) {
    auto& slots = out.emplace_back();
    for (const auto& [name, value] : v.read_slots())
      slots[name] = value.to_vector<double>();
  }
  return out;
}

} // namespace

TEST_CASE("read_values reads several sharded variables at once, as read_value does, with read-your-writes",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 1, 2);
  ParameterServerStrategy strategy(*rt, Partitioner{FixedShardsPartitioner(2)});
  ClusterCoordinator coordinator(strategy);
  auto variables = three_variables(strategy, "");
  REQUIRE(variables[0].num_shards() == 2);
  REQUIRE(variables[2].num_shards() == 1);
  const auto read = read_values(variables);
  REQUIRE(read.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(read[k].shape() == variables[k].shape());
    CHECK(read[k].to_vector<float>() == variables[k].read_value().to_vector<float>());
  }
  CHECK(read_values({}).empty());
  // Inside a function the batched read sees the function's own staged update.
  auto reads_own_update = remote_function("ps_test_read_values_own_update", [&] {
    variables[1].assign_add(Tensor::full({5}, 10.0, DType::float32));
    const auto batched = read_values(variables);
    bool same = true;
    for (std::size_t k = 0; k < 3; ++k)
      same = same && batched[k].to_vector<float>() == variables[k].read_value().to_vector<float>();
    return same ? batched[1].to_vector<float>()[4] : -1000.0f;
  });
  CHECK(coordinator.schedule(reads_own_update).fetch() == 0.25f * 4 - 1.0f + 10.0f);
  CHECK_THAT(error_message_of([&] { (void) read_values({variables[0], ShardedVariable{}}); }),
             Contains("read_values: variables[1] is an empty ShardedVariable"));
}

TEST_CASE("apply_adam and apply_momentum on several variables give bitwise what one call per variable gives",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 1, 2);
  ParameterServerStrategy strategy(*rt, Partitioner{FixedShardsPartitioner(2)});
  ClusterCoordinator coordinator(strategy);
  auto batched = three_variables(strategy, "batched_");
  auto single = three_variables(strategy, "single_");
  const AdamOptions adam{.learning_rate = 0.01};
  // Step 1 immediate, step 2 staged inside a scheduled function and committed once.
  apply_adam(batched, three_gradients(1.0f), adam);
  for (std::size_t k = 0; k < 3; ++k)
    single[k].apply_adam(three_gradients(1.0f)[k], adam);
  auto batched_step = remote_function("ps_test_batched_adam", [&] {
    apply_adam(batched, three_gradients(2.0f), adam);
    return int64_t{1};
  });
  auto single_step = remote_function("ps_test_single_adam", [&] {
    for (std::size_t k = 0; k < 3; ++k)
      single[k].apply_adam(three_gradients(2.0f)[k], adam);
    return int64_t{1};
  });
  CHECK(coordinator.schedule(batched_step).fetch() == 1);
  CHECK(coordinator.schedule(single_step).fetch() == 1);
  coordinator.join();
  CHECK(values_of(batched) == values_of(single));
  CHECK(slots_of(batched) == slots_of(single));
  CHECK(batched[0].read_slots().at("iterations").to_vector<int64_t>() == std::vector<int64_t>{2, 2});
  CHECK(batched[2].read_slots().at("iterations").to_vector<int64_t>() == std::vector<int64_t>{2});

  auto momentum_batched = three_variables(strategy, "momentum_batched_");
  auto momentum_single = three_variables(strategy, "momentum_single_");
  const MomentumOptions momentum{.learning_rate = 0.1, .momentum = 0.9};
  for (float step : {1.0f, -3.0f}) {
    apply_momentum(momentum_batched, three_gradients(step), momentum);
    for (std::size_t k = 0; k < 3; ++k)
      momentum_single[k].apply_momentum(three_gradients(step)[k], momentum);
  }
  CHECK(values_of(momentum_batched) == values_of(momentum_single));
  CHECK(slots_of(momentum_batched) == slots_of(momentum_single));
}

TEST_CASE("a batched optimizer step with a wrong count, shape or dtype changes nothing and names the variable",
          "[strategies][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 1, 2);
  ParameterServerStrategy strategy(*rt, Partitioner{FixedShardsPartitioner(2)});
  ClusterCoordinator coordinator(strategy);
  auto variables = three_variables(strategy, "");
  const auto before = values_of(variables);
  const AdamOptions adam{.learning_rate = 0.01};
  auto two = three_gradients(1.0f);
  two.pop_back();
  CHECK_THAT(error_message_of([&] { apply_adam(variables, two, adam); }),
             Contains("3 variables but 2 gradients") && Contains("'s' has no gradient"));
  CHECK_THAT(error_message_of([&] { apply_momentum({variables[0]}, three_gradients(1.0f), {}); }),
             Contains("gradients[1] has no variable") && Contains("'w'"));
  auto wrong_shape = three_gradients(1.0f);
  wrong_shape[2] = Tensor::zeros({2}, DType::float32);
  CHECK(error_code_of([&] { apply_adam(variables, wrong_shape, adam); }) == Errc::shape_mismatch);
  CHECK_THAT(error_message_of([&] { apply_adam(variables, wrong_shape, adam); }),
             Contains("ShardedVariable 's'") && Contains("(2,)"));
  auto wrong_dtype = three_gradients(1.0f);
  wrong_dtype[1] = Tensor::zeros({5}, DType::float64);
  CHECK_THAT(error_message_of([&] { apply_momentum(variables, wrong_dtype, {}); }),
             Contains("ShardedVariable 'b'") && Contains("float64"));
  CHECK(error_code_of([&] { apply_adam({variables[0], ShardedVariable{}}, two, adam); })
        == Errc::failed_precondition);
  // Inside a function: the step fails and stages nothing.
  auto bad_step = remote_function("ps_test_batched_bad_step", [&] {
    apply_adam(variables, wrong_shape, adam);
    return int64_t{1};
  });
  auto failed = coordinator.schedule(bad_step);
  CHECK_THAT(error_message_of([&] { coordinator.join(); }), Contains("ShardedVariable 's'"));
  CHECK(error_code_of([&] { (void) failed.fetch(); }) == Errc::shape_mismatch);
  CHECK(values_of(variables) == before);
  for (const auto& v : variables)
    CHECK(v.read_slots().empty());
}

TEST_CASE("functions scheduled one after another's end go round the idle workers, not always to the first",
          "[strategies][parameter_server]") {
  // Each function ends before the next is scheduled: the dispatch starts
  // after the worker that ran the last one, so every worker gets work (a
  // worker that never ran one could not be frozen in one, as the cluster
  // test "a worker frozen inside a scheduled function" needs).
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_cluster(mode, 3, 1, 1);
  ParameterServerStrategy strategy(*rt);
  ClusterCoordinator coordinator(strategy);
  auto where = remote_function("ps_test_where", [] { return static_cast<int64_t>(this_worker()); });
  std::vector<int64_t> workers;
  for (int i = 0; i < 6; ++i)
    workers.push_back(coordinator.schedule(where).fetch());
  CHECK(workers == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
}
