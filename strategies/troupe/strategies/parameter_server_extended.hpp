#pragma once

// ParameterServerStrategy's StrategyExtended (not installed).

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include <troupe/actors/fwd.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/strategies/partitioners.hpp>
#include <troupe/strategies/round_robin_placement.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe::internal {

class LocalReplicasExtended;
class WorkerContext;

/// Where ParameterServerStrategy's replicas run: each worker (and the
/// coordinator) has its own group of replica actors over the worker devices,
/// made on its first strategy.run; a scheduled function's strategy.run
/// finds its worker's group through the WorkerContext it runs in.
class ParameterServerExtended final : public StrategyExtended {
public:
  ParameterServerExtended(Runtime& runtime, std::optional<Partitioner> partitioner);
  ~ParameterServerExtended() override;

  [[nodiscard]] int num_replicas_in_sync() const override { return static_cast<int>(devices_.size()); }
  [[nodiscard]] const std::vector<DeviceSpec>& worker_devices() const override { return devices_; }
  [[nodiscard]] const std::vector<DeviceSpec>& parameter_devices() const override { return ps_devices_; }
  std::vector<std::exception_ptr> call_for_each_replica(const std::function<void(int)>& body) override;
  [[nodiscard]] Runtime* runtime() const override { return &runtime_; }
  [[nodiscard]] std::string strategy_name() const override { return "ParameterServerStrategy"; }
  void check_variable_creation() const override;

  [[nodiscard]] int num_workers_in_cluster() const noexcept { return workers_; }
  [[nodiscard]] int num_ps() const noexcept { return static_cast<int>(servers_.size()); }
  [[nodiscard]] const std::optional<Partitioner>& partitioner() const noexcept { return partitioner_; }
  [[nodiscard]] const std::vector<ParameterServerActorHandle>& parameter_servers() const noexcept { return servers_; }
  [[nodiscard]] RoundRobinPlacement& placement() noexcept { return placement_; }
  /// Whether this process is the coordinator (the chief), not a worker or ps task.
  [[nodiscard]] bool is_coordinator() const noexcept { return coordinator_; }

protected:
  void agree_on_settings(const std::vector<std::pair<std::string, std::string>>& settings) override;

private:
  [[nodiscard]] LocalReplicasExtended& replicas_of(WorkerContext* worker);

  Runtime& runtime_;
  std::optional<Partitioner> partitioner_;
  int workers_ = 0;
  bool coordinator_ = true;
  std::vector<ParameterServerActorHandle> servers_;
  std::vector<DeviceSpec> devices_;
  std::vector<DeviceSpec> ps_devices_;
  RoundRobinPlacement placement_;
  std::mutex mutex_;
  /// Per worker context (nullptr: the coordinator), its replicas.
  std::map<WorkerContext*, std::unique_ptr<LocalReplicasExtended>> replicas_;
};

} // namespace troupe::internal
