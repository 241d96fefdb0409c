// The main job: data-parallel Fashion-MNIST training with MirroredStrategy,
// or with MultiWorkerMirroredStrategy when TF_CONFIG names a cluster
// (troupe-launch --workers 2 -- train_fashion_mnist --replicas 2: two worker
// processes of two replicas each; worker 0 writes the outputs), or
// asynchronous training with ParameterServerStrategy (--strategy ps,
// ps_training.cpp), or TPUStrategy on emulated TPU cores (--strategy tpu
// --tpu-cores 8 --steps-per-run 10: the same step, steps_per_run steps per
// host round trip).
//
// An MLP 784-256-128-10 (ReLU, softmax cross-entropy) written on troupe
// tensors, trained with Adam (or SGD with momentum) over --replicas logical
// CPU devices; each step's gradients are all-reduced in one packed
// collective, weighted by example count. Prints a progress bar, per-epoch
// loss and accuracy, writes metrics.csv and metrics.png, and with
// --checkpoint DIR saves every epoch and resumes from the last save (across
// workers the chief's DIR: every worker resumes from the chief's state).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "fashion_mnist_data.hpp"
#include "job_settings.hpp"
#include "metrics_report.hpp"
#include "mlp.hpp"
#include "optimizer.hpp"
#include "options.hpp"
#include "progress_bar.hpp"
#include "ps_training.hpp"

namespace {

using troupe::Tensor;
using Clock = std::chrono::steady_clock;

using train::Split;

double accuracy(const train::Mlp& model, const Split& split) {
  // The primary copy of the weights.
  std::vector<Tensor> weights;
  for (const auto& v : model.variables())
    weights.push_back(v.read_value());
  return train::accuracy_of(weights, split);
}

int gpu_count(const troupe::Runtime& rt) {
  int gpus = 0;
  for (const auto& device : rt.devices())
    gpus += device.is_gpu() ? 1 : 0;
  return gpus;
}

/// Whether the mirrored replicas run on GPUs: --device gpu, or auto on a
/// machine with a GPU (one process, no TPU). Workers run on GPUs only with
/// --device gpu: each needs GPUs of its own (troupe-launch --gpus-per-worker).
bool uses_gpus(const train::Options& opts, troupe::Runtime& rt, bool multi_worker, bool tpu) {
  if (opts.device == "cpu" || (opts.device == "auto" && (multi_worker || tpu || opts.simulate)))
    return false;
  if (opts.device == "gpu") {
    try {
      (void) rt.resolve_device("GPU:0");
    } catch (const troupe::Error& e) {
      // No GPU: the Runtime's error says why.
      throw std::invalid_argument(std::string("--device gpu: ") + e.what() + "; use --device cpu");
    }
  }
  return gpu_count(rt) > 0;
}

/// One training step on this replica, shared by the mirrored and the TPU
/// loops: the packed all-reduce of the gradients, then the optimizer update.
/// A NaN or infinite loss (the all-reduced one, the same on every replica)
/// ends the job naming `step` (the job's steps, counted from 1), before the
/// update: a diverged model is an error, not a number to log.
train::StepResult train_one_step(const train::Mlp& model, train::Optimizer& optimizer, const troupe::Element& batch,
                                 int64_t step) {
  auto result = model.train_step(batch[0], batch[1]);
  (void) troupe::check_numerics(Tensor(result.loss_sum), "the train loss at step " + std::to_string(step));
  optimizer.apply(result.gradients);
  return result;
}

/// One epoch's sums over the steps: the all-reduced sums are the same on every
/// replica, so one replica's count for all; the times are the slowest replica's.
struct EpochTotals {
  double loss_sum = 0, correct = 0, examples = 0, compute_seconds = 0, communication_seconds = 0;

