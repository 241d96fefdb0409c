#pragma once

// Giving a pipeline's own random draws one seed that every worker shares
// (internal: not installed).

#include <cstdint>
#include <string>
#include <vector>

#include <troupe/datasets/dataset.hpp>

namespace troupe::internal {

/// A pipeline whose nodes that drew their own random seed now use seeds
/// derived from an agreed one.
struct AgreedSeeds {
  Dataset dataset;
  /// describe() of each node that was given a seed, source first.
  std::vector<std::string> seeded;
};

/// Where in the pipeline the draws must agree.
enum class SeedScope {
  /// Every node: every worker reads the whole pipeline (DATA auto-sharding).
  whole_pipeline,
  /// The nodes before the last shard(): what each worker reads before it
  /// takes its share (distribute_datasets_from_function).
  before_last_shard,
};

/// Rewrites `dataset` so that every node in `scope` that drew its own random
/// seed (an unseeded shuffle or list_files) uses one derived from `seed` and
/// its position in the pipeline instead. Workers that pass the same `seed`
/// for the same pipeline then produce the same order in every pass, and each
/// pass (epoch) still has its own order. Nodes with a user seed are kept.
[[nodiscard]] AgreedSeeds with_agreed_seeds(const Dataset& dataset, uint64_t seed, SeedScope scope);

} // namespace troupe::internal
