// One worker of the multi-process tests (tests/cluster/cluster_test.cpp),
// started by troupe-launch or by the test itself with a TF_CONFIG:
//   cluster_probe collectives [--replicas N]   every collective, every value checked
//   cluster_probe kill V | freeze V            worker V dies (SIGKILL) / stops (SIGSTOP)
//                                              in the middle of a step
//   cluster_probe mismatch | skip | timeout    worker 1 diverges
//   cluster_probe uneven | options             worker k runs k+1 replicas / worker 1
//                                              passes other CommunicationOptions:
//                                              the strategy's creation fails
//   cluster_probe check_same                   check_same_across_workers, equal values,
//                                              then a --batch that worker 1 gives otherwise
//   cluster_probe extra_strategy               the chief creates a second multi-worker
//                                              strategy that worker 1 never creates
//   cluster_probe eval_first                   the chief creates single-worker strategies
//                                              before its MultiWorkerMirroredStrategy
//   cluster_probe datasets                     distributed datasets across workers
//   cluster_probe join                         only join the cluster and leave
//   cluster_probe hold FILE                    join, then leave once FILE exists (at most 60 s)
//   cluster_probe finish                       many collectives, then exit at once
//   cluster_probe attacked FILE                all-reduces, each checked, until worker 0
//                                              sees FILE (at most 60 s), while the test
//                                              attacks the tasks' ports
//   cluster_probe variables [--replicas N]     NONE / ONLY_FIRST_REPLICA writes across workers
//   cluster_probe shuffle                      an unseeded shuffle distributed with DATA sharding
//   cluster_probe ps_worker_frozen | ps_chief_killed | ps_nan | ps_nan_caught
//                                              ParameterServerStrategy faults across
//                                              processes (ps_fault_scenarios.hpp)
//   cluster_probe ps_worker_rejoin FILE        a restarted worker (its pid in FILE) runs
//                                              functions again (ps_fault_scenarios.hpp)
//   cluster_probe members | ps_lost | ps_frozen  a parameter-server cluster (chief, workers,
//                                              ps): the members each task sees; ps:0 killed
//                                              or stopped (ps_cluster_scenarios.hpp)
// It prints "PROBE <what>" lines for the test to check and exits 0 when what
// it observed is what the scenario expects of it; a survivor of kill or
// freeze exits 10 instead, so that troupe-launch stops the stopped victim
// after its grace period rather than waiting for it.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <troupe/troupe.hpp>

#include "ps_cluster_scenarios.hpp"
#include "ps_fault_scenarios.hpp"
#include "support/event_wait.hpp"

using namespace troupe;

namespace {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

[[noreturn]] void wrong(const std::string& what) {
  std::cout << "PROBE WRONG " << what << std::endl;
  std::exit(1);
}

// Global replica g's input: distinct per replica and element, exact in float32.
Tensor input(int g, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((g + 1) * 1000 + i % 997);
  return Tensor::from_vector(v);
}

std::vector<float> expected_sum(int replicas, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), 0.0f);
  for (int g = 0; g < replicas; ++g)
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] += static_cast<float>((g + 1) * 1000 + i % 997);
  return out;
}

