#include "ps_training.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "job_settings.hpp"
#include "metrics_report.hpp"
#include "mlp.hpp"
#include "optimizer.hpp"
#include "progress_bar.hpp"

namespace train {

using troupe::Tensor;

namespace {

/// What one step reports back: its loss sum, correct count and examples.
using StepSums = std::vector<double>;

/// FNV-1a over the bytes of every variable's value and optimizer slots, as
/// the servers hold them: the fingerprint printed after a save equals the
/// one a run resumed from that save prints, with any number of servers.
uint64_t state_fingerprint(const std::vector<troupe::ShardedVariable>& variables) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](const Tensor& t) {
    for (size_t i = 0; i < t.nbytes(); ++i)
      hash = (hash ^ static_cast<uint64_t>(t.raw_data()[i])) * 1099511628211ull;
  };
  for (const auto& v : variables) {
    mix(v.read_value());
    for (const auto& [slot, value] : v.read_slots()) {
      // Adam's count is per shard: the largest, whatever the sharding.
      if (slot == "iterations") {
        const auto counts = value.to_vector<int64_t>();
        mix(Tensor(*std::max_element(counts.begin(), counts.end())));
      } else {
        mix(value);
      }
    }
  }
  return hash;
}

} // namespace

int run_parameter_server_training(const Options& opts, const Split& train_split, const Split& test_split) {
  // Under troupe-launch --workers N --ps M this process is one task of that
  // cluster; otherwise the whole cluster runs in this process.
  const auto resolver = troupe::ClusterResolver::from_env();
  auto rt = resolver->cluster_spec().num_tasks_total() > 1
              ? std::make_unique<troupe::Runtime>(resolver, troupe::RuntimeOptions{.logical_cpu_devices = opts.replicas})
              : std::make_unique<troupe::Runtime>(
                  troupe::LocalCluster{.workers = opts.workers, .ps = opts.ps, .devices_per_worker = opts.replicas});
  const bool chief = rt->task_type() == "chief";
  troupe::ParameterServerStrategy strategy(*rt, troupe::FixedShardsPartitioner(rt->num_tasks("ps")));
  troupe::ClusterCoordinator coordinator(strategy);
  // Every task (chief, workers, parameter servers) compares the flags that
  // shape the model and the data with the chief's: a worker started with
  // another optimizer or another slice of the data would push its own
  // updates into the shared model. All fail together, naming each setting
  // that differs (in one process there is nothing to compare).
  strategy.extended().check_same_across_workers(job_settings(opts, train_split));

  std::vector<troupe::ShardedVariable> weights;
  troupe::ShardedVariable epochs_done{nullptr};
  {
    auto scope = strategy.scope();
    const auto initial = initial_weights(opts.seed);
    for (std::size_t i = 0; i < initial.size(); ++i)
      weights.push_back(strategy.create_variable(initial[i], {.name = weight_names[i]}));
    epochs_done = strategy.create_variable(Tensor(int64_t{0}), {.name = "epochs_done", .trainable = false});
  }
  // The weights with the optimizer's slots on the servers (Adam's m, v and
  // step counts, or momentum's accumulators) and the epoch counter: what a
  // job needs to go on where it stopped, for instance after a parameter
  // server was lost and the whole job restarted.
  std::vector<troupe::ShardedVariable> saved = weights;
  saved.push_back(epochs_done);
  troupe::Checkpoint checkpoint(saved);
  const std::string checkpoint_path = opts.checkpoint_dir.empty() ? "" : opts.checkpoint_dir + "/model.ckpt";
  int first_epoch = 0;
  // Only the coordinator touches the servers' state outside scheduled functions.
  if (chief && !checkpoint_path.empty() && checkpoint.restore_if_exists(checkpoint_path)) {
    first_epoch = static_cast<int>(epochs_done.read_value().item<int64_t>());
    std::printf("resumed from %s after epoch %d, state fingerprint %016llx\n", checkpoint_path.c_str(), first_epoch,
                static_cast<unsigned long long>(state_fingerprint(saved)));
    std::fflush(stdout);
  }

  // Each worker reads its own endless shuffle of the whole training set (no
  // sharding across workers under ParameterServerStrategy, as in TensorFlow).
  const int64_t train_examples = train_split.images.shape()[0];
  auto per_worker = coordinator.create_per_worker_dataset([&](const troupe::InputContext& context) {
    auto dataset = troupe::Dataset::from_tensor_slices(troupe::Element::tuple({train_split.images, train_split.labels}))
                     // A resumed run starts a new order rather than repeating the first run's.
                     .shuffle(train_examples,
                              opts.seed * 1000003 + static_cast<uint64_t>(context.input_pipeline_id())
                                + static_cast<uint64_t>(first_epoch) * 7919,
                              true)
                     .batch(opts.global_batch)
                     .repeat();
    return strategy.experimental_distribute_dataset(dataset);
  });
  auto iterators = per_worker.iterator();

  // One step on whichever worker is free: read the weights (all at once),
  // sum the gradients over the worker's replicas, and send them to the
  // servers (all at once), which apply the optimizer (concurrent workers'
  // steps all count): two round trips to the servers per step.
  auto train_step = troupe::remote_function(
    "train_fashion_mnist_step",
    [&](troupe::DistributedIterator& it, double learning_rate, int64_t step) -> StepSums {
      const auto batch = it.get_next();
      const auto current = troupe::read_values(weights);
      std::vector<std::vector<Tensor>> summed(static_cast<std::size_t>(opts.replicas));
      strategy.run(
        [&](const troupe::Element& b) {
          auto& context = troupe::get_replica_context();
          summed[static_cast<std::size_t>(context.replica_id_in_sync_group())] =
            context.all_reduce(troupe::ReduceOp::SUM, local_sums(current, b[0], b[1]));
        },
        batch);
      const auto& sums = summed.front();
      const double examples = sums[8].item<double>();
      const float scale = examples > 0 ? static_cast<float>(1.0 / examples) : 0.0f;
      // A non-finite loss or gradient ends the job (the coordinator names
      // this worker): sent to the servers, it would ruin every worker's model.
      const std::string at_step = " at step " + std::to_string(step);
      (void) troupe::check_numerics(sums[6], "the train loss" + at_step);
      std::vector<Tensor> gradients;
      for (std::size_t i = 0; i < weights.size(); ++i)
        gradients.push_back(
          troupe::check_numerics(sums[i] * scale, "the gradient of " + std::string(weight_names[i]) + at_step));
      // Every weight's update in one staging, as Keras' optimizer.apply_gradients.
      if (opts.optimizer == "adam")
        troupe::apply_adam(weights, gradients, {.learning_rate = learning_rate});
      else
        troupe::apply_momentum(weights, gradients, {.learning_rate = learning_rate, .momentum = opts.momentum});
      return {sums[6].item<double>(), sums[7].item<double>(), examples};
    });

  // Every task of a cluster across processes has made the same strategy,
  // variables, per-worker dataset and step function; the workers and
  // parameter servers now serve the coordinator until it is done.
  if (!chief)
    return rt->serve();

  const int64_t steps_per_epoch = (train_examples + opts.global_batch - 1) / opts.global_batch;
  const int64_t total_steps = steps_per_epoch * opts.epochs;
  std::cout << "training an MLP 784-256-128-10 on " << train_examples << " Fashion-MNIST images with "
            << "ParameterServerStrategy (" << strategy.num_workers_in_cluster() << " workers of " << opts.replicas
            << " replica" << (opts.replicas == 1 ? "" : "s") << ", " << strategy.num_ps()
            << " parameter servers, asynchronous"
            << (resolver->cluster_spec().num_tasks_total() > 1 ? ", one process each" : ", in this process")
            << "), batch "
            << opts.global_batch << " per step, " << opts.optimizer << " on the servers (learning rate "
            << opts.learning_rate << ", cosine decay), seed " << opts.seed << "\n";

  std::vector<EpochMetrics> history;
  // The learning rate's schedule goes on from the resumed epoch.
  int64_t step = steps_per_epoch * first_epoch;
  const int last_epoch = opts.stop_after > 0 ? std::min(opts.epochs, first_epoch + opts.stop_after) : opts.epochs;
  for (int epoch = first_epoch; epoch < last_epoch; ++epoch) {
    ProgressBar bar(epoch + 1, opts.epochs, steps_per_epoch * opts.global_batch, !opts.quiet);
    EpochMetrics metrics;
    metrics.epoch = epoch + 1;
    const auto start = std::chrono::steady_clock::now();
    std::vector<troupe::RemoteValue<StepSums>> results;
    results.reserve(static_cast<std::size_t>(steps_per_epoch));
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      ++step;
      results.push_back(
        coordinator.schedule(train_step, iterators, cosine_decay(opts.learning_rate, step, total_steps), step));
    }
    double loss_sum = 0, correct = 0, examples = 0;
    for (auto& result : results) {
      const auto sums = result.fetch();
      loss_sum += sums[0];
      correct += sums[1];
      examples += sums[2];
      bar.update(static_cast<int64_t>(sums[2]), loss_sum / examples);
    }
    coordinator.join();
    bar.finish();
    metrics.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics.train_loss = loss_sum / examples;
    metrics.train_accuracy = correct / examples;
    metrics.test_accuracy = accuracy_of(troupe::read_values(weights), test_split);
    history.push_back(metrics);
    std::printf("epoch %d/%d: train loss %.4f, train accuracy %.4f, test accuracy %.4f, %.2f s, %.0f examples/s\n",
                metrics.epoch, opts.epochs, metrics.train_loss, metrics.train_accuracy, metrics.test_accuracy,
                metrics.seconds, examples / metrics.seconds);
    std::fflush(stdout);
    if (!checkpoint_path.empty()) {
      // After join nothing runs: the servers hold exactly this epoch's state.
      epochs_done.assign(Tensor(static_cast<int64_t>(epoch + 1)));
      checkpoint.save(checkpoint_path);
      std::printf("saved %s after epoch %d, state fingerprint %016llx\n", checkpoint_path.c_str(), epoch + 1,
                  static_cast<unsigned long long>(state_fingerprint(saved)));
      std::fflush(stdout);
    }
  }

  if (!history.empty()) {
    std::filesystem::create_directories(opts.out_dir);
    write_csv(opts.out_dir, history);
    std::string why;
    if (write_plot(opts.out_dir, why))
      std::cout << "wrote " << opts.out_dir << "/metrics.csv and metrics.png\n";
    else
      std::cout << "wrote " << opts.out_dir << "/metrics.csv; no plot: " << why << "\n";
  }
  std::printf("final test accuracy %.4f\n", accuracy_of(troupe::read_values(weights), test_split));
  return 0;
}

} // namespace train
