// The seed examples of MultiWorkerMirroredStrategy (seed 000: run; seed 001:
// the TF_CONFIG cluster resolver) as one task of a cluster. Start every task
// with the launcher, which sets each one's TF_CONFIG:
//   troupe-launch --workers 2 -- multi_worker_examples
// With one replica per worker (the default) every value equals the seed's.
#include <iostream>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

namespace {

void section(const char* title) {
  std::cout << "\n# " << title << "\n";
}

void run_examples(troupe::Runtime& rt) {
  using troupe::Tensor;
  // This implicitly uses TF_CONFIG for the cluster and current task info.
  troupe::MultiWorkerMirroredStrategy strategy(rt);

  section("TPUStrategy.cluster_resolver (TF_CONFIG): this task");
  const auto* resolver = strategy.cluster_resolver();
  if (resolver->task_type() == "worker")
    std::cout << "Performing something that's only applicable on workers (task_id "
              << resolver->task_id() << " of " << resolver->cluster_spec().num_tasks("worker") << ").\n";
  else if (resolver->task_type() == "ps")
    std::cout << "Performing something that's only applicable on parameter servers.\n";
  std::cout << "num_replicas_in_sync = " << strategy.num_replicas_in_sync() << "\n";

  section("MultiWorkerMirroredStrategy.run, example 1: constant tensor input");
  auto tensor_input = Tensor(3.0f);
  std::cout << strategy.run([](const Tensor& input) { return input * 2.0f; }, tensor_input) << "\n";

  section("MultiWorkerMirroredStrategy.run, example 2: distributed values input");
  auto distributed_values = strategy.experimental_distribute_values_from_function(
    [](const troupe::ValueContext& value_context) { return value_context.num_replicas_in_sync; });
  std::cout << strategy.run([](const Tensor& input) { return input * 2; }, distributed_values) << "\n";

  section("MultiWorkerMirroredStrategy.run, example 3: all_reduce of the replica ids");
  auto ids = strategy.experimental_distribute_values_from_function(
    [](const troupe::ValueContext& value_context) { return Tensor(value_context.replica_id_in_sync_group); });
  auto sums = strategy.run([](const Tensor& input) {
    return troupe::get_replica_context().all_reduce("sum", input);
  }, ids);
  std::cout << sums << "\n";

  section("strategy.reduce of the replica ids across workers");
  std::cout << strategy.reduce(troupe::ReduceOp::SUM, ids, std::nullopt) << "\n";
}

} // namespace

int main(int argc, char** argv) {
  int replicas = 1;
  CLI::App app("The MultiWorkerMirroredStrategy seed examples as one task of a cluster; start "
               "every task with troupe-launch --workers N -- multi_worker_examples.",
               "multi_worker_examples");
  app.add_option("--replicas", replicas, "replicas per worker (default 1)")
    ->check(CLI::Range(1, std::numeric_limits<int>::max(), "POSITIVE"))
    ->type_name("PER_WORKER");
  CLI11_PARSE(app, argc, argv);
  try {
    troupe::Runtime rt(troupe::ClusterResolver::from_env(), {.logical_cpu_devices = replicas});
    run_examples(rt);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "multi_worker_examples: " << e.what() << "\n";
    return 1;
  }
}
