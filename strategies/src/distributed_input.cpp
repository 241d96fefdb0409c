#include <troupe/strategies/distributed_input.hpp>
#include <troupe/strategies/static_shape_steps.hpp>

#include <deque>
#include <random>

#include <troupe/actors/replicas/step_source.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/datasets/agreed_seeds.hpp>
#include <troupe/datasets/auto_shard.hpp>
#include <troupe/datasets/rebatch.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe::internal {

namespace {

/// Splits each global batch of the dataset into `pieces` per-replica batches
/// and keeps pieces [first, first + count): all of them for a single worker,
/// this worker's replicas' share across workers.
class GlobalBatchSource final : public StepSource {
public:
  GlobalBatchSource(const Dataset& dataset, int pieces, int first, int count)
    : elements_(dataset.node()->iterator()), pieces_(pieces), first_(first), count_(count) {}

  std::optional<std::vector<Element>> next_step() override {
    auto batch = elements_->next();
    if (!batch)
      return std::nullopt;
    auto all = split_global_batch(*batch, pieces_);
    if (first_ == 0 && count_ == pieces_)
      return all;
    return std::vector<Element>(all.begin() + first_, all.begin() + first_ + count_);
  }

private:
  std::unique_ptr<detail::ElementIterator> elements_;
  int pieces_;
  int first_;
  int count_;
};

/// An empty batch shaped like `like` (its rows dropped), for replicas that get
/// no data in the last step.
Element empty_like(const Element& like) {
  std::vector<Tensor> parts;
  for (const auto& c : like.components())
    parts.push_back(c.slice(0, 0));
  return like.is_tuple() ? Element::tuple(std::move(parts)) : Element(std::move(parts.front()));
}

/// Gives each local replica its own element of a per-replica-batched dataset.
class PerReplicaSource final : public StepSource {
public:
  PerReplicaSource(const Dataset& dataset, int replicas)
    : elements_(dataset.node()->iterator()), replicas_(replicas) {}

  std::optional<std::vector<Element>> next_step() override {
    std::vector<Element> step;
    for (int r = 0; r < replicas_; ++r) {
      auto e = elements_->next();
      if (!e)
        break;
      step.push_back(std::move(*e));
    }
    if (step.empty())
      return std::nullopt;
    if (static_cast<int>(step.size()) < replicas_) {
      // The data ran out inside the step: as experimental_distribute_dataset
      // does for uneven batches, the remaining replicas get empty batches.
      for (const auto& c : step.front().components())
        if (c.rank() == 0)
          fail(Errc::invalid_argument,
               "distribute_datasets_from_function: the data ran out after " + std::to_string(step.size())
                 + " of " + std::to_string(replicas_)
                 + " replicas' elements in the last step, and its elements are scalars, so the other "
                   "replicas cannot get an empty batch: batch the dataset, or make its length a multiple "
                   "of the number of replicas");
      while (static_cast<int>(step.size()) < replicas_)
        step.push_back(empty_like(step.front()));
    }
    return step;
  }

private:
  std::unique_ptr<detail::ElementIterator> elements_;
  int replicas_;
};

/// A worker's share of its own stream in a multi-worker strategy (TensorFlow's
/// rebatching of file-sharded or unsharded input): each global batch is cut
/// into one per-replica batch per replica of every worker, and each step hands
/// this worker's replicas the next `count` of them, so that one step of all
/// workers consumes one global batch's worth of examples.
class RebatchedSource final : public StepSource {
public:
  RebatchedSource(const Dataset& dataset, int pieces, int count)
    : elements_(dataset.node()->iterator()), pieces_(pieces), count_(count) {}

