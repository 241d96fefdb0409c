#include <troupe/strategies/multi_step_context.hpp>

#include <algorithm>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy_scope.hpp>

namespace troupe {

MultiStepContext::MultiStepContext(MultiStepContext&& other) noexcept
  : replicas_(other.replicas_), first_replica_(other.first_replica_), steps_run_(other.steps_run_),
    pending_(std::move(other.pending_)), reduced_(std::move(other.reduced_)),
    per_replica_(std::move(other.per_replica_)) {}

void MultiStepContext::set_last_step_output(const std::string& name, const Tensor& output,
                                            std::optional<ReduceOp> reduce_op) {
  if (in_cross_replica_context())
    fail(Errc::failed_precondition, "MultiStepContext.set_last_step_output(\"" + name
                                      + "\") in cross-replica context: call it inside the step function, once "
                                        "per replica");
  const int replica = get_replica_context().replica_id_in_sync_group() - first_replica_;
  if (replica < 0 || replica >= replicas_)
    fail(Errc::failed_precondition, "MultiStepContext.set_last_step_output(\"" + name + "\") from replica "
                                      + std::to_string(replica + first_replica_)
                                      + ", which is not one of this loop's replicas");
  std::lock_guard lock(mutex_);
  auto [it, inserted] = pending_.try_emplace(name);
  auto& pending = it->second;
  if (inserted) {
    pending.reduce_op = reduce_op;
    pending.values.resize(static_cast<size_t>(replicas_));
  } else if (pending.reduce_op != reduce_op) {
    fail(Errc::invalid_argument, "MultiStepContext.set_last_step_output(\"" + name
                                   + "\"): every replica and step must give the same reduce_op for an output");
  }
  pending.values[static_cast<size_t>(replica)] = output;
}

const Tensor& MultiStepContext::last_step_output(const std::string& name) const {
  const auto it = reduced_.find(name);
  if (it == reduced_.end())
    fail(Errc::not_found, "MultiStepContext: no reduced last-step output \"" + name + "\" (outputs: " + names_text()
                            + "); outputs set without a reduce_op are read with last_step_per_replica_output");
  return it->second;
}

const PerReplica<Tensor>& MultiStepContext::last_step_per_replica_output(const std::string& name) const {
  const auto it = per_replica_.find(name);
  if (it == per_replica_.end())
    fail(Errc::not_found, "MultiStepContext: no per-replica last-step output \"" + name + "\" (outputs: "
                            + names_text() + "); outputs set with a reduce_op are read with last_step_output");
  return it->second;
}

void MultiStepContext::reduce_on_replica(int replica) {
  std::vector<std::pair<std::string, std::pair<ReduceOp, Tensor>>> outputs;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, pending] : pending_) {
      const auto& value = pending.values[static_cast<size_t>(replica)];
      if (pending.reduce_op && value)
        outputs.push_back({name, {*pending.reduce_op, *value}});
    }
  }
  for (const auto& [name, output] : outputs) {
    auto reduced = get_replica_context().all_reduce(output.first, output.second);
    if (replica == 0) {
      std::lock_guard lock(mutex_);
      reduced_.insert_or_assign(name, std::move(reduced));
    }
  }
}

void MultiStepContext::finish() {
  for (auto& [name, pending] : pending_) {
    if (pending.reduce_op)
      continue;
    std::vector<Tensor> values;
    for (auto& v : pending.values)
      if (v)
        values.push_back(*v);
    if (!values.empty())
      per_replica_.insert_or_assign(name, PerReplica<Tensor>(std::move(values)));
  }
  pending_.clear();
}

std::vector<std::string> MultiStepContext::output_names() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : reduced_)
    names.push_back(name);
  for (const auto& [name, value] : per_replica_)
    names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string MultiStepContext::names_text() const {
  std::string out;
  for (const auto& n : output_names())
    out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

} // namespace troupe