int collectives(Runtime& rt, int replicas) {
  MultiWorkerMirroredStrategy strategy(rt, CommunicationOptions{.bytes_per_pack = 4096});
  const int n = strategy.num_replicas_in_sync();
  const auto ids = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return Tensor(vc.replica_id_in_sync_group); });
  // 16 elements take halving-doubling; 300k (1.2 MB) the ring in many chunks.
  for (int64_t count : {int64_t{16}, int64_t{300000}}) {
    auto sums = strategy.run([count](const Tensor& id) {
      return get_replica_context().all_reduce(ReduceOp::SUM, input(id.item<int32_t>(), count));
    }, ids);
    for (const auto& t : strategy.experimental_local_results(sums))
      if (t.to_vector<float>() != expected_sum(n, count))
        wrong("all_reduce SUM of " + std::to_string(count) + " elements");
  }
  // all_reduce_in_place: the sum lands in each replica's own memory, which
  // the replica overwrites at once (as a framework's zero_grad would): a
  // link that still read it would send NaN to the others.
  for (int64_t count : {int64_t{16}, int64_t{300000}}) {
    std::vector<std::vector<float>> memory(static_cast<size_t>(n)), seen(static_cast<size_t>(n));
    std::vector<char> same_address(static_cast<size_t>(n), 0);
    strategy.run([&](const Tensor& id) {
      const auto g = static_cast<size_t>(id.item<int32_t>());
      auto& m = memory[g];
      m = input(static_cast<int>(g), count).to_vector<float>();
      const auto out = get_replica_context().all_reduce_in_place(
        ReduceOp::SUM, Tensor::from_external(m.data(), Shape{count}, DType::float32, {}));
      same_address[g] = out.raw_data() == reinterpret_cast<const std::byte*>(m.data());
      seen[g] = m;
      std::fill(m.begin(), m.end(), std::nanf(""));
      return id;
    }, ids);
    for (const auto& id : strategy.experimental_local_results(ids)) {
      const auto g = static_cast<size_t>(id.item<int32_t>());
      if (!same_address[g] || seen[g] != expected_sum(n, count))
        wrong("all_reduce_in_place SUM of " + std::to_string(count) + " elements");
    }
  }
  // MEAN of a mixed list: several packs, integer truncation.
  auto means = strategy.run([n](const Tensor& id) {
    const int g = id.item<int32_t>();
    return get_replica_context().all_reduce(
      ReduceOp::MEAN, std::vector<Tensor>{Tensor::full({3000}, 2.0 * g, DType::float64),
                                          Tensor::full({2}, g, DType::int32)});
  }, ids);
  for (const auto& replica : strategy.experimental_local_results(means)) {
    if (replica.at(0).to_vector<double>() != std::vector<double>(3000, static_cast<double>(n - 1)))
      wrong("all_reduce MEAN of float64");
    if (replica.at(1).to_vector<int32_t>() != std::vector<int32_t>(2, (n * (n - 1) / 2) / n))
      wrong("all_reduce MEAN of int32");
  }
  // all_gather with uneven blocks: replica g gives g+1 rows.
  auto gathered = strategy.run([](const Tensor& id) {
    const int g = id.item<int32_t>();
    return get_replica_context().all_gather(Tensor::full({g + 1, 2}, g, DType::int32), 0);
  }, ids);
  std::vector<int32_t> want;
  for (int g = 0; g < n; ++g)
    for (int row = 0; row <= g; ++row)
      want.insert(want.end(), {g, g});
  for (const auto& t : strategy.experimental_local_results(gathered))
    if (t.shape() != Shape{n * (n + 1) / 2, 2} || t.to_vector<int32_t>() != want)
      wrong("all_gather of uneven blocks");
  // all_gather of 1.2 MB per replica: past TROUPE_MAX_FRAME_MIB=1 (the
  // cluster test sets it) each worker's block travels in pieces.
  const int64_t big = 300000;
  auto gathered_big = strategy.run([big](const Tensor& id) {
    return get_replica_context().all_gather(input(id.item<int32_t>(), big), 0);
  }, ids);
  std::vector<float> want_big;
  for (int g = 0; g < n; ++g) {
    const auto block = input(g, big).to_vector<float>();
    want_big.insert(want_big.end(), block.begin(), block.end());
  }
  for (const auto& t : strategy.experimental_local_results(gathered_big))
    if (t.to_vector<float>() != want_big)
      wrong("all_gather of 1.2 MB blocks");
  // reduce_scatter: global replica g keeps block g (4 elements) of the sum.
  auto scattered = strategy.run([n](const Tensor& id) {
    return get_replica_context().reduce_scatter(ReduceOp::SUM, input(id.item<int32_t>(), 4 * n));
  }, ids);
  const auto whole = expected_sum(n, 4 * n);
  const auto local_ids = strategy.experimental_local_results(ids);
  const auto blocks = strategy.experimental_local_results(scattered);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto g = static_cast<std::ptrdiff_t>(local_ids[i].item<int32_t>());
    if (blocks[i].to_vector<float>() != std::vector<float>(whole.begin() + 4 * g, whole.begin() + 4 * g + 4))
      wrong("reduce_scatter SUM, block " + std::to_string(g));
  }
  // MEAN along axis 1 of (2, 2n) float64: global replica g gives 2 g everywhere.
  auto scattered_means = strategy.run([n](const Tensor& id) {
    return get_replica_context().reduce_scatter(
      ReduceOp::MEAN, Tensor::full({2, 2 * n}, 2.0 * id.item<int32_t>(), DType::float64), 1);
  }, ids);
  for (const auto& block : strategy.experimental_local_results(scattered_means))
    if (block.shape() != Shape{2, 2} || block.to_vector<double>() != std::vector<double>(4, static_cast<double>(n - 1)))
      wrong("reduce_scatter MEAN along axis 1");
  // Cross-replica reduce and gather span every worker.
  if (strategy.reduce(ReduceOp::SUM, ids, std::nullopt).item<int32_t>() != n * (n - 1) / 2)
    wrong("strategy.reduce SUM");
  // reduce(MEAN, axis 0) of batches whose size differs by worker (1, 3, 5, ...
  // rows): the mean over every worker's examples, not over this worker's.
  const auto batches = strategy.experimental_distribute_values_from_function([replicas](const ValueContext& vc) {
    const int g = vc.replica_id_in_sync_group;
    return Tensor::full({1 + 2 * (g / replicas), 2}, g + 1.0, DType::float32);
  });
  double examples = 0, total = 0;
  for (int g = 0; g < n; ++g) {
    examples += 1 + 2 * (g / replicas);
    total += (1 + 2 * (g / replicas)) * (g + 1.0);
  }
  for (const float mean : strategy.reduce(ReduceOp::MEAN, batches, 0).to_vector<float>())
    if (std::abs(mean - total / examples) > 1e-5 * (total / examples))
      wrong("strategy.reduce MEAN along axis 0 of uneven batches gave " + std::to_string(mean) + ", not "
            + std::to_string(total / examples));
  const auto rows = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return Tensor::from_vector<int32_t>({vc.replica_id_in_sync_group}); });
  const auto all_ids = strategy.gather(rows, 0).to_vector<int32_t>();
  for (int g = 0; g < n; ++g)
    if (all_ids.at(static_cast<size_t>(g)) != g)
      wrong("strategy.gather");
  // Reducing across workers inside merge_call's function is refused, not wrong.
  try {
    (void)strategy.run([&] {
      return get_replica_context().merge_call(
        [&](Strategy& s, const PerReplica<Tensor>& v) { return s.reduce(ReduceOp::SUM, v, std::nullopt); }, Tensor(1.0f));
    });
    wrong("strategy.reduce inside merge_call across workers did not fail");
  } catch (const Error& e) {
    if (std::string(e.what()).find("cannot run inside merge_call's function") == std::string::npos)
      wrong(std::string("strategy.reduce inside merge_call failed with: ") + e.what());
  }
  // Variables start from the chief's value on every worker.
  const int task = ClusterResolver::from_env()->task_id();
  auto scope = strategy.scope();
  auto v = strategy.create_variable(Tensor::full({4}, 10.0 + task, DType::float32), {.name = "v"});
  for (const auto& copy : strategy.experimental_local_results(v))
    if (copy.to_vector<float>() != std::vector<float>(4, 10.0f))
      wrong("a variable's initial value is not the chief's");
  std::cout << "PROBE OK collectives over " << n << " replicas (" << replicas << " per worker)" << std::endl;
  return 0;
}

