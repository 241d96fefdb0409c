#include <troupe/strategies/strategy.hpp>

#include <algorithm>

#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>
#include <troupe/strategies/distributed_input.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy_scope.hpp>
#include <troupe/strategies/variable_state.hpp>

namespace troupe {

Strategy::Strategy(std::unique_ptr<StrategyExtended> extended) : extended_(std::move(extended)) {
  extended_->container_ = this;
}

Strategy::~Strategy() = default;

int Strategy::num_replicas_in_sync() const {
  return extended_->num_replicas_in_sync();
}

StrategyScope Strategy::scope() {
  return StrategyScope(*this);
}

Variable Strategy::create_variable(const Tensor& initial, const VariableOptions& options) {
  detail::require_strategy_scope(*this, "create_variable");
  Tensor value = initial;
  if (extended_->num_workers() > 1 && initial.valid()) {
    // Every worker starts from the chief's (worker 0's) value, as in TensorFlow.
    std::vector<Tensor> results(extended_->worker_devices().size());
    auto errors = extended_->call_for_each_replica([&](int replica) {
      results[static_cast<size_t>(replica)] = get_replica_context().broadcast_from_first_replica({initial}).front();
    });
    for (auto& e : errors)
      if (e)
        std::rethrow_exception(e);
    value = results.front();
  }
  auto state = internal::new_variable_state(*this, value, options, extended_->variable_devices());
  // Only a variable that was made takes its name.
  state->name = extended_->unique_variable_name(options.name.empty() ? "Variable" : options.name);
  return internal::VariableAccess::wrap(std::move(state));
}

std::vector<Tensor> Strategy::experimental_local_results(const Variable& variable) const {
  return internal::VariableAccess::state(variable, "experimental_local_results").copies;
}

std::string Strategy::describe() const {
  std::string out = extended_->strategy_name() + "(devices=[";
  const auto& devices = extended_->worker_devices();
  for (size_t i = 0; i < devices.size(); ++i)
    out += (i > 0 ? ", " : "") + devices[i].short_name();
  return out + "])";
}

void Strategy::fail_argument_replicas(int size) const {
  fail(Errc::invalid_argument, "strategy.run: a distributed argument has " + std::to_string(size)
                                 + " values but " + describe() + " has "
                                 + std::to_string(extended_->worker_devices().size())
                                 + " replicas on this worker; create it with this strategy");
}

void Strategy::run_each_replica(const std::function<void(int)>& body) {
  if (const auto* frame = detail::current_context_frame(); frame != nullptr && frame->in_merge_call)
    fail(Errc::failed_precondition, "run: strategy.run cannot be called inside merge_call's function; "
                                    "return from it and call run afterwards");
  detail::require_cross_replica(*this, "run");
  auto errors = extended_->call_for_each_replica(body);
  // A replica's own exception is the cause; collective failures on the other
  // replicas are its consequence. Rethrow the first cause as it was thrown.
  std::vector<int> failed;
  std::vector<std::string> messages;
  Errc code = Errc::internal;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i])
      continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const CollectiveError& e) {
      if (failed.empty())
        code = e.code();
      failed.push_back(static_cast<int>(i));
      messages.emplace_back(e.what());
    } catch (...) {
      std::rethrow_exception(errors[i]);
    }
  }
  if (failed.empty())
    return;
  bool same = std::all_of(messages.begin(), messages.end(),
                          [&](const std::string& m) { return m == messages.front(); });
  std::string out = "strategy.run failed on " + std::string(failed.size() == 1 ? "replica " : "replicas ");
  for (size_t i = 0; i < failed.size(); ++i)
    out += (i > 0 ? ", " : "") + std::to_string(failed[i]);
  if (same) {
    out += ": " + messages.front();
  } else {
    for (size_t i = 0; i < failed.size(); ++i)
      out += "\n  replica " + std::to_string(failed[i]) + ": " + messages[i];
  }
  throw CollectiveError(code, out);
}

namespace {

// Cross-replica sums accumulate in a wide dtype (int64 for integers, float32
// for 16-bit floats), so a MEAN divides the exact sum, as TensorFlow's mean
// kernels do, and the result is cast back to the values' dtype.
DType accumulation_dtype(DType dtype) {
  switch (dtype) {
    case DType::int32:
    case DType::uint8: return DType::int64;
    case DType::float16:
    case DType::bfloat16: return DType::float32;
    default: return dtype;
  }
}

} // namespace

