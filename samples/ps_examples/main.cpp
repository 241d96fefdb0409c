// The seed example of ParameterServerStrategy.experimental_distribute_dataset
// (tf.distribute.experimental.ParameterServerStrategy, seed 004): a dataset of
// range(4) in batches of 2, distributed to a worker with two devices, each
// replica doubling its part of the batch. It runs in one process
// (LocalCluster), in a deterministic simulation, or as a cluster of processes
// (troupe-launch --workers 2 --ps 1: the chief prints the values).

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

namespace {

struct Options {
  std::string mode = "local";
  uint64_t seed = 0;
  int workers = 2;
  int ps = 1;
};

std::unique_ptr<troupe::Runtime> make_runtime(const Options& opts) {
  // Two devices per worker, as the seed's MirroredStrategy(devices=["GPU:0", "GPU:1"]).
  // Under troupe-launch --workers 2 --ps 1: this process is one task of the cluster.
  auto resolver = troupe::ClusterResolver::from_env();
  if (resolver->cluster_spec().num_tasks_total() > 1)
    return std::make_unique<troupe::Runtime>(resolver, troupe::RuntimeOptions{.logical_cpu_devices = 2});
  if (opts.mode == "simulation")
    return std::make_unique<troupe::Runtime>(
      troupe::Simulation{.seed = opts.seed, .workers = opts.workers, .ps = opts.ps, .devices_per_worker = 2});
  return std::make_unique<troupe::Runtime>(
    troupe::LocalCluster{.workers = opts.workers, .ps = opts.ps, .devices_per_worker = 2});
}

int run(troupe::Runtime& rt) {
  using troupe::Tensor;
  troupe::ParameterServerStrategy strategy(rt);
  troupe::ClusterCoordinator coordinator(strategy);

  const int64_t global_batch_size = 2;
  // Under ParameterServerStrategy a dataset is made on each worker, and not
  // sharded across them: every worker sees all of range(4).
  auto per_worker = coordinator.create_per_worker_dataset([&](const troupe::InputContext&) {
    return strategy.experimental_distribute_dataset(troupe::Dataset::range(4).batch(global_batch_size));
  });
  auto iterators = per_worker.iterator();

  // One scheduled function walks its worker's dataset to the end, so what it
  // returns does not depend on which worker runs it.
  auto double_each_batch = troupe::remote_function("double_each_batch", [&](troupe::DistributedIterator& it) {
    std::vector<troupe::PerReplica<Tensor>> result;
    while (auto x = it.get_next_as_optional())
      result.push_back(strategy.run([](const Tensor& input) { return input * 2; }, *x));
    return result;
  });
  // Every task of a cluster across processes runs the program up to here, so
  // that a worker has the same strategy, dataset and function; then the
  // workers and parameter servers serve until the coordinator is done.
  if (rt.task_type() == "worker" || rt.task_type() == "ps")
    return rt.serve();
  auto result = coordinator.schedule(double_each_batch, iterators);
  coordinator.join();
  std::cout << result.fetch() << "\n";
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app("The seed example of ParameterServerStrategy.experimental_distribute_dataset.");
  app.add_option("--mode", opts.mode, "local (one process, threads) or simulation (deterministic)")
    ->check(CLI::IsMember({"local", "simulation"}));
  app.add_option("--seed", opts.seed, "the simulation's seed");
  app.add_option("--workers", opts.workers, "worker tasks")->check(CLI::Range(1, 64));
  app.add_option("--ps", opts.ps, "parameter-server tasks")->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);
  try {
    auto rt = make_runtime(opts);
    return run(*rt);
  } catch (const std::exception& e) {
    std::cerr << "ps_examples: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