// Worker `victim` dies or stops while the others wait in a collective; the
// survivors report when and how their collective failed.
int lose_peer(Runtime& rt, int me, int victim, bool freeze) {
  MultiWorkerMirroredStrategy strategy(rt);
  auto step = [&](float x) {
    (void)strategy.run([x] { return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(x)); });
  };
  step(1.0f);
  if (me == victim) {
    // Once this worker's second collective returns, every other worker has
    // finished the first (each issued the second after it): the others fail
    // in the second or the third, and the bound counts from this moment.
    step(2.0f);
    std::printf("PROBE VICTIM %s at %.3f\n", freeze ? "stops" : "dies", wall_seconds());
    std::fflush(stdout);
    std::raise(freeze ? SIGSTOP : SIGKILL);
    return 0;
  }
  try {
    step(2.0f);
    step(3.0f);
  } catch (const Error& e) {
    std::printf("PROBE FAILED at %.3f code=%s: %s\n", wall_seconds(), std::string(name(e.code())).c_str(), e.what());
    std::fflush(stdout);
    return 10;
  }
  wrong("the collectives completed although worker " + std::to_string(victim) + " is gone");
}

// Worker 1 diverges: another shape, no collective at all, or too late.
int diverge(Runtime& rt, int me, const std::string& how) {
  MultiWorkerMirroredStrategy strategy(rt, CommunicationOptions{.timeout_seconds = how == "timeout" ? 1.0 : 0});
  try {
    (void)strategy.run([&] {
      if (how == "mismatch")
        return get_replica_context().all_reduce(ReduceOp::SUM, Tensor::zeros({me == 1 ? 4 : 3}, DType::float32));
      if (how == "skip" && me == 1)
        return Tensor(0.0f);
      if (how == "timeout" && me == 1)
        std::this_thread::sleep_for(std::chrono::seconds(3)); // the slow step itself, not a wait for anything
      return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(1.0f));
    });
  } catch (const Error& e) {
    std::printf("PROBE FAILED at %.3f code=%s: %s\n", wall_seconds(), std::string(name(e.code())).c_str(), e.what());
    std::fflush(stdout);
    return 0;
  }
  std::printf("PROBE COMPLETED\n");
  return 0;
}

