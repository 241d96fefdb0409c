#pragma once

#include <functional>
#include <iterator>
#include <memory>
#include <optional>

#include <troupe/actors/fwd.hpp>
#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/input_context.hpp>
#include <troupe/strategies/distributed_values.hpp>

namespace troupe {

namespace internal {
class InputPipeline;
class StepSource;
} // namespace internal

/// A dataset distributed over a strategy's replicas
/// (tf.distribute.DistributedDataset), made by
/// strategy.experimental_distribute_dataset or distribute_datasets_from_function.
///
/// Each step gives every replica its own element (a PerReplica<Element>, which
/// strategy.run unwraps; a single-tensor element converts to `const Tensor&`).
/// Iterating starts a pass: an input actor runs the pipeline and keeps steps
/// ready ahead of the replicas. No further transformations can be added.
class DistributedDataset {
public:
  using StepSourceFactory = std::function<std::unique_ptr<internal::StepSource>()>;

  /// Multi-worker strategies whose workers may run out of data at different
  /// steps: `any_worker_has_data(this worker has a step)` is a collective
  /// across workers, called once per step (as TensorFlow does); a worker that
  /// ran out while others did not gives its `local_replicas` empty batches,
  /// and the pass ends when no worker has a step.
  struct StepAgreement {
    std::function<bool(bool)> any_worker_has_data;
    int local_replicas = 1;
  };

  /// For strategies: passes are made by `make_source`, run on `runtime` (or the
  /// calling thread when null), with `spec` as each replica's element spec.
  DistributedDataset(Runtime* runtime, StepSourceFactory make_source, ElementSpec spec, InputOptions options);
  /// The same, with the workers' end-of-data agreement, and the replicas'
  /// devices: with InputOptions.experimental_fetch_to_device, a replica on a
  /// GPU gets its batch in GPU memory (the copy is queued on the GPU's stream
  /// when the step is taken; the host does not wait for it).
  DistributedDataset(Runtime* runtime, StepSourceFactory make_source, ElementSpec spec, InputOptions options,
                     StepAgreement agreement, std::vector<DeviceSpec> replica_devices = {});

  /// One pass over the steps (tf.distribute.DistributedIterator).
  class Iterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = PerReplica<Element>;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;

    Iterator();
    explicit Iterator(const DistributedDataset& dataset);

    /// The next step; Error(out_of_range) "End of sequence" after the last one.
    [[nodiscard]] PerReplica<Element> get_next();
    /// The next step, or nothing after the last one.
    [[nodiscard]] std::optional<PerReplica<Element>> get_next_as_optional();
    /// The next `n` (>= 1) steps, fewer only after the last one (none at the
    /// end), taken from the input actor in one request, for loops that run
    /// several steps per host round trip (TPUStrategy's steps_per_run). A
    /// pipeline error comes after the steps before it (with the next call).
    [[nodiscard]] std::vector<PerReplica<Element>> get_next_steps(int n);
    /// Each replica's element spec.
    [[nodiscard]] const ElementSpec& element_spec() const noexcept { return spec_; }

    // Range-for: `for (const auto& x : dist)`.
    const value_type& operator*() const { return *current_; }
    const value_type* operator->() const { return &*current_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, std::default_sentinel_t) { return !it.current_; }

  private:
    /// A step of empty batches shaped by the element spec.
    [[nodiscard]] std::vector<Element> empty_step() const;
    /// Queues the copies of a GPU replica's batch to its GPU.
    void fetch_to_devices(std::vector<Element>& step) const;

    std::shared_ptr<internal::InputPipeline> pipeline_;
    std::optional<value_type> current_;
    ElementSpec spec_;
    StepAgreement agreement_;
    /// Where each replica's batch goes; empty: it stays in host memory.
    std::vector<DeviceSpec> fetch_to_;
    bool ended_ = false;
  };

  /// Starts a pass and positions it on the first step.
  [[nodiscard]] Iterator begin() const;
  [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

  /// Each replica's element spec (the batch dimension unknown: None).
  [[nodiscard]] const ElementSpec& element_spec() const noexcept { return spec_; }

private:
  friend class Iterator;
  Runtime* runtime_;
  StepSourceFactory make_source_;
  ElementSpec spec_;
  InputOptions options_;
  StepAgreement agreement_;
  std::vector<DeviceSpec> replica_devices_;
};

/// A pass over a DistributedDataset (tf.distribute.DistributedIterator), as
/// scheduled functions take it: `[&](troupe::DistributedIterator& it) { ... }`.
using DistributedIterator = DistributedDataset::Iterator;

} // namespace troupe
