#include <troupe/strategies/parameter_server_strategy.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/parameter_server_extended.hpp>
#include <troupe/strategies/sharded_variable_factory.hpp>

namespace troupe {

namespace {

internal::ParameterServerExtended& ps_extended(const Strategy& strategy) {
  return static_cast<internal::ParameterServerExtended&>(const_cast<Strategy&>(strategy).extended());
}

} // namespace

ParameterServerStrategy::ParameterServerStrategy(Runtime& runtime, std::optional<Partitioner> variable_partitioner)
  : Strategy(std::make_unique<internal::ParameterServerExtended>(runtime, std::move(variable_partitioner))) {
}

ParameterServerStrategy::~ParameterServerStrategy() = default;

ShardedVariable ParameterServerStrategy::create_variable(const Tensor& initial, const VariableOptions& options) {
  if (internal::WorkerContext::current())
    fail(Errc::failed_precondition,
         "ParameterServerStrategy.create_variable inside a scheduled function: creating variables inside a "
         "function given to ClusterCoordinator.schedule is not supported; create them in strategy.scope() "
         "before scheduling");
  detail::require_strategy_scope(*this, "create_variable");
  auto& ext = ps_extended(*this);
  const std::string base = options.name.empty() ? "Variable" : options.name;
  RoundRobinPlacement placement = ext.placement();
  // Across processes only the coordinator creates the shards; the workers,
  // running the same program, make the same handles (same ids and placement).
  auto variable = internal::make_sharded_variable(runtime(), ext.parameter_servers(), extended().unique_variable_name(base),
                                                  initial, ext.partitioner(), placement, ext.is_coordinator());
  ext.placement() = placement;
  return variable;
}

int ParameterServerStrategy::num_workers_in_cluster() const noexcept {
  return ps_extended(*this).num_workers_in_cluster();
}

int ParameterServerStrategy::num_ps() const noexcept {
  return ps_extended(*this).num_ps();
}

const std::optional<Partitioner>& ParameterServerStrategy::variable_partitioner() const noexcept {
  return ps_extended(*this).partitioner();
}

Runtime& ParameterServerStrategy::runtime() const noexcept {
  return *ps_extended(*this).runtime();
}

} // namespace troupe
