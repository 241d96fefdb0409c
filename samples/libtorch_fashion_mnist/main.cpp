// A LibTorch model trained with troupe. The model (torch::nn), its forward
// and backward passes and the optimizer are LibTorch's; troupe distributes
// them: each replica's gradients go to troupe through DLPack without a copy,
// and troupe all-reduces them in place (MirroredStrategy over the replicas of
// this process, or MultiWorkerMirroredStrategy across the processes
// troupe-launch starts): the result is written into each parameter's own
// gradient tensor, where LibTorch's optimizer reads it.
//
//   libtorch_fashion_mnist --strategy mirrored --replicas 2
//   troupe-launch --workers 2 -- libtorch_fashion_mnist --strategy multi_worker
//
// The same model, data order, global batch and learning rate as
// bench/libtorch_ddp/ddp_fashion_mnist.py, PyTorch's own distributed training.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <ATen/DLConvertor.h>
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <troupe/troupe.hpp>

#include "../train_fashion_mnist/fashion_mnist_data.hpp"

namespace {

struct Options {
  std::string strategy = "mirrored";
  int replicas = 2;   ///< per process
  int epochs = 3;
  int64_t batch = 256; ///< global: every replica of every process together
  double learning_rate = 3e-3;
  uint64_t seed = 1;
  int threads = 1;    ///< LibTorch's intra-op threads per process
  int64_t max_steps = 0; ///< steps per epoch at most (0: the whole training set)
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
};

/// LibTorch's tensor over a troupe tensor's bytes, and the other way round:
/// DLPack both ways, no copy.
torch::Tensor to_torch(const troupe::Tensor& t) {
  return at::fromDLPack(t.to_dlpack());
}
troupe::Tensor to_troupe(const torch::Tensor& t) {
  return troupe::Tensor::from_dlpack(at::toDLPack(t));
}

/// The main job's MLP, 784-256-128-10 with ReLU, in torch::nn. Every replica
/// and process starts from the same weights: each parameter in turn drawn
/// uniformly from +-1/sqrt(fan_in) after seeding, which the Python peer draws
/// alike (LibTorch's C++ and Python Linear initialise differently).
torch::nn::Sequential make_model(uint64_t seed) {
  torch::nn::Sequential model(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 128),
                              torch::nn::ReLU(), torch::nn::Linear(128, 10));
  torch::manual_seed(seed);
  torch::NoGradGuard no_grad;
  for (auto& linear : model->modules(/*include_self=*/false))
    if (auto* l = linear->as<torch::nn::Linear>()) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(l->options.in_features()));
      l->weight.uniform_(-bound, bound);
      l->bias.uniform_(-bound, bound);
    }
  return model;
}

double accuracy(torch::nn::Sequential& model, const torch::Tensor& images, const torch::Tensor& labels) {
  torch::NoGradGuard no_grad;
  const auto predicted = model->forward(images).argmax(1);
  return predicted.eq(labels).sum().item<double>() / static_cast<double>(labels.size(0));
}

