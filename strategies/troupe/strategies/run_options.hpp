#pragma once

namespace troupe {

/// Options of a TPU step (tf.distribute.RunOptions).
struct RunOptions {
  /// Pad a partial batch (the dataset's last, when it is not batched with
  /// drop_remainder=True) with zero rows to the static batch size instead of
  /// failing, and log which rows are padding. TensorFlow defaults to true
  /// (its XLA dynamic padder keeps the real sizes); troupe defaults to false,
  /// since padded rows would otherwise count in losses and metrics unnoticed.
  bool experimental_enable_dynamic_batch_size = false;
};

} // namespace troupe
