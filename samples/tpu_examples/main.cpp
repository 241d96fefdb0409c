// The TPUStrategy seed example (seed 001: tf.compat.v1.distribute.experimental.
// TPUStrategy(tpu_cluster_resolver, steps_per_run, device_assignment), its
// properties and the cluster_resolver TF_CONFIG branch) on emulated TPU cores.
//   tpu_examples [--tpu-cores 8] [--steps-per-run 10] [--simulate SEED]
// Under troupe-launch --workers N (TF_CONFIG set) each worker is one host of a
// slice of --tpu-cores cores.
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

namespace {

struct Options {
  int tpu_cores = 8;
  int steps_per_run = 10;
  std::optional<uint64_t> seed;
};

void section(const char* title) {
  std::cout << "\n# " << title << "\n";
}

std::string list(const std::vector<int>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return out + "]";
}

std::string accelerators(const std::map<std::string, int>& counts) {
  std::string out = "{";
  for (const auto& [name, n] : counts)
    out += (out.size() > 1 ? ", '" : "'") + name + "': " + std::to_string(n);
  return out + "}";
}

void run_examples(troupe::Runtime& rt, troupe::TPUClusterResolver& resolver, const Options& opts) {
  using troupe::Tensor;
  section("tf.tpu.experimental.initialize_tpu_system(resolver)");
  const auto topology = troupe::initialize_tpu_system(rt, resolver);
  std::cout << "topology.mesh_shape = " << list(topology.mesh_shape()) << "\n";
  std::cout << "topology.num_tasks = " << topology.num_tasks() << ", num_tpus_per_task = "
            << topology.num_tpus_per_task() << "\n";

  section("TPUStrategy(tpu_cluster_resolver, steps_per_run, device_assignment)");
  const int cores = topology.num_tasks() * topology.num_tpus_per_task();
  // One core per replica. On one host, TensorFlow's DeviceAssignment.build;
  // over several hosts, each host's cores as a block of consecutive replicas
  // (the host-major core_assignment this emulation runs across processes).
  auto device_assignment = [&] {
    if (topology.num_tasks() == 1)
      return troupe::DeviceAssignment::build(topology, std::vector<int>{1, 1, 1, 1}, std::nullopt, cores);
    troupe::DeviceAssignment::CoreAssignment core_assignment;
    for (const auto& host : topology.device_coordinates())
      for (const auto& core : host)
        core_assignment.push_back({core});
    return troupe::DeviceAssignment(topology, core_assignment);
  }();
  troupe::TPUStrategy strategy(rt, resolver, opts.steps_per_run, device_assignment);
  std::cout << "num_replicas_in_sync = " << strategy.num_replicas_in_sync() << "\n";
  std::cout << "extended.steps_per_run = " << strategy.extended().steps_per_run() << "\n";
  std::cout << "steps_per_run (deprecated) = " << strategy.steps_per_run() << "\n";
  const auto* cluster_resolver = strategy.cluster_resolver();
  std::cout << "cluster_resolver.num_accelerators() = " << accelerators(cluster_resolver->num_accelerators()) << "\n";

  section("cluster_resolver: the TF_CONFIG branch");
  if (cluster_resolver->task_type() == "worker")
    std::cout << "Performing something that's only applicable on workers (task_id " << cluster_resolver->task_id()
              << ").\n";
  else if (cluster_resolver->task_type() == "ps")
    std::cout << "Performing something that's only applicable on parameter servers.\n";

  section("steps_per_run: the host hands the cores steps_per_run steps at a time");
  // One example per replica per step, 3 x steps_per_run steps.
  const int64_t replicas = strategy.num_replicas_in_sync();
  auto dataset = troupe::Dataset::range(3 * opts.steps_per_run * replicas).batch(replicas, /*drop_remainder=*/true);
  auto dist = strategy.experimental_distribute_dataset(dataset);
  troupe::DistributedIterator iterator(dist);
  const auto trips_before = strategy.extended().host_round_trips();
  for (;;) {
    auto ctx = strategy.extended().experimental_run_steps_on_iterator(
      [](troupe::MultiStepContext& step, const Tensor& x) {
        // Each replica's example, summed over the replicas by the output's reduction.
        step.set_last_step_output("sum", x, troupe::ReduceOp::SUM);
      },
      iterator);
    if (ctx.steps_run() == 0)
      break;
    std::cout << "ran " << ctx.steps_run() << " steps, last step's sum over the replicas = "
              << ctx.last_step_output("sum") << "\n";
  }
  std::cout << "host round trips = " << strategy.extended().host_round_trips() - trips_before << " for "
            << 3 * opts.steps_per_run << " steps\n";
}

} // namespace

int main(int argc, char** argv) {
  Options opts;
  uint64_t seed = 0;
  CLI::App app("The TPUStrategy seed example on emulated TPU cores.", "tpu_examples");
  app.add_option("--tpu-cores", opts.tpu_cores, "cores of the emulated TPU slice (1, 2, 4, 8, 16, 32)");
  app.add_option("--steps-per-run", opts.steps_per_run, "steps the host hands the cores at a time")
    ->check(CLI::PositiveNumber);
  app.add_option("--simulate", seed, "run on the deterministic simulation runtime")->type_name("SEED");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--simulate") > 0)
    opts.seed = seed;
  try {
    if (opts.seed) {
      troupe::Runtime rt(troupe::Simulation{.seed = *opts.seed, .logical_tpu_cores = opts.tpu_cores});
      troupe::TPUClusterResolver resolver("local");
      run_examples(rt, resolver, opts);
    } else if (std::getenv("TF_CONFIG") != nullptr) {
      // One host of a multi-host slice: the resolver reads TF_CONFIG.
      auto resolver = std::make_shared<troupe::TPUClusterResolver>("");
      troupe::Runtime rt(resolver, {.logical_tpu_cores = opts.tpu_cores});
      run_examples(rt, *resolver, opts);
    } else {
      troupe::Runtime rt({.logical_tpu_cores = opts.tpu_cores});
      troupe::TPUClusterResolver resolver("local");
      run_examples(rt, resolver, opts);
    }
    return 0;
  } catch (const troupe::Error& e) {
    std::cerr << "tpu_examples: " << e.what() << "\n";
    return 2;
  }
}
