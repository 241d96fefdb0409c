#pragma once

#include <functional>

#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/input_context.hpp>
#include <troupe/strategies/distributed_dataset.hpp>

namespace troupe::internal {

/// experimental_distribute_dataset for `extended`'s strategy: auto-shards
/// across workers (logging the decision once), then splits each global batch
/// over this worker's replicas. A strategy that requires identical shapes
/// (TPUStrategy) also gets static batches: a partial step is an error, or
/// padded with `pad_partial_batches` (see StaticShapeSteps).
[[nodiscard]] DistributedDataset distribute_dataset(StrategyExtended& extended, const Dataset& dataset,
                                                    const InputOptions& options, bool pad_partial_batches = false);

/// distribute_datasets_from_function: calls `fn` once for this worker's input
/// pipeline; each step takes one element per local replica (static batches
/// under TPUStrategy, as distribute_dataset).
[[nodiscard]] DistributedDataset
distribute_datasets_from_function(StrategyExtended& extended,
                                  const std::function<Dataset(const InputContext&)>& fn,
                                  const InputOptions& options);

} // namespace troupe::internal