void print_failure(const Error& e, const char* where) {
  std::printf("PROBE FAILED %s at %.3f code=%s: %s\n", where, wall_seconds(), std::string(name(e.code())).c_str(),
              e.what());
  std::fflush(stdout);
}

// The workers' strategies differ (replicas, CommunicationOptions): their
// creation fails on every worker.
int create_differing(Runtime& rt, int me, const std::string& how) {
  CommunicationOptions options;
  if (how == "options" && me == 1)
    options = {.bytes_per_pack = 4096, .implementation = CommunicationImplementation::RING};
  try {
    MultiWorkerMirroredStrategy strategy(rt, options);
    std::printf("PROBE CREATED\n");
    (void)strategy.run([] { return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(1.0f)); });
  } catch (const Error& e) {
    print_failure(e, "creating");
    return 0;
  }
  std::printf("PROBE COMPLETED\n");
  return 0;
}

// The chief creates one multi-worker strategy more than worker 1, which
// leaves after its first: the chief's second creation fails, naming why.
int extra_strategy(Runtime& rt, int me) {
  MultiWorkerMirroredStrategy first(rt);
  if (me != 0) {
    std::printf("PROBE CREATED one\n");
    return 0;
  }
  try {
    MultiWorkerMirroredStrategy second(rt);
    std::printf("PROBE CREATED two\n");
  } catch (const Error& e) {
    print_failure(e, "creating");
  }
  return 0;
}

// check_same_across_workers: equal values pass, then worker 1's --batch differs.
int check_same(Runtime& rt, int me) {
  MultiWorkerMirroredStrategy strategy(rt);
  auto& extended = strategy.extended();
  extended.check_same_across_workers("--epochs", 3);
  extended.check_same_across_workers("--optimizer", "adam");
  extended.check_same_across_workers("--learning-rate", 0.001);
  extended.check_same_across_workers("images", TensorSpec{Shape{-1, 784}, DType::float32});
  std::printf("PROBE SAME VALUES PASSED\n");
  std::fflush(stdout);
  try {
    extended.check_same_across_workers("--batch", me == 1 ? 64 : 128);
  } catch (const Error& e) {
    print_failure(e, "checking");
    return 0;
  }
  std::printf("PROBE COMPLETED\n");
  return 0;
}

