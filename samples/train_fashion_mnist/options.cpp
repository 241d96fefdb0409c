#include "options.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <type_traits>

#include <CLI/CLI.hpp>

#include "number_option.hpp"

#include <unistd.h>

namespace train {

using troupe::cli::add_number;

Options parse_options(int argc, const char* const* argv) {
  Options opts;
  CLI::App app("Data-parallel training of an MLP on Fashion-MNIST with MirroredStrategy or TPUStrategy (on "
               "emulated TPU cores), or asynchronous training with ParameterServerStrategy.",
               "train_fashion_mnist");
  // Repeating an option is no error: the last value counts.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--strategy", opts.strategy,
                 "mirrored (default: synchronous, all-reduce) or ps (asynchronous: each step is a function "
                 "scheduled on one worker, the weights sharded over parameter servers) or tpu (synchronous, "
                 "TPUStrategy on --tpu-cores emulated TPU cores, --steps-per-run steps per host round trip)")
    ->check(CLI::IsMember({"mirrored", "ps", "tpu"}))
    ->type_name("NAME");
  add_number(app, "--replicas", opts.replicas, 1, 64,
             "replicas (logical CPU devices) of MirroredStrategy (default 4); with --strategy ps the "
             "devices of each worker (default 1)");
  app.add_option("--device", opts.device,
                 "--strategy mirrored: where the replicas run: gpu (the GPUs, split into --replicas logical "
                 "GPUs when there are fewer; default when this machine has a GPU and runs one process; across "
                 "workers one replica per GPU of each worker, through NCCL: give each its own with "
                 "troupe-launch --gpus-per-worker), cpu (--replicas logical CPU devices) or auto")
    ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
    ->type_name("NAME");
  add_number(app, "--workers", opts.workers, 1, 64, "--strategy ps: worker tasks (default 2)");
  add_number(app, "--ps", opts.ps, 1, 64, "--strategy ps: parameter-server tasks (default 2)");
  add_number(app, "--tpu-cores", opts.tpu_cores, 1, 32,
             "--strategy tpu: cores of the emulated TPU slice, one replica each: 1, 2, 4, 8, 16 or 32 "
             "(default 8)");
  add_number(app, "--steps-per-run", opts.steps_per_run, 1, 100000,
             "--strategy tpu: training steps the host hands the cores per round trip (default 10)");
  add_number(app, "--epochs", opts.epochs, 1, 1000,
             "passes over the 60000 training images (default 5)");
  add_number(app, "--seed", opts.seed, uint64_t{0}, UINT64_MAX,
             "initialisation and shuffling seed (default 1)");
  add_number(app, "--batch", opts.global_batch, int64_t{1}, int64_t{60000},
             "global batch size (default 256; with --strategy ps the batch of each step, default 128)");
  app.add_option("--optimizer", opts.optimizer, "adam (default) or sgd (with momentum)")
    ->check(CLI::IsMember({"adam", "sgd"}))
    ->type_name("NAME");
  add_number(app, "--learning-rate", opts.learning_rate, 1e-9, 10.0,
             "initial rate, decayed along a cosine to 5% (default: adam 0.003, sgd 0.1)");
  add_number(app, "--momentum", opts.momentum, 0.0, 0.999999, "sgd momentum (default 0.9)");
  app
    .add_option("--data-dir", opts.data_dir,
                "Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist, installed "
                "by Debian's dataset-fashion-mnist package)")
    ->type_name("DIR");
  app
    .add_option("--checkpoint", opts.checkpoint_dir,
                "save after every epoch and resume from the last save (with several workers "
                "only the chief's DIR is used: every worker resumes from the chief's checkpoint; with "
                "--strategy ps the coordinator saves the weights and the servers' optimizer slots)")
    ->type_name("DIR");
  app
    .add_option("--out", opts.out_dir,
                "where metrics.csv and metrics.png are written (default fashion_mnist_output)")
    ->type_name("DIR");
  add_number(app, "--limit", opts.limit_examples, int64_t{1}, int64_t{60000},
             "train on the first N examples only");
  add_number(app, "--stop-after", opts.stop_after, 1, 1000,
             "stop after N epochs of this run, as if interrupted (resume with --checkpoint)");
  app.add_flag("--simulate", opts.simulate, "run on the deterministic simulation runtime");
  app.add_flag("--quiet", opts.quiet, "no progress bar");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string(e.what()) + "; see --help");
  }
  if (opts.learning_rate == 0)
    opts.learning_rate = opts.optimizer == "adam" ? 3e-3 : 0.1;
  opts.replicas_given = app.count("--replicas") > 0;
  if (opts.device != "auto" && opts.strategy != "mirrored")
    throw std::invalid_argument("--device applies to --strategy mirrored only; drop it (--strategy " + opts.strategy
                                + " runs on CPU devices)");
  if (opts.device == "gpu" && opts.simulate)
    throw std::invalid_argument("--device gpu: the simulation runtime has no GPUs; drop --simulate or use --device cpu");
  if (opts.strategy == "ps") {
    if (app.count("--replicas") == 0)
      opts.replicas = 1;
    // Each step updates the weights on its own: smaller steps, more of them,
    // reach the mirrored job's accuracy in the same epochs despite staleness.
    if (app.count("--batch") == 0)
      opts.global_batch = 128;
    if (opts.simulate)
      throw std::invalid_argument("--simulate is not available with --strategy ps: drop it (the simulated "
                                  "parameter-server cluster runs in troupe's tests and samples/ps_examples)");
  } else {
    for (const char* flag : {"--workers", "--ps"})
      if (app.count(flag) > 0)
        throw std::invalid_argument(std::string(flag) + " applies to --strategy ps only; with --strategy " + opts.strategy
                                    + (opts.strategy == "tpu" ? " use --tpu-cores (one replica per core)"
                                                              : " use --replicas (or troupe-launch --workers for processes)"));
  }
  if (opts.strategy == "tpu") {
    if (app.count("--replicas") > 0)
      throw std::invalid_argument("--replicas does not apply to --strategy tpu: each of the --tpu-cores cores is one "
                                  "replica; pass --tpu-cores instead");
    if (opts.tpu_cores != 1 && opts.tpu_cores != 2 && opts.tpu_cores != 4 && opts.tpu_cores != 8
        && opts.tpu_cores != 16 && opts.tpu_cores != 32)
      throw std::invalid_argument("--tpu-cores " + std::to_string(opts.tpu_cores)
                                  + " is not a TPU slice size: pass 1, 2, 4, 8, 16 or 32");
    // A TPU step has a static shape: every replica takes the same share.
    if (opts.global_batch % opts.tpu_cores != 0)
      throw std::invalid_argument("--batch " + std::to_string(opts.global_batch) + " is not divisible by --tpu-cores "
                                  + std::to_string(opts.tpu_cores)
                                  + ": TPU replicas need equal static batches; pass a multiple of "
                                  + std::to_string(opts.tpu_cores));
    opts.replicas = opts.tpu_cores;
  } else {
    for (const char* flag : {"--tpu-cores", "--steps-per-run"})
      if (app.count(flag) > 0)
        throw std::invalid_argument(std::string(flag) + " applies to --strategy tpu only; pass --strategy tpu");
  }
  // Known before training, not after the last epoch.
  check_writable_dir("--out", opts.out_dir);
  if (!opts.checkpoint_dir.empty())
    check_writable_dir("--checkpoint", opts.checkpoint_dir);
  return opts;
}

void check_writable_dir(const std::string& flag, const std::string& dir) {
  const auto fix = "; pass " + flag + " a directory this user can write";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw std::invalid_argument(flag + " \"" + dir + "\": cannot create the directory (" + ec.message() + ")" + fix);
  if (!std::filesystem::is_directory(dir))
    throw std::invalid_argument(flag + " \"" + dir + "\" is not a directory" + fix);
  // access(W_OK) would say yes to root on a read-only file system: write a file.
  const auto probe = std::filesystem::path(dir) / (".write_check_" + std::to_string(::getpid()));
  std::FILE* file = std::fopen(probe.c_str(), "w");
  if (file == nullptr)
    throw std::invalid_argument(flag + " \"" + dir + "\": cannot write there (" + std::strerror(errno) + ")" + fix);
  std::fclose(file);
  std::filesystem::remove(probe, ec);
}

} // namespace train
