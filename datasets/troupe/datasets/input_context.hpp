#pragma once

#include <cstdint>

#include <troupe/datasets/fwd.hpp>

namespace troupe {

/// What distribute_datasets_from_function tells the function that builds one
/// input pipeline (tf.distribute.InputContext).
class InputContext {
public:
  InputContext(int num_input_pipelines, int input_pipeline_id, int num_replicas_in_sync);

  /// Input pipelines in total (one per worker).
  [[nodiscard]] int num_input_pipelines() const noexcept { return num_input_pipelines_; }
  /// This pipeline's index, in [0, num_input_pipelines).
  [[nodiscard]] int input_pipeline_id() const noexcept { return input_pipeline_id_; }
  [[nodiscard]] int num_replicas_in_sync() const noexcept { return num_replicas_in_sync_; }

  /// global_batch_size / num_replicas_in_sync; Error(invalid_argument) when it
  /// does not divide, naming both numbers.
  [[nodiscard]] int64_t get_per_replica_batch_size(int64_t global_batch_size) const;

private:
  int num_input_pipelines_;
  int input_pipeline_id_;
  int num_replicas_in_sync_;
};

/// Options of a distributed dataset (tf.distribute.InputOptions).
struct InputOptions {
  /// Steps of per-replica batches the input actor keeps ready ahead of the
  /// replicas (TF's default prefetches num_replicas_in_sync per-replica batches: one step).
  int experimental_per_replica_buffer_size = 1;
  /// Prefetch onto the replica devices (always true for CPU devices, which share memory).
  bool experimental_fetch_to_device = true;
};

} // namespace troupe