  void add(const train::StepResult& r) {
    loss_sum += r.loss_sum;
    correct += r.correct;
    examples += r.examples;
    compute_seconds += r.compute_seconds;
    communication_seconds += r.communication_seconds;
  }
  /// Adds the steps that `per_replica` (one total per replica) summed.
  void add_slowest(const std::vector<EpochTotals>& per_replica) {
    const auto& first = per_replica.front();
    loss_sum += first.loss_sum;
    correct += first.correct;
    examples += first.examples;
    double compute = 0, communication = 0;
    for (const auto& each : per_replica) {
      compute = std::max(compute, each.compute_seconds);
      communication = std::max(communication, each.communication_seconds);
    }
    compute_seconds += compute;
    communication_seconds += communication;
  }
};

/// FNV-1a over the bytes of every weight: equal runs print equal fingerprints.
uint64_t fingerprint(const std::vector<troupe::Variable>& variables) {
  uint64_t hash = 1469598103934665603ull;
  for (const auto& v : variables) {
    const Tensor t = v.read_value().to("CPU:0");
    for (size_t i = 0; i < t.nbytes(); ++i)
      hash = (hash ^ static_cast<uint64_t>(t.raw_data()[i])) * 1099511628211ull;
  }
  return hash;
}

int run(train::Options opts) {
  auto train_split = train::load_split(opts.data_dir, "train");
  const auto test_split = train::load_split(opts.data_dir, "t10k");
  if (opts.limit_examples > 0)
    train_split = {train_split.images.slice(0, opts.limit_examples), train_split.labels.slice(0, opts.limit_examples)};
  if (opts.strategy == "ps")
    return train::run_parameter_server_training(opts, train_split, test_split);
  if (troupe::ClusterResolver::from_env()->cluster_spec().num_tasks("ps") > 0)
    throw std::invalid_argument("TF_CONFIG names ps tasks (troupe-launch --ps): that is a parameter-server "
                                "cluster; pass --strategy ps");
  const int64_t train_examples = train_split.images.shape()[0];

  const auto resolver = troupe::ClusterResolver::from_env();
  const bool multi_worker = resolver->cluster_spec().num_tasks_total() > 1;
  const bool tpu = opts.strategy == "tpu";
  if (tpu && multi_worker)
    throw std::invalid_argument("--strategy tpu runs in one process, but TF_CONFIG names a cluster of "
                                + std::to_string(resolver->cluster_spec().num_tasks_total())
                                + " tasks: run it without troupe-launch (or unset TF_CONFIG)");
  std::unique_ptr<troupe::Runtime> rt;
  if (tpu && opts.simulate)
    rt = std::make_unique<troupe::Runtime>(troupe::Simulation{.seed = opts.seed, .logical_tpu_cores = opts.tpu_cores});
  else if (tpu)
    rt = std::make_unique<troupe::Runtime>(troupe::RuntimeOptions{.logical_tpu_cores = opts.tpu_cores});
  else if (opts.simulate)
    rt = std::make_unique<troupe::Runtime>(troupe::Simulation{.seed = opts.seed, .logical_cpu_devices = opts.replicas});
  else if (multi_worker)
    rt = std::make_unique<troupe::Runtime>(resolver, troupe::RuntimeOptions{.logical_cpu_devices = opts.replicas});
  else
    rt = std::make_unique<troupe::Runtime>(troupe::RuntimeOptions{.logical_cpu_devices = opts.replicas});
  std::vector<std::string> devices;
  const bool gpus_used = uses_gpus(opts, *rt, multi_worker, tpu);
  if (gpus_used) {
    // One replica per GPU by default; more replicas than GPUs split each card
    // into logical GPUs (in one process: across workers NCCL takes one rank
    // per GPU).
    const int gpus = gpu_count(*rt);
    if (!opts.replicas_given)
      opts.replicas = gpus;
    if (multi_worker && opts.replicas > gpus)
      throw std::invalid_argument("--replicas " + std::to_string(opts.replicas) + " with --device gpu across "
                                  "workers needs a GPU per replica, and this worker sees " + std::to_string(gpus)
                                  + "; drop --replicas, or give each worker more GPUs (troupe-launch "
                                    "--gpus-per-worker)");
    if (opts.replicas > gpus)
      rt = std::make_unique<troupe::Runtime>(troupe::RuntimeOptions{
        .logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = (opts.replicas + gpus - 1) / gpus});
    for (int i = 0; i < opts.replicas; ++i)
      devices.push_back("GPU:" + std::to_string(i));
  } else {
    for (int i = 0; i < opts.replicas; ++i)
      devices.push_back("CPU:" + std::to_string(i));
  }
  std::unique_ptr<troupe::Strategy> strategy_owner;
  troupe::TPUStrategy* tpu_strategy = nullptr;
  if (tpu) {
    troupe::TPUClusterResolver tpu_resolver("local"); // the strategy keeps a copy
    troupe::initialize_tpu_system(*rt, tpu_resolver);
    auto owner = std::make_unique<troupe::TPUStrategy>(*rt, tpu_resolver, opts.steps_per_run);
    tpu_strategy = owner.get();
    strategy_owner = std::move(owner);
  } else if (multi_worker) {
    // GPU tensors cross workers through NCCL.
    troupe::CommunicationOptions communication;
    if (gpus_used)
      communication.implementation = troupe::CommunicationImplementation::NCCL;
    strategy_owner = std::make_unique<troupe::MultiWorkerMirroredStrategy>(*rt, communication, devices);
  } else {
    strategy_owner = std::make_unique<troupe::MirroredStrategy>(*rt, devices);
  }
  troupe::Strategy& strategy = *strategy_owner;
  // Workers started with other flags or data would train apart or wait for
  // each other: each compares its job with the others', and all fail together
  // naming what differs (nothing to compare with one worker).
  strategy.extended().check_same_across_workers(train::job_settings(opts, train_split));
  // Only the chief (worker 0) writes checkpoints and reports, as in TensorFlow.
  const bool chief = strategy.extended().worker_index() == 0;
  const int first_replica = strategy.extended().worker_index() * opts.replicas;

  train::Mlp model(strategy, opts.seed);
  // TPU steps have static shapes: the last partial batch is dropped.
  const int64_t steps_per_epoch =
    tpu ? train_examples / opts.global_batch : (train_examples + opts.global_batch - 1) / opts.global_batch;
  if (steps_per_epoch == 0)
    throw std::invalid_argument("--batch " + std::to_string(opts.global_batch) + " is larger than the "
                                + std::to_string(train_examples)
                                + " training examples: --strategy tpu drops a partial batch, so an epoch would "
                                  "have no step; pass a smaller --batch or a larger --limit");
  train::Optimizer optimizer(strategy, model.variables(), opts.optimizer, opts.learning_rate, opts.momentum,
                             steps_per_epoch * opts.epochs);
  troupe::Variable epochs_done = [&] {
    auto scope = strategy.scope();
    return strategy.create_variable(Tensor(int64_t{0}), {.name = "epochs_done", .trainable = false});
  }();
  std::vector<troupe::Variable> saved = model.variables();
  for (const auto& v : optimizer.state())
    saved.push_back(v);
  saved.push_back(epochs_done);
  troupe::Checkpoint checkpoint(saved);

  std::vector<train::EpochMetrics> history;
  int first_epoch = 0;
  const std::string checkpoint_path = opts.checkpoint_dir.empty() ? "" : opts.checkpoint_dir + "/model.ckpt";
  if (!checkpoint_path.empty()) {
    // Only the chief reads and writes the file; restore_if_exists gives every
    // worker the chief's state (weights, optimizer slots, epoch counter), so a
    // worker that cannot see the chief's folder resumes from the same epoch.
    if (chief)
      std::filesystem::create_directories(opts.checkpoint_dir);
    if (checkpoint.restore_if_exists(checkpoint_path)) {
      first_epoch = static_cast<int>(epochs_done.read_value().item<int64_t>());
      std::printf("resumed from %s after epoch %d, state fingerprint %016llx\n",
                  chief ? checkpoint_path.c_str() : "the chief's (worker 0's) checkpoint", first_epoch,
                  static_cast<unsigned long long>(fingerprint(saved)));
      std::fflush(stdout);
    }
  }
  std::cout << "training an MLP 784-256-128-10 on " << train_examples << " Fashion-MNIST images with "
            << strategy.describe();
  if (tpu)
    std::cout << " on " << opts.tpu_cores << " emulated TPU cores (CPU threads, not TPU hardware), "
              << opts.steps_per_run << " steps per host round trip";
  std::cout << ", global batch " << opts.global_batch << ", " << opts.optimizer
            << " (learning rate " << opts.learning_rate << ", cosine decay), seed " << opts.seed << "\n";

  const int last_epoch = opts.stop_after > 0 ? std::min(opts.epochs, first_epoch + opts.stop_after) : opts.epochs;
  // Each local replica's count of the job's steps (each replica writes its own).
  std::vector<int64_t> replica_steps(static_cast<size_t>(opts.replicas), steps_per_epoch * first_epoch);
  for (int epoch = first_epoch; epoch < last_epoch; ++epoch) {
    // The epoch's own shuffle seed: a resumed run sees the same order as an uninterrupted one.
    auto dataset = troupe::Dataset::from_tensor_slices(troupe::Element::tuple({train_split.images, train_split.labels}))
                     .shuffle(train_examples, opts.seed * 1000003 + static_cast<uint64_t>(epoch), false)
                     .batch(opts.global_batch, /*drop_remainder=*/tpu);
    auto dist = strategy.experimental_distribute_dataset(dataset);
    // The examples the epoch trains on (TPU: without the dropped partial batch).
    const int64_t epoch_examples = tpu ? steps_per_epoch * opts.global_batch : train_examples;
    train::ProgressBar bar(epoch + 1, opts.epochs, epoch_examples, !opts.quiet && chief);
    train::EpochMetrics metrics;
    metrics.epoch = epoch + 1;
    EpochTotals totals;
    uint64_t round_trips = 0;
    const auto start = Clock::now();
    if (tpu) {
      // steps_per_run steps per host round trip; each replica sums its steps'
      // results, read by the host once the round trip is back.
      auto& extended = tpu_strategy->extended();
      const auto trips_before = extended.host_round_trips();
      troupe::DistributedIterator iterator(dist);
      for (;;) {
        std::vector<EpochTotals> per_replica(static_cast<size_t>(opts.replicas));
        const auto round_trip = extended.experimental_run_steps_on_iterator(
          [&](troupe::MultiStepContext&, const troupe::Element& batch) {
            const auto replica = troupe::get_replica_context().replica_id_in_sync_group() - first_replica;
            per_replica[static_cast<size_t>(replica)].add(
              train_one_step(model, optimizer, batch, ++replica_steps[static_cast<size_t>(replica)]));
          },
          iterator);
        if (round_trip.steps_run() == 0)
          break;
        totals.add_slowest(per_replica);
        bar.update(static_cast<int64_t>(per_replica.front().examples), totals.loss_sum / totals.examples);
      }
      round_trips = extended.host_round_trips() - trips_before;
    } else {
      std::vector<EpochTotals> per_replica(static_cast<size_t>(opts.replicas));
      for (const auto& step : dist) {
        for (auto& each : per_replica)
          each = {};
        strategy.run([&](const troupe::Element& batch) {
          const auto replica = troupe::get_replica_context().replica_id_in_sync_group() - first_replica;
          per_replica[static_cast<size_t>(replica)].add(
            train_one_step(model, optimizer, batch, ++replica_steps[static_cast<size_t>(replica)]));
        }, step);
        totals.add_slowest(per_replica);
        bar.update(static_cast<int64_t>(per_replica.front().examples), totals.loss_sum / totals.examples);
      }
    }
    bar.finish();
    metrics.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    metrics.train_loss = totals.loss_sum / totals.examples;
    metrics.train_accuracy = totals.correct / totals.examples;
    metrics.compute_seconds = totals.compute_seconds;
    metrics.communication_seconds = totals.communication_seconds;
    metrics.test_accuracy = accuracy(model, test_split);
    history.push_back(metrics);
    std::printf("epoch %d/%d: train loss %.4f, train accuracy %.4f, test accuracy %.4f, %.2f s "
                "(per step, summed: compute %.2f s, all-reduce %.2f s), %.0f examples/s",
                metrics.epoch, opts.epochs, metrics.train_loss, metrics.train_accuracy, metrics.test_accuracy,
                metrics.seconds, metrics.compute_seconds, metrics.communication_seconds,
                totals.examples / metrics.seconds);
    if (tpu)
      std::printf(", %llu host round trips for %lld steps", static_cast<unsigned long long>(round_trips),
                  static_cast<long long>(steps_per_epoch));
    std::printf("\n");
    std::fflush(stdout);
    if (!checkpoint_path.empty()) {
      epochs_done.assign(Tensor(static_cast<int64_t>(epoch + 1)));
      // Every worker calls save (it is collective); only the chief writes the file.
      checkpoint.save(checkpoint_path);
    }
  }

  if (!history.empty() && chief) {
    std::filesystem::create_directories(opts.out_dir);
    train::write_csv(opts.out_dir, history);
    std::string why;
    if (train::write_plot(opts.out_dir, why))
      std::cout << "wrote " << opts.out_dir << "/metrics.csv and metrics.png\n";
    else
      std::cout << "wrote " << opts.out_dir << "/metrics.csv; no plot: " << why << "\n";
  }
  std::printf("final test accuracy %.4f\n", accuracy(model, test_split));
  std::printf("final weights fingerprint %016llx\n", static_cast<unsigned long long>(fingerprint(model.variables())));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  train::Options opts;
  try {
    opts = train::parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "train_fashion_mnist: " << e.what() << "\n";
    return 2;
  }
  try {
    return run(opts);
  } catch (const std::exception& e) {
    std::cerr << "train_fashion_mnist: " << e.what() << "\n";
    return 1;
  }
}
