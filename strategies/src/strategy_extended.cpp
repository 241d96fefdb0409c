#include <troupe/strategies/strategy_extended.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>
#include <unordered_map>

#include <troupe/actors/runtime.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/actors/replicas/settings_agreement.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/variable_state.hpp>

namespace troupe {

/// Names taken by this strategy's variables and the colocation scopes in force.
struct StrategyExtended::VariableBook {
  std::mutex mutex;
  std::unordered_map<std::string, int> names_in_use;
  std::vector<std::vector<DeviceSpec>> colocations;
};

StrategyExtended::StrategyExtended() : book_(std::make_unique<VariableBook>()) {
}

StrategyExtended::~StrategyExtended() = default;

// -- agreement across workers -------------------------------------------------------------

void StrategyExtended::check_same_across_workers(const std::string& name, const std::string& value) {
  check_same_across_workers({{name, value}});
}

void StrategyExtended::check_same_across_workers(const std::string& name, double value) {
  // The shortest text that reads back as the same double: bitwise equal
  // values give equal texts, and 0.003 shows as "0.003".
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, value);
  check_same_across_workers(name, std::string(text, written.ptr));
}

void StrategyExtended::check_same_across_workers(const std::string& name, const TensorSpec& spec) {
  check_same_across_workers(name, spec.to_string());
}

void StrategyExtended::check_same_across_workers(const std::string& name, const ElementSpec& spec) {
  check_same_across_workers(name, spec.to_string());
}

void StrategyExtended::check_same_across_workers(const std::vector<std::pair<std::string, std::string>>& settings) {
  detail::require_cross_replica(container_strategy(), "check_same_across_workers");
  agree_on_settings(settings);
}

void StrategyExtended::agree_on_settings(const std::vector<std::pair<std::string, std::string>>& settings) {
  if (num_workers() == 1)
    return;
  std::vector<internal::WorkerSettings> workers;
  for (auto& [task, bytes] : cross_device_ops().gather_from_workers(internal::encode_settings(settings)))
    workers.push_back({task, internal::decode_settings(bytes, task)});
  internal::require_same_settings(workers, "check_same_across_workers",
                                  "Start every worker of the job with the same settings.");
}

// -- variables --------------------------------------------------------------------------

std::string StrategyExtended::unique_variable_name(const std::string& base) {
  // TensorFlow's Graph.unique_name, keyed case-insensitively as it is.
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  std::lock_guard guard(book_->mutex);
  auto& in_use = book_->names_in_use;
  std::string key = lower(base);
  int i = in_use[key]++;
  if (i == 0)
    return base;
  const std::string base_key = key;
  while (in_use.count(key) > 0)
    key = base_key + "_" + std::to_string(i++);
  in_use[key] = 1;
  return base + "_" + std::to_string(i - 1);
}

std::vector<DeviceSpec> StrategyExtended::variable_devices() const {
  std::lock_guard guard(book_->mutex);
  if (!book_->colocations.empty())
    return book_->colocations.back();
  return parameter_devices();
}

void StrategyExtended::end_colocation() noexcept {
  std::lock_guard guard(book_->mutex);
  if (!book_->colocations.empty())
    book_->colocations.pop_back();
}

VariableColocation StrategyExtended::colocate_vars_with(const Variable& variable) {
  detail::require_strategy_scope(container_strategy(), "colocate_vars_with");
  const auto& state = internal::VariableAccess::state(variable, "colocate_vars_with");
  if (state.strategy != &container_strategy())
    fail(Errc::invalid_argument,
         "colocate_vars_with: `colocate_vars_with` must only be passed a variable created in this "
         "tf.distribute.Strategy.scope(), not: variable '"
           + state.name + "' of " + state.strategy->describe() + " (this is " + container_strategy().describe()
           + ")");
  std::lock_guard guard(book_->mutex);
  book_->colocations.push_back(state.devices);
  return VariableColocation(*this, state.name);
}