  std::optional<std::vector<Element>> next_step() override {
    while (static_cast<int>(queue_.size()) < count_) {
      auto batch = elements_->next();
      if (!batch)
        break;
      for (auto& piece : split_global_batch(*batch, pieces_))
        queue_.push_back(std::move(piece));
    }
    if (queue_.empty())
      return std::nullopt;
    std::vector<Element> step;
    while (!queue_.empty() && static_cast<int>(step.size()) < count_) {
      step.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    // Short only at the very end: the remaining replicas get empty batches.
    while (static_cast<int>(step.size()) < count_)
      step.push_back(empty_like(step.front()));
    return step;
  }

private:
  std::unique_ptr<detail::ElementIterator> elements_;
  int pieces_;
  int count_;
  std::deque<Element> queue_;
};

/// `spec` with every component's first dimension unknown (None).
ElementSpec with_unknown_batch(ElementSpec spec) {
  for (auto& c : spec.components) {
    if (c.shape.rank() == 0)
      continue;
    auto dims = c.shape.dims();
    dims[0] = -1;
    c.shape = Shape(std::move(dims));
  }
  return spec;
}

/// The end-of-data agreement of a multi-worker strategy: one cross-worker
/// reduce per step of how many workers still have a step.
DistributedDataset::StepAgreement step_agreement(StrategyExtended& extended) {
  DistributedDataset::StepAgreement agreement;
  agreement.local_replicas = static_cast<int>(extended.worker_devices().size());
  agreement.any_worker_has_data = [&extended, replicas = agreement.local_replicas](bool has_step) {
    std::vector<Tensor> flags(static_cast<size_t>(replicas), Tensor(int32_t{0}));
    flags[0] = Tensor(int32_t{has_step ? 1 : 0});
    const Tensor workers_with_data =
      extended.container_strategy().reduce(ReduceOp::SUM, PerReplica<Tensor>(std::move(flags)), std::nullopt);
    return workers_with_data.item<int32_t>() > 0;
  };
  return agreement;
}

/// A seed drawn by the chief (worker 0) and given to every worker: one
/// cross-worker reduce to which only the chief's first replica adds its draw.
/// Every worker makes it for every distributed dataset, whatever its
/// pipeline, so that the workers' collectives stay in step.
uint64_t chief_seed(StrategyExtended& extended) {
  std::vector<Tensor> draws(extended.worker_devices().size(), Tensor(int64_t{0}));
  if (extended.worker_index() == 0) {
    std::random_device device;
    draws[0] = Tensor(static_cast<int64_t>((static_cast<uint64_t>(device()) << 32) ^ device()));
  }
  const Tensor seed =
    extended.container_strategy().reduce(ReduceOp::SUM, PerReplica<Tensor>(std::move(draws)), std::nullopt);
  return static_cast<uint64_t>(seed.item<int64_t>());
}

/// `dataset` with the random draws in `scope` (unseeded shuffles,
/// list_files) replaced by seeds derived from the chief's `seed`, so that
/// workers reading the same elements before they take their shares see them
/// in the same order: otherwise each worker's share comes from another
/// permutation, and an epoch repeats some examples and misses others. Logged once.
Dataset with_chief_seeds(const Dataset& dataset, uint64_t seed, SeedScope scope, const char* why) {
  auto agreed = with_agreed_seeds(dataset, seed, scope);
  if (!agreed.seeded.empty()) {
    std::string nodes;
    for (const auto& n : agreed.seeded)
      nodes += (nodes.empty() ? "" : ", ") + n;
    TROUPE_LOG(info, "data") << "unseeded " << nodes << " " << why << ": every worker shuffles with seeds derived from "
                             << seed << ", the chief's, so that each epoch gives every example once (pass a seed "
                             << "to choose the order yourself)";
  }
  return agreed.dataset;
}

/// `make` itself, or, for a strategy that requires identical shapes
/// (TPUStrategy), `make`'s steps checked (or padded) to static batch sizes.
DistributedDataset::StepSourceFactory static_steps_if_required(const StrategyExtended& extended, bool pad,
                                                               DistributedDataset::StepSourceFactory make) {
  if (!extended.requires_identical_shapes())
    return make;
  return [make = std::move(make), pad]() -> std::unique_ptr<StepSource> {
    return std::make_unique<StaticShapeSteps>(make(), pad);
  };
}

} // namespace

DistributedDataset distribute_dataset(StrategyExtended& extended, const Dataset& dataset,
                                      const InputOptions& options, bool pad_partial_batches) {
  const int replicas = static_cast<int>(extended.worker_devices().size());
  auto spec = dataset.element_spec();
  for (size_t c = 0; c < spec.components.size(); ++c)
    if (spec.components[c].shape.rank() == 0)
      fail(Errc::invalid_argument,
           "experimental_distribute_dataset: the dataset's elements have no batch dimension (component "
             + std::to_string(c) + " is " + spec.components[c].to_string()
             + "); batch it by the global batch size first: dataset.batch(global_batch_size)");
  // Agreed before auto-sharding decides, which every worker may not decide alike.
  const uint64_t seed = extended.num_workers() > 1 ? chief_seed(extended) : 0;
  auto decision = auto_shard(dataset, extended.num_workers(), extended.worker_index());
  if (decision.applied == AutoShardPolicy::DATA) {
    // TensorFlow's rebatching: every worker reads every global batch and
    // keeps its replicas' share of it, so that one step of all workers is one
    // global batch, split over every replica in replica-id order.
    const int total = extended.num_replicas_in_sync();
    const int first = extended.worker_index() * replicas;
    TROUPE_LOG(info, "data") << "auto-shard: DATA, worker " << extended.worker_index() << " keeps replicas "
                             << first << ".." << first + replicas - 1 << "' share of every global batch";
    const Dataset agreed = with_chief_seeds(dataset, seed, SeedScope::whole_pipeline, "before DATA auto-sharding");
    return DistributedDataset(
      extended.runtime(),
      static_steps_if_required(extended, pad_partial_batches, [agreed, total, first, replicas] {
        return std::make_unique<GlobalBatchSource>(agreed, total, first, replicas);
      }),
      with_unknown_batch(std::move(spec)), options, DistributedDataset::StepAgreement{}, extended.worker_devices());
  }
  if (!decision.summary.empty())
    TROUPE_LOG(info, "data") << decision.summary;
  Dataset sharded = decision.dataset;
  if (extended.num_workers() > 1) {
    // Each worker reads its own files (or everything, with OFF): its global
    // batches are rebatched for every replica, and the workers agree on the
    // end each step, since their streams may differ in length.
    const int total = extended.num_replicas_in_sync();
    return DistributedDataset(
      extended.runtime(),
      static_steps_if_required(extended, pad_partial_batches,
                               [sharded, total, replicas] { return std::make_unique<RebatchedSource>(sharded, total, replicas); }),
      with_unknown_batch(std::move(spec)), options, step_agreement(extended), extended.worker_devices());
  }
  return DistributedDataset(
    extended.runtime(),
    static_steps_if_required(extended, pad_partial_batches,
                             [sharded, replicas] { return std::make_unique<GlobalBatchSource>(sharded, replicas, 0, replicas); }),
    with_unknown_batch(std::move(spec)), options, DistributedDataset::StepAgreement{}, extended.worker_devices());
}

DistributedDataset distribute_datasets_from_function(StrategyExtended& extended,
                                                     const std::function<Dataset(const InputContext&)>& fn,
                                                     const InputOptions& options) {
  const int replicas = static_cast<int>(extended.worker_devices().size());
  InputContext context(extended.num_workers(), extended.worker_index(), extended.num_replicas_in_sync());
  Dataset dataset = fn(context);
  if (extended.num_workers() > 1)
    dataset = with_chief_seeds(dataset, chief_seed(extended), SeedScope::before_last_shard, "before shard()");
  auto spec = dataset.element_spec();
  // Each worker's function may give a dataset of another length.
  return DistributedDataset(
    extended.runtime(),
    static_steps_if_required(extended, false, [dataset, replicas] { return std::make_unique<PerReplicaSource>(dataset, replicas); }),
    std::move(spec), options,
    extended.num_workers() > 1 ? step_agreement(extended) : DistributedDataset::StepAgreement{},
    extended.worker_devices());
}

} // namespace troupe::internal