// The chief evaluates with single-worker strategies of its own before it
// creates the strategy all workers share; the collectives still meet.
int eval_first(Runtime& rt, int me) {
  std::unique_ptr<OneDeviceStrategy> evaluation;
  std::unique_ptr<MirroredStrategy> mirrored;
  if (me == 0) {
    evaluation = std::make_unique<OneDeviceStrategy>(rt, "CPU:0");
    mirrored = std::make_unique<MirroredStrategy>(rt);
    (void)mirrored->run([] { return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(1.0f)); });
  }
  MultiWorkerMirroredStrategy strategy(rt);
  const int n = strategy.num_replicas_in_sync();
  try {
    for (int step = 1; step <= 3; ++step) {
      auto sums = strategy.run([step] { return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(float(step))); });
      if (strategy.experimental_local_results(sums).front().item<float>() != float(step * n))
        wrong("all_reduce in step " + std::to_string(step));
    }
  } catch (const Error& e) {
    print_failure(e, "running");
    return 1;
  }
  std::cout << "PROBE OK eval_first over " << n << " replicas" << std::endl;
  return 0;
}

// Workers that finish their last collective at different moments exit at
// once: a worker that left after its part is done must not fail the others.
// Worker 1 computes for `busy_seconds` (a CPU loop in its replica, no
// traffic on the data plane) before its second collective: it must not be
// declared lost, however long that is next to the peer timeout.
int busy(Runtime& rt, int me, double busy_seconds) {
  MultiWorkerMirroredStrategy strategy(rt);
  const int n = strategy.num_replicas_in_sync();
  for (int step = 0; step < 2; ++step) {
    auto sums = strategy.run([&, step] {
      if (step == 1 && me == 1) {
        const double until = wall_seconds() + busy_seconds;
        volatile double x = 0;
        while (wall_seconds() < until)
          for (int i = 0; i < 100000; ++i)
            x = x + std::sqrt(static_cast<double>(i));
      }
      return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(1.0f));
    });
    if (strategy.experimental_local_results(sums).front().item<float>() != static_cast<float>(n))
      wrong("all_reduce after the busy worker's computation in step " + std::to_string(step));
  }
  std::cout << "PROBE FINISHED" << std::endl;
  return 0;
}

int finish(Runtime& rt) {
  MultiWorkerMirroredStrategy strategy(rt);
  const int n = strategy.num_replicas_in_sync();
  for (int step = 0; step < 40; ++step) {
    const int64_t count = step % 2 == 0 ? 16 : 70000;
    auto sums = strategy.run([count] {
      return get_replica_context().all_reduce(ReduceOp::SUM, input(0, count));
    });
    if (strategy.experimental_local_results(sums).front().to_vector<float>()[1] != n * 1001.0f)
      wrong("all_reduce in step " + std::to_string(step));
  }
  std::cout << "PROBE FINISHED" << std::endl;
  return 0;
}

int attacked(Runtime& rt, int task, const std::string& stop_file) {
  MultiWorkerMirroredStrategy strategy(rt);
  const int n = strategy.num_replicas_in_sync();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const int64_t count = 70000;
  const auto expected = expected_sum(n, count);
  int steps = 0;
  for (bool stop = false; !stop; ++steps) {
    // Worker 0 decides when to stop; the all-reduce tells every worker in the same step.
    const float stop_vote = task == 0 && (std::filesystem::exists(stop_file)
                                          || std::chrono::steady_clock::now() > deadline)
                              ? 1.0f
                              : 0.0f;
    auto sums = strategy.run([&] {
      auto& context = get_replica_context();
      return context.all_reduce(ReduceOp::SUM, std::vector<Tensor>{input(context.replica_id_in_sync_group(), count),
                                                                   Tensor::from_vector(std::vector<float>{stop_vote})});
    });
    const auto results = strategy.experimental_local_results(sums).front();
    if (results[0].to_vector<float>() != expected)
      wrong("all_reduce in step " + std::to_string(steps));
    stop = results[1].to_vector<float>()[0] > 0.0f;
    if (steps == 0)
      std::cout << "PROBE STEPPING" << std::endl;
  }
  std::cout << "PROBE FINISHED steps=" << steps << std::endl;
  return 0;
}

