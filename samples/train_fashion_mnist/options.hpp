#pragma once

#include <cstdint>
#include <string>

namespace train {

/// The training job's command line.
struct Options {
  std::string strategy = "mirrored"; ///< "mirrored" (synchronous), "ps" (asynchronous, parameter servers) or "tpu"
  int replicas = 4;                  ///< mirrored: replicas; ps: devices per worker (default 1 there); tpu: --tpu-cores
  /// mirrored: "cpu" or "gpu" replicas; "auto" (default) takes the GPUs when there are any.
  std::string device = "auto";
  bool replicas_given = false;  ///< --replicas was passed (GPU replicas default to one per GPU)
  int workers = 2;                   ///< ps: worker tasks of the LocalCluster
  int ps = 2;                        ///< ps: parameter-server tasks of the LocalCluster
  int tpu_cores = 8;                 ///< tpu: emulated TPU cores of the slice, one replica each
  int steps_per_run = 10;            ///< tpu: steps the host hands the cores per round trip
  int epochs = 5;
  uint64_t seed = 1;
  int64_t global_batch = 256;
  std::string optimizer = "adam"; ///< "adam" or "sgd" (with momentum)
  double learning_rate = 0;       ///< 0: the optimizer's default (adam 3e-3, sgd 0.1)
  double momentum = 0.9;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string checkpoint_dir;     ///< empty: no checkpoints
  std::string out_dir = "fashion_mnist_output"; ///< where metrics.csv and metrics.png go
  bool simulate = false;          ///< deterministic simulation runtime (slow; for tests)
  bool quiet = false;             ///< no progress bar
  int64_t limit_examples = 0;     ///< 0: all; else train on the first N examples (tests)
  int stop_after = 0;             ///< 0: run to --epochs; else stop after this many epochs, as if interrupted
};

/// Parses the command line; throws std::invalid_argument naming the flag, the
/// value and what it accepts, or the --out or --checkpoint directory that
/// cannot be created or written. `--help` prints usage and exits.
[[nodiscard]] Options parse_options(int argc, const char* const* argv);

/// Creates `dir` when missing and writes a file in it; throws
/// std::invalid_argument naming `flag`, `dir`, why, and the fix.
void check_writable_dir(const std::string& flag, const std::string& dir);

} // namespace train
