#pragma once

#include <string>

#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/dataset_options.hpp>

namespace troupe {

/// What auto-sharding decided for one worker.
struct AutoShardDecision {
  /// The pipeline this worker runs.
  Dataset dataset;
  /// The policy that was applied: FILE, DATA or OFF (AUTO resolves to one of them).
  AutoShardPolicy applied = AutoShardPolicy::OFF;
  /// One line for the log: "auto-shard: policy AUTO -> FILE, 4 files over 2 workers (the dataset reads files)".
  std::string summary;
};

/// Rewrites `dataset` so that worker `worker_index` of `num_workers` reads its
/// share, per the dataset's AutoShardPolicy (tf.data's auto-sharding):
/// - FILE: the reader source at the root of the pipeline reads files
///   worker_index, worker_index + num_workers, ...; fewer files than workers is
///   Error(invalid_argument) naming both counts and the alternatives.
/// - DATA: every worker reads everything and keeps every num_workers-th element.
/// - AUTO: FILE when the pipeline starts with a reader of at least num_workers
///   files, DATA otherwise.
/// - OFF: unchanged. HINT: troupe has no SHARD_HINT placeholder yet, so it does not shard.
/// With one worker the dataset is returned unchanged (and the summary is empty).
[[nodiscard]] AutoShardDecision auto_shard(const Dataset& dataset, int num_workers, int worker_index);

} // namespace troupe