// Sum over every replica of every worker of this step's batch (and its size).
std::pair<int64_t, int64_t> step_totals(Strategy& strategy, const PerReplica<Element>& step) {
  auto sums = strategy.run([](const Element& batch) {
    const Tensor& x = batch[0];
    return get_replica_context().all_reduce(
      ReduceOp::SUM, std::vector<Tensor>{reduce_sum(x, 0), Tensor(static_cast<int64_t>(x.shape()[0]))});
  }, step);
  const auto first = strategy.experimental_local_results(sums).front();
  return {first[0].item<int64_t>(), first[1].item<int64_t>()};
}

int datasets(Runtime& rt, int task) {
  MultiWorkerMirroredStrategy strategy(rt);
  // DATA (range is not a file source): one step of all workers is one global
  // batch, so 8 examples in global batches of 4 are 2 steps summing 6 and 22.
  std::vector<std::pair<int64_t, int64_t>> got;
  for (const auto& step : strategy.experimental_distribute_dataset(Dataset::range(8).batch(4)))
    got.push_back(step_totals(strategy, step));
  if (got != std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {22, 4}})
    wrong("DATA auto-shard across workers");
  // OFF: every worker reads everything, rebatched into per-replica batches of
  // global / replicas = 2: 4 steps of 2 examples per worker.
  DatasetOptions off;
  off.auto_shard_policy = AutoShardPolicy::OFF;
  got.clear();
  for (const auto& step : strategy.experimental_distribute_dataset(Dataset::range(8).batch(4).with_options(off)))
    got.push_back(step_totals(strategy, step));
  if (got != std::vector<std::pair<int64_t, int64_t>>{{2, 4}, {10, 4}, {18, 4}, {26, 4}})
    wrong("OFF auto-shard across workers");
  // Uneven inputs: worker k's function gives 2 + k batches of one element;
  // the workers agree on the end, so worker 0 runs the third step with an
  // empty batch instead of leaving worker 1 alone in its collective.
  got.clear();
  auto dist = strategy.distribute_datasets_from_function(
    [task](const InputContext&) { return Dataset::range(10 * task, 10 * task + 2 + task).batch(1); });
  for (const auto& step : dist)
    got.push_back(step_totals(strategy, step));
  if (got != std::vector<std::pair<int64_t, int64_t>>{{10, 2}, {12, 2}, {12, 1}})
    wrong("uneven per-worker datasets");
  std::cout << "PROBE OK datasets" << std::endl;
  return 0;
}

// Replica-context writes across workers. Aggregation NONE: equal values on
// every worker update every copy; worker 1's different value fails every
// worker ("PROBE NONE FAILED ..."). ONLY_FIRST_REPLICA: every copy on every
// worker takes global replica 0's value, whatever the other workers passed.
int variables(Runtime& rt, int task) {
  MultiWorkerMirroredStrategy strategy(rt);
  auto scope = strategy.scope();
  auto none = strategy.create_variable(Tensor::zeros({3}, DType::float32),
                                       {.name = "v_none", .aggregation = VariableAggregation::NONE});
  (void)strategy.run([&] { none.assign(Tensor::full({3}, 5.0, DType::float32)); });
  for (const auto& copy : strategy.experimental_local_results(none))
    if (copy.to_vector<float>() != std::vector<float>(3, 5.0f))
      wrong("an equal NONE assign on every worker did not update every copy");
  try {
    (void)strategy.run([&] { none.assign(Tensor::full({3}, 7.0 + (task == 1 ? 1 : 0), DType::float32)); });
    std::cout << "PROBE NONE COMPLETED" << std::endl;
  } catch (const Error& e) {
    std::cout << "PROBE NONE FAILED code=" << name(e.code()) << ": " << e.what() << std::endl;
  }
  for (const auto& copy : strategy.experimental_local_results(none))
    if (copy.to_vector<float>() != std::vector<float>(3, 5.0f))
      wrong("a failed NONE assign changed a copy");
  auto first = strategy.create_variable(Tensor(int64_t{0}), {.name = "v_first",
                                                             .aggregation = VariableAggregation::ONLY_FIRST_REPLICA});
  (void)strategy.run([&] { first.assign_add(Tensor(int64_t{10 + 100 * task + get_replica_context().replica_id_in_sync_group()})); });
  for (const auto& copy : strategy.experimental_local_results(first))
    std::cout << "PROBE FIRST " << copy.item<int64_t>() << std::endl;
  return 0;
}

