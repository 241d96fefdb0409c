#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <troupe/datasets/fwd.hpp>

namespace troupe {

/// How a dataset is split across workers (tf.data.experimental.AutoShardPolicy).
enum class AutoShardPolicy : unsigned char {
  AUTO,  ///< FILE when the dataset reads files, else DATA
  FILE,  ///< each worker reads its share of the files (error if fewer files than workers)
  DATA,  ///< each worker reads everything and keeps every num_workers-th element
  OFF,   ///< no sharding across workers
  HINT,  ///< TF: shard where the pipeline has shard(SHARD_HINT, ...); troupe has no hint yet, so no sharding
};

/// "AUTO", "FILE", "DATA", "OFF", "HINT".
[[nodiscard]] std::string_view name(AutoShardPolicy policy) noexcept;

/// Options attached to a dataset (tf.data.Options, the parts troupe uses).
struct DatasetOptions {
  AutoShardPolicy auto_shard_policy = AutoShardPolicy::AUTO;
  /// Elements produced in a deterministic order (shuffle with a seed stays deterministic either way).
  bool deterministic = true;
};

} // namespace troupe