void StrategyExtended::update_copies(Variable& variable, const std::function<Tensor(int, const Tensor&)>& fn) {
  auto& state = internal::VariableAccess::state(variable, "update");
  if (state.strategy != &container_strategy())
    fail(Errc::invalid_argument, "update: variable '" + state.name + "' belongs to " + state.strategy->describe()
                                   + ", not to " + container_strategy().describe()
                                   + "; update it through its own strategy's extended()");
  auto* ctx = internal::variable_context(state, "update");
  std::vector<int> replicas;
  if (ctx != nullptr) {
    replicas.push_back(internal::local_replica(state, *ctx));
  } else {
    for (size_t i = 0; i < state.copies.size(); ++i)
      replicas.push_back(static_cast<int>(i));
  }
  std::vector<Tensor> results;
  for (int r : replicas) {
    results.push_back(fn(r, state.copies[static_cast<size_t>(r)]));
    internal::check_value(state, results.back(), "update");
  }
  for (size_t k = 0; k < replicas.size(); ++k) {
    const auto r = static_cast<size_t>(replicas[k]);
    state.copies[r] = results[k].to(state.devices[r]);
  }
}

// -- reductions -------------------------------------------------------------------------

std::vector<DeviceSpec> StrategyExtended::destination_devices(const ReduceDestination& destination,
                                                              const char* method) const {
  if (destination.variable().valid()) {
    const auto& state = internal::VariableAccess::state(destination.variable(), method);
    if (state.strategy != &container_strategy())
      fail(Errc::invalid_argument, std::string(method) + ": the destination variable '" + state.name
                                     + "' belongs to " + state.strategy->describe() + ", not to "
                                     + container_strategy().describe());
    return state.devices;
  }
  if (destination.device().empty())
    fail(Errc::invalid_argument, std::string(method) + ": the destination is empty: pass a variable or a "
                                                       "device such as \"CPU:0\"");
  if (auto* rt = runtime())
    return {rt->resolve_device(destination.device())};
  return {DeviceSpec::from_string(destination.device())};
}

void StrategyExtended::check_components(const DistributedValues<Tensor>& value, const char* method) const {
  const auto local = worker_devices().size();
  if (value.size() != local)
    fail(Errc::invalid_argument, std::string(method) + ": the distributed value has " + std::to_string(value.size())
                                   + " components but " + container_strategy().describe() + " has "
                                   + std::to_string(local) + " local replicas; create it with this strategy");
}

namespace {

Mirrored<Tensor> place(const Tensor& value, const std::vector<DeviceSpec>& devices) {
  std::vector<Tensor> out;
  out.reserve(devices.size());
  for (const auto& d : devices)
    out.push_back(value.to(d));
  return Mirrored<Tensor>(std::move(out));
}

} // namespace

Mirrored<Tensor> StrategyExtended::reduce_to(ReduceOp op, const DistributedValues<Tensor>& value,
                                             const ReduceDestination& destinations) {
  detail::require_cross_replica(container_strategy(), "reduce_to");
  check_components(value, "reduce_to");
  auto devices = destination_devices(destinations, "reduce_to");
  return place(container_strategy().reduce(op, value), devices);
}

Mirrored<Tensor> StrategyExtended::reduce_to(ReduceOp op, const Tensor& value, const ReduceDestination& destinations) {
  detail::require_cross_replica(container_strategy(), "reduce_to");
  auto devices = destination_devices(destinations, "reduce_to");
  return place(container_strategy().reduce(op, value), devices);
}

std::vector<Mirrored<Tensor>> StrategyExtended::batch_reduce_to(
  ReduceOp op, const std::vector<std::pair<PerReplica<Tensor>, ReduceDestination>>& value_destination_pairs) {
  detail::require_cross_replica(container_strategy(), "batch_reduce_to");
  std::vector<std::vector<DeviceSpec>> devices;
  for (const auto& [value, destination] : value_destination_pairs) {
    check_components(value, "batch_reduce_to");
    devices.push_back(destination_devices(destination, "batch_reduce_to"));
  }
  std::vector<Mirrored<Tensor>> out;
  out.reserve(value_destination_pairs.size());
  for (size_t i = 0; i < value_destination_pairs.size(); ++i) {
    try {
      out.push_back(place(container_strategy().reduce(op, value_destination_pairs[i].first), devices[i]));
    } catch (const Error& e) {
      throw Error(e.code(), "batch_reduce_to: value " + std::to_string(i) + ": " + e.what());
    }
  }
  return out;
}

} // namespace troupe
