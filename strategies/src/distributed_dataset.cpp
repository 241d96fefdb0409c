#include <troupe/strategies/distributed_dataset.hpp>

#include <troupe/actors/replicas/input_pipeline.hpp>
#include <troupe/core/errors.hpp>

namespace troupe {

DistributedDataset::DistributedDataset(Runtime* runtime, StepSourceFactory make_source, ElementSpec spec,
                                       InputOptions options)
  : DistributedDataset(runtime, std::move(make_source), std::move(spec), options, StepAgreement{}) {
}

DistributedDataset::DistributedDataset(Runtime* runtime, StepSourceFactory make_source, ElementSpec spec,
                                       InputOptions options, StepAgreement agreement,
                                       std::vector<DeviceSpec> replica_devices)
  : runtime_(runtime), make_source_(std::move(make_source)), spec_(std::move(spec)), options_(options),
    agreement_(std::move(agreement)), replica_devices_(std::move(replica_devices)) {
  if (options_.experimental_per_replica_buffer_size < 1)
    fail(Errc::invalid_argument, "InputOptions.experimental_per_replica_buffer_size must be at least 1, got "
                                   + std::to_string(options_.experimental_per_replica_buffer_size));
}

DistributedDataset::Iterator DistributedDataset::begin() const {
  Iterator it(*this);
  ++it;
  return it;
}

DistributedDataset::Iterator::Iterator() = default;

DistributedDataset::Iterator::Iterator(const DistributedDataset& dataset)
  : pipeline_(std::make_shared<internal::InputPipeline>(dataset.runtime_, dataset.make_source_(),
                                                        dataset.options_.experimental_per_replica_buffer_size)),
    spec_(dataset.spec_), agreement_(dataset.agreement_) {
  // Host devices share the host's memory: only GPU replicas need a copy.
  bool any_gpu = false;
  for (const auto& device : dataset.replica_devices_)
    any_gpu = any_gpu || device.is_gpu();
  if (any_gpu && dataset.options_.experimental_fetch_to_device)
    fetch_to_ = dataset.replica_devices_;
}

void DistributedDataset::Iterator::fetch_to_devices(std::vector<Element>& step) const {
  for (std::size_t r = 0; r < step.size() && r < fetch_to_.size(); ++r) {
    if (!fetch_to_[r].is_gpu())
      continue;
    std::vector<Tensor> placed;
    for (const auto& component : step[r].components())
      placed.push_back(component.to(fetch_to_[r]));
    step[r] = step[r].is_tuple() ? Element::tuple(std::move(placed)) : Element(std::move(placed.front()));
  }
}

std::vector<Element> DistributedDataset::Iterator::empty_step() const {
  std::vector<Tensor> parts;
  for (const auto& c : spec_.components) {
    auto dims = c.shape.dims();
    if (dims.empty())
      fail(Errc::invalid_argument, "a worker ran out of data before the others, and its elements are scalars, so "
                                   "its replicas cannot get empty batches: batch the dataset");
    dims[0] = 0;
    for (auto& d : dims)
      d = d < 0 ? 0 : d; // an unknown dimension of an empty batch is 0
    parts.push_back(Tensor::zeros(Shape(dims), c.dtype));
  }
  const Element empty = spec_.tuple ? Element::tuple(std::move(parts)) : Element(std::move(parts.front()));
  return std::vector<Element>(static_cast<size_t>(agreement_.local_replicas), empty);
}

std::optional<PerReplica<Element>> DistributedDataset::Iterator::get_next_as_optional() {
  if (!pipeline_)
    fail(Errc::failed_precondition, "this distributed iterator is empty: get one with begin() of a "
                                    "DistributedDataset");
  if (ended_)
    return std::nullopt;
  auto step = pipeline_->next();
  if (agreement_.any_worker_has_data) {
    if (!agreement_.any_worker_has_data(step.has_value())) {
      ended_ = true; // every worker is out: later calls need no collective
      return std::nullopt;
    }
    if (!step)
      step = empty_step();
  }
  if (!step)
    return std::nullopt;
  fetch_to_devices(*step);
  return PerReplica<Element>(std::move(*step));
}

std::vector<PerReplica<Element>> DistributedDataset::Iterator::get_next_steps(int n) {
  if (!pipeline_)
    fail(Errc::failed_precondition, "this distributed iterator is empty: get one with begin() of a "
                                    "DistributedDataset");
  if (n < 1)
    fail(Errc::invalid_argument, "get_next_steps: n must be at least 1, got " + std::to_string(n));
  std::vector<PerReplica<Element>> steps;
  if (agreement_.any_worker_has_data) {
    // The workers agree on the end step by step.
    while (static_cast<int>(steps.size()) < n)
      if (auto step = get_next_as_optional())
        steps.push_back(std::move(*step));
      else
        break;
    return steps;
  }
  // The pipeline remembers its end and its error (given after the steps before it).
  for (auto& step : pipeline_->next_steps(static_cast<std::size_t>(n))) {
    fetch_to_devices(step);
    steps.emplace_back(std::move(step));
  }
  return steps;
}

PerReplica<Element> DistributedDataset::Iterator::get_next() {
  if (auto step = get_next_as_optional())
    return std::move(*step);
  fail(Errc::out_of_range, "End of sequence: the distributed dataset has no more steps (use "
                           "get_next_as_optional() or a range-for loop to stop at the end)");
}

DistributedDataset::Iterator& DistributedDataset::Iterator::operator++() {
  current_ = get_next_as_optional();
  return *this;
}

} // namespace troupe