// One unseeded shuffle of range(16) for 2 epochs, distributed in global
// batches of 4 with DATA sharding ("PROBE SAW <epoch>: <elements in order>"),
// and sharded by a dataset function after it ("PROBE SAW FN <epoch>: ...").
int shuffle(Runtime& rt) {
  MultiWorkerMirroredStrategy strategy(rt);
  auto print_epochs = [&](const DistributedDataset& dist, const std::string& label) {
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::string saw;
      for (const auto& step : dist)
        for (const auto& batch : strategy.experimental_local_results(step))
          for (auto x : batch[0].to_vector<int64_t>())
            saw += " " + std::to_string(x);
      std::cout << "PROBE SAW " << label << epoch << ":" << saw << std::endl;
    }
  };
  print_epochs(strategy.experimental_distribute_dataset(Dataset::range(16).shuffle(16).batch(4)), "");
  print_epochs(strategy.distribute_datasets_from_function([](const InputContext& context) {
    return Dataset::range(16).shuffle(16).shard(context.num_input_pipelines(), context.input_pipeline_id()).batch(2);
  }), "FN ");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  try {
    auto resolver = ClusterResolver::from_env();
    const int task = resolver->task_id();
    int replicas = scenario == "uneven" ? task + 1 : 1;
    if (argc > 3 && std::string(argv[2]) == "--replicas")
      replicas = std::atoi(argv[3]);
    Runtime rt(resolver, {.logical_cpu_devices = replicas});
    std::cout << "PROBE JOINED task " << resolver->task_type() << ":" << task << std::endl;
    if (scenario == "join")
      return 0;
    if (scenario == "members" || scenario == "ps_lost" || scenario == "ps_frozen")
      return troupe::testing::run_ps_cluster_scenario(rt, scenario);
    if (scenario == "ps_worker_frozen" || scenario == "ps_chief_killed" || scenario == "ps_nan"
        || scenario == "ps_nan_caught")
      return troupe::testing::run_ps_fault_scenario(rt, scenario);
    if (scenario == "ps_worker_rejoin" && argc > 2)
      return troupe::testing::run_ps_fault_scenario(rt, scenario, argv[2]);
    if (scenario == "hold" && argc > 2) {
      // Stays in the cluster while the test starts other processes against it.
      const std::string file = argv[2];
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      (void)troupe::testing::wait_for_change_in(std::filesystem::path(file).parent_path().string(), deadline,
                                                [&] { return std::filesystem::exists(file); });
      std::cout << "PROBE LEAVES" << std::endl;
      return 0;
    }
    if (scenario == "datasets")
      return datasets(rt, task);
    if (scenario == "finish")
      return finish(rt);
    if (scenario == "attacked" && argc > 2)
      return attacked(rt, task, argv[2]);
    if (scenario == "busy")
      return busy(rt, task, argc > 2 ? std::atof(argv[2]) : 3.0);
    if (scenario == "variables")
      return variables(rt, task);
    if (scenario == "shuffle")
      return shuffle(rt);
    if (scenario == "collectives")
      return collectives(rt, replicas);
    if (scenario == "kill" || scenario == "freeze")
      return lose_peer(rt, task, argc > 2 ? std::atoi(argv[2]) : 1, scenario == "freeze");
    if (scenario == "mismatch" || scenario == "skip" || scenario == "timeout")
      return diverge(rt, task, scenario);
    if (scenario == "uneven" || scenario == "options")
      return create_differing(rt, task, scenario);
    if (scenario == "check_same")
      return check_same(rt, task);
    if (scenario == "extra_strategy")
      return extra_strategy(rt, task);
    if (scenario == "eval_first")
      return eval_first(rt, task);
    std::cerr << "cluster_probe: unknown scenario \"" << scenario << "\"\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout << "PROBE ERROR " << e.what() << std::endl;
    return 3;
  }
}
