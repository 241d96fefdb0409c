#include <troupe/strategies/strategy.hpp>

#include <algorithm>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/distributed_dataset.hpp>
#include <troupe/strategies/distributed_input.hpp>
#include <troupe/strategies/strategy_extended.hpp>
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

int Strategy::num_local_replicas() const {
  return static_cast<int>(extended_->worker_devices().size());
}

int Strategy::first_local_replica_id() const {
  return extended_->worker_index() * num_local_replicas();
}

StrategyScope Strategy::scope() {
  return StrategyScope(*this);
}

Variable Strategy::create_variable(const Tensor& initial, const VariableOptions& options) {
  detail::require_strategy_scope(*this, "create_variable");
  extended_->check_variable_creation();
  // Every worker starts from the chief's (worker 0's) value, as in TensorFlow.
  const Tensor value = initial.valid() ? extended_->cross_device_ops().broadcast(initial) : initial;
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

Tensor Strategy::reduce(ReduceOp op, const DistributedValues<Tensor>& value, std::optional<int> axis) {
  detail::require_cross_replica(*this, "reduce");
  return extended_->cross_device_ops().reduce(op, value, axis);
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
  return extended_->cross_device_ops().reduce_mirrored(op, value, axis);
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
  if (extended_->requires_identical_shapes()) {
    bool same = true;
    std::string shapes;
    for (size_t r = 0; r < value.size(); ++r) {
      same = same && value[static_cast<int>(r)].shape() == value[0].shape();
      shapes += (r == 0 ? "" : ", ") + ("replica " + std::to_string(r) + " has " + value[static_cast<int>(r)].shape().to_string());
    }
    if (!same)
      fail(Errc::invalid_argument, describe() + ".gather needs the same shape on every replica (TPUs need static "
                                                 "shapes), but " + shapes + ": pad the values to one shape");
  }
  return extended_->cross_device_ops().gather(value, axis);
}

} // namespace troupe