int train_model(const Options& opts, troupe::Strategy& strategy, int first_replica, int replicas_in_sync, bool chief) {
  torch::set_num_threads(opts.threads);
  const auto train_split = train::load_split(opts.data_dir, "train");
  const auto test_split = train::load_split(opts.data_dir, "t10k");
  const auto images = to_torch(train_split.images);
  const auto labels = to_torch(train_split.labels).to(torch::kLong);
  const auto test_images = to_torch(test_split.images);
  const auto test_labels = to_torch(test_split.labels).to(torch::kLong);

  // One model and optimizer per replica of this process: mirrored, they take
  // the same reduced gradients and stay equal, as a MirroredStrategy's
  // variables do.
  std::vector<torch::nn::Sequential> models;
  std::vector<torch::optim::Adam> optimizers;
  for (int r = 0; r < opts.replicas; ++r) {
    models.push_back(make_model(opts.seed));
    optimizers.emplace_back(models.back()->parameters(), torch::optim::AdamOptions(opts.learning_rate));
  }
  const int64_t n = images.size(0);
  const int64_t per_replica = opts.batch / replicas_in_sync;
  const int64_t steps = opts.max_steps > 0 ? std::min(opts.max_steps, n / opts.batch) : n / opts.batch;
  for (int epoch = 1; epoch <= opts.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    // Every process draws the same order (the seed and the epoch).
    torch::manual_seed(opts.seed + static_cast<uint64_t>(epoch));
    const auto order = torch::randperm(n, torch::kLong);
    double loss_sum = 0;
    for (int64_t step = 0; step < steps; ++step) {
      // Forward and backward of each replica's slice of the global batch, in LibTorch.
      std::vector<std::vector<troupe::Tensor>> gradients(static_cast<std::size_t>(opts.replicas));
      for (int r = 0; r < opts.replicas; ++r) {
        const auto begin = step * opts.batch + (first_replica + r) * per_replica;
        const auto rows = order.slice(0, begin, begin + per_replica);
        auto& model = models[static_cast<std::size_t>(r)];
        for (auto& p : model->parameters())
          p.mutable_grad() = torch::Tensor(); // backward writes fresh gradients
        auto loss = torch::nn::functional::cross_entropy(model->forward(images.index_select(0, rows)),
                                                         labels.index_select(0, rows));
        loss.backward();
        loss_sum += loss.item<double>();
        for (auto& p : model->parameters())
          gradients[static_cast<std::size_t>(r)].push_back(to_troupe(p.grad()));
      }
      // troupe all-reduces them in place: the mean over every replica of
      // every process lands in each parameter's own gradient.
      strategy.run([&] {
        const auto r = static_cast<std::size_t>(troupe::get_replica_context().replica_id_in_sync_group() - first_replica);
        troupe::get_replica_context().all_reduce_in_place(troupe::ReduceOp::MEAN, std::move(gradients[r]));
      });
      for (auto& optimizer : optimizers)
        optimizer.step();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (chief)
      std::printf("epoch %d/%d: train loss %.4f (this process's replicas), test accuracy %.4f, %.2f s\n", epoch,
                  opts.epochs, loss_sum / static_cast<double>(steps * opts.replicas),
                  accuracy(models.front(), test_images, test_labels), seconds);
  }
  if (chief)
    std::printf("RESULT test_accuracy %.4f\n", accuracy(models.front(), test_images, test_labels));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app{"A LibTorch model trained with troupe's strategies (Fashion-MNIST)"};
  app.add_option("--strategy", opts.strategy, "mirrored (replicas of this process) or multi_worker (under "
                                              "troupe-launch)")
    ->check(CLI::IsMember({"mirrored", "multi_worker"}));
  app.add_option("--replicas", opts.replicas, "replicas per process (default 2 mirrored, 1 multi_worker)")
    ->check(CLI::Range(1, 64));
  app.add_option("--epochs", opts.epochs, "epochs (default 3)")->check(CLI::Range(1, 1000));
  app.add_option("--batch", opts.batch, "global batch (default 256)")->check(CLI::Range(int64_t{1}, int64_t{60000}));
  app.add_option("--learning-rate", opts.learning_rate, "Adam's learning rate (default 0.003)");
  app.add_option("--seed", opts.seed, "initial weights and data order (default 1)");
  app.add_option("--max-steps", opts.max_steps, "steps per epoch at most (default: the whole training set)")
    ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--threads", opts.threads, "LibTorch's threads per process (default 1)")->check(CLI::Range(1, 256));
  app.add_option("--data-dir", opts.data_dir, "Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist, "
                                              "from Debian's dataset-fashion-mnist)");
  CLI11_PARSE(app, argc, argv);
  if (opts.strategy == "multi_worker" && app.count("--replicas") == 0)
    opts.replicas = 1;
  try {
    if (opts.strategy == "mirrored") {
      troupe::Runtime rt({.logical_cpu_devices = opts.replicas});
      // One replica per logical CPU device (MirroredStrategy's default is
      // TensorFlow's: the GPUs, else one CPU).
      std::vector<std::string> devices;
      for (int r = 0; r < opts.replicas; ++r)
        devices.push_back("CPU:" + std::to_string(r));
      troupe::MirroredStrategy strategy(rt, devices);
      if (opts.batch % opts.replicas != 0)
        throw std::invalid_argument("--batch " + std::to_string(opts.batch) + " is not divisible by the "
                                    + std::to_string(opts.replicas) + " replicas");
      return train_model(opts, strategy, 0, opts.replicas, true);
    }
    troupe::Runtime rt(troupe::ClusterResolver::from_env(), {.logical_cpu_devices = opts.replicas});
    troupe::MultiWorkerMirroredStrategy strategy(rt);
    const int in_sync = strategy.num_replicas_in_sync();
    if (opts.batch % in_sync != 0)
      throw std::invalid_argument("--batch " + std::to_string(opts.batch) + " is not divisible by the "
                                  + std::to_string(in_sync) + " replicas in sync");
    const int worker = strategy.extended().worker_index();
    return train_model(opts, strategy, worker * opts.replicas, in_sync, worker == 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_fashion_mnist: %s\n", e.what());
    return 1;
  }
}
