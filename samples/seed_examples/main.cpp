// Every example of ../shared/seeds/ that troupe covers, printed in
// TensorFlow's form. Run: seed_examples [--devices CPU:0,CPU:1] [--simulate SEED]
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

namespace {

struct Options {
  std::vector<std::string> devices{"CPU:0", "CPU:1"};
  bool simulate = false;
  uint64_t seed = 0;
};

// Enough logical CPU devices for every "CPU:n" named on the command line.
int cpu_devices_needed(const std::vector<std::string>& devices) {
  int needed = 1;
  for (const auto& d : devices) {
    auto spec = troupe::DeviceSpec::from_string(d);
    if (spec.is_cpu())
      needed = std::max(needed, spec.device_index().value_or(0) + 1);
  }
  return needed;
}

void section(const char* title) {
  std::cout << "\n# " << title << "\n";
}

void run_examples(troupe::Runtime& rt, const std::vector<std::string>& devices) {
  using troupe::Tensor;
  troupe::MirroredStrategy strategy(rt, devices);

  section("MultiWorkerMirroredStrategy.run, example 1: constant tensor input");
  auto tensor_input = Tensor(3.0f);
  auto result = strategy.run([](const Tensor& input) { return input * 2.0f; }, tensor_input);
  std::cout << result << "\n";

  section("MultiWorkerMirroredStrategy.run, example 2: distributed values input");
  auto distributed_values = strategy.experimental_distribute_values_from_function(
    [](const troupe::ValueContext& value_context) { return value_context.num_replicas_in_sync; });
  std::cout << strategy.run([](const Tensor& input) { return input * 2; }, distributed_values) << "\n";

  section("MultiWorkerMirroredStrategy.run, example 3: all_reduce of the replica ids");
  auto ids = strategy.experimental_distribute_values_from_function(
    [](const troupe::ValueContext& value_context) { return Tensor(value_context.replica_id_in_sync_group); });
  std::cout << strategy.run([](const Tensor& input) {
    return troupe::get_replica_context().all_reduce("sum", input);
  }, ids) << "\n";

  section("ReplicaContext: replica_id_in_sync_group");
  std::cout << strategy.run([] {
    auto& replica_context = troupe::get_replica_context();
    return replica_context.replica_id_in_sync_group();
  }) << "\n";

  section("ReplicaContext.all_gather of one tensor");
  auto gathered = strategy.run([] {
    auto& ctx = troupe::get_replica_context();
    auto local_value = Tensor::from_vector<int32_t>({1, 2, 3});
    return ctx.all_gather(local_value, 0);
  });
  std::cout << gathered << "\n";
  std::cout << strategy.experimental_local_results(gathered) << "\n";

  section("ReplicaContext.all_gather of a nested list");
  auto nested = strategy.run([] {
    auto& ctx = troupe::get_replica_context();
    auto value_1 = Tensor::from_vector<int32_t>({1, 2, 3});
    auto value_2 = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
    return ctx.all_gather(std::vector<Tensor>{value_1, value_2}, 0);
  });
  std::cout << nested << "\n";
  std::cout << strategy.experimental_local_results(nested) << "\n";

  section("experimental_distribute_dataset: range(4).batch(2), each replica doubles its batch");
  const int64_t global_batch_size = 2;
  auto dataset = troupe::Dataset::range(4).batch(global_batch_size);
  auto dist_dataset = strategy.experimental_distribute_dataset(dataset);
  std::vector<troupe::PerReplica<Tensor>> result_list;
  for (const auto& x : dist_dataset)
    result_list.push_back(strategy.run([](const Tensor& input) { return input * 2; }, x));
  std::cout << result_list << "\n";
}

} // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app("Every seed example that troupe covers, printed in TensorFlow's form.",
               "seed_examples");
  app.add_option("--devices", opts.devices, "devices of MirroredStrategy (default CPU:0,CPU:1)")
    ->delimiter(',')
    ->type_name("LIST");
  app.add_option("--simulate", opts.seed, "run on the deterministic simulation runtime")
    ->type_name("SEED");
  CLI11_PARSE(app, argc, argv);
  opts.simulate = app.count("--simulate") > 0;
  try {
    // CLI11 drops empty items of a list but keeps a lone "" (--devices "").
    if (std::ranges::find(opts.devices, "") != opts.devices.end())
      troupe::fail(troupe::Errc::invalid_argument,
                   "--devices needs at least one device, e.g. CPU:0,CPU:1");
    const int cpus = cpu_devices_needed(opts.devices);
    if (opts.simulate) {
      troupe::Runtime rt(troupe::Simulation{.seed = opts.seed, .logical_cpu_devices = cpus});
      run_examples(rt, opts.devices);
    } else {
      troupe::Runtime rt({.logical_cpu_devices = cpus});
      run_examples(rt, opts.devices);
    }
    return 0;
  } catch (const troupe::Error& e) {
    std::cerr << "seed_examples: " << e.what() << "\n";
    return 2;
  }
}