Tensor Strategy::reduce(ReduceOp op, const DistributedValues<Tensor>& value, std::optional<int> axis) {
  detail::require_cross_replica(*this, "reduce");
  const auto& values = value.values();
  if (values.empty())
    fail(Errc::invalid_argument, "reduce: the distributed value has no components");
  const DType dtype = values.front().dtype();
  const DType wide = accumulation_dtype(dtype);
  Tensor total;
  double count = 0;
  if (axis) {
    // Sum along the axis on each replica and count the elements reduced, so
    // MEAN divides by the examples of all replicas, not by the replica count.
    const auto& first = values.front();
    const int first_axis = first.shape().normalize_axis(*axis);
    for (size_t i = 0; i < values.size(); ++i) {
      const auto& v = values[i];
      const int ax = v.shape().normalize_axis(*axis);
      if (v.dtype() != dtype || v.rank() != first.rank() || ax != first_axis
          || v.shape().with_dim(ax, 0) != first.shape().with_dim(first_axis, 0))
        fail(Errc::shape_mismatch, "reduce: replica 0 has a " + std::string(name(dtype)) + " tensor of shape "
                                     + first.shape().to_string() + " but replica " + std::to_string(i) + " has a "
                                     + std::string(name(v.dtype())) + " tensor of shape " + v.shape().to_string()
                                     + "; along axis " + std::to_string(*axis)
                                     + " the shapes may differ only in that axis");
      count += static_cast<double>(v.shape()[ax]);
      auto partial = reduce_sum(v.cast(wide), ax);
      total = total.valid() ? add(total, partial) : partial;
    }
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].shape() != values.front().shape() || values[i].dtype() != dtype)
        fail(Errc::shape_mismatch, "reduce: replica 0 has a " + std::string(name(dtype)) + " tensor of shape "
                                     + values.front().shape().to_string() + " but replica " + std::to_string(i)
                                     + " has a " + std::string(name(values[i].dtype())) + " tensor of shape "
                                     + values[i].shape().to_string() + "; pass an axis to reduce along it first");
      auto v = values[i].cast(wide);
      total = total.valid() ? add(total, v) : v;
    }
    count = static_cast<double>(values.size());
  }
  if (extended().num_workers() > 1) {
    // The other workers' replicas count too: one cross-worker all-reduce of
    // every local replica's partial sum and its element count.
    auto reduced = across_workers_sum({total, Tensor(count)});
    total = reduced[0];
    count = reduced[1].item<double>();
  }
  if (op == ReduceOp::MEAN)
    total = divide(total, scalar_like(count, wide));
  return total.cast(dtype);
}

void Strategy::require_workers_reachable(const char* method) const {
  // Across workers a cross-replica reduction is a collective of this worker's
  // replicas, which merge_call's function runs while they wait for it.
  if (const auto* frame = detail::current_context_frame(); frame != nullptr && frame->in_merge_call)
    fail(Errc::not_supported,
         std::string(method) + " of a " + extended_->strategy_name() + " with " + std::to_string(extended_->num_workers())
           + " workers cannot run inside merge_call's function (it would combine every worker's values while "
             "this worker's replicas wait in merge_call); reduce in the replica function with "
             "get_replica_context().all_reduce, and pass the result to merge_call");
}

std::vector<Tensor> Strategy::across_workers_sum(const std::vector<Tensor>& local_sum) {
  require_workers_reachable("reduce");
  // Replica 0 contributes this worker's sum and the others zeros, so that the
  // all-reduce adds each worker's value once.
  std::vector<std::vector<Tensor>> results(extended_->worker_devices().size());
  auto errors = extended_->call_for_each_replica([&](int replica) {
    std::vector<Tensor> mine;
    for (const auto& t : local_sum)
      mine.push_back(replica == 0 ? t : Tensor::zeros(t.shape(), t.dtype()));
    results[static_cast<size_t>(replica)] = get_replica_context().all_reduce(ReduceOp::SUM, mine);
  });
  for (auto& e : errors)
    if (e)
      std::rethrow_exception(e);
  return results.front();
}

Tensor Strategy::reduce(ReduceOp op, const Tensor& value, std::optional<int> axis) {
  detail::require_cross_replica(*this, "reduce");
  // TensorFlow's rule: a value that is the same on every replica can be
  // averaged, but summing it over several replicas is refused.
  if (op == ReduceOp::SUM && num_replicas_in_sync() > 1)
    fail(Errc::invalid_argument, "reduce: a non-distributed value cannot be reduced with SUM over "
                                   + std::to_string(num_replicas_in_sync())
                                   + " replicas (TensorFlow refuses it too): pass the PerReplica value that "
                                     "strategy.run returned, or use MEAN");
  if (extended().num_workers() > 1) {
    // The same value on every replica of every worker: its mean is itself.
    if (!axis)
      return value;
  }
  std::vector<Tensor> copies(extended().worker_devices().size(), value);
  return reduce(op, PerReplica<Tensor>(std::move(copies)), axis);
}

DistributedDataset Strategy::experimental_distribute_dataset(const Dataset& dataset, const InputOptions& options) {
  detail::require_cross_replica(*this, "experimental_distribute_dataset");
  return internal::distribute_dataset(*extended_, dataset, options);
}

DistributedDataset
Strategy::distribute_datasets_from_function(const std::function<Dataset(const InputContext&)>& fn,
                                            const InputOptions& options) {
  detail::require_cross_replica(*this, "distribute_datasets_from_function");
  return internal::distribute_datasets_from_function(*extended_, fn, options);
}

Tensor Strategy::gather(const DistributedValues<Tensor>& value, int axis) {
  detail::require_cross_replica(*this, "gather");
  if (extended().num_workers() == 1)
    return concat(value.values(), axis);
  // Every worker's replicas, in global replica order: one cross-worker all_gather.
  require_workers_reachable("gather");
  std::vector<Tensor> results(extended_->worker_devices().size());
  const auto& values = value.values();
  auto errors = extended_->call_for_each_replica([&](int replica) {
    results[static_cast<size_t>(replica)] = get_replica_context().all_gather(values.at(static_cast<size_t>(replica)), axis);
  });
  for (auto& e : errors)
    if (e)
      std::rethrow_exception(e);
  return results.front();
}

} // namespace troupe
