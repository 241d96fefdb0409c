#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/collectives/communication_options.hpp>
#include <troupe/net/bootstrap/collective_membership.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe::internal {

struct CrossWorkerSetup;

/// Where a worker stands among the workers of a multi-worker strategy.
struct WorkerPlacement {
  int worker_index = 0;
  int num_workers = 1;
  std::optional<CollectiveMembership> cluster; ///< none for a single worker
};

/// StrategyExtended of the strategies whose replicas on this worker live in
/// this process (MirroredStrategy, OneDeviceStrategy, and each worker of a
/// MultiWorkerMirroredStrategy): one replica actor per device and a
/// collective group between them; with several workers, the group's
/// collectives continue across workers (hierarchically) over the cluster's
/// data plane, and replica ids count every worker's replicas.
class LocalReplicasExtended final : public StrategyExtended {
public:
  /// Resolves `devices` against the runtime (errors name the bad one and the fix).
  LocalReplicasExtended(std::string strategy_name, Runtime& runtime,
                        const std::vector<std::string>& devices, CommunicationOptions options,
                        WorkerPlacement placement = {});
  ~LocalReplicasExtended() override;

  /// Spawns the replicas; called once the owning Strategy exists.
  void start();

  [[nodiscard]] int num_replicas_in_sync() const override {
    return static_cast<int>(devices_.size()) * placement_.num_workers;
  }
  [[nodiscard]] int num_workers() const override { return placement_.num_workers; }
  [[nodiscard]] int worker_index() const override { return placement_.worker_index; }
  [[nodiscard]] const std::vector<DeviceSpec>& worker_devices() const override { return devices_; }
  std::vector<std::exception_ptr> call_for_each_replica(const std::function<void(int)>& body) override;
  [[nodiscard]] std::string strategy_name() const override { return name_; }
  [[nodiscard]] Runtime* runtime() const override { return &runtime_; }

private:
  /// Compares this worker's cluster settings (the strategy's position among
  /// cluster strategies, replicas, CommunicationOptions, collective knobs)
  /// with every other worker's through the runtime's AgreementGroup; a
  /// difference is Error(failed_precondition) on every worker, naming it.
  /// Returns whether GPU tensors cross workers through the host's ring
  /// (gpu_tensors_through_host, from every worker's GPU capability).
  bool agree_on_cluster_settings(uint64_t position, const CrossWorkerSetup& setup);

  std::string name_;
  Runtime& runtime_;
  std::vector<DeviceSpec> devices_;
  CommunicationOptions options_;
  WorkerPlacement placement_;
  std::vector<std::unique_ptr<detail::ContextFrame>> frames_;
  std::vector<std::unique_ptr<ReplicaContext>> contexts_;
  std::unique_ptr<ReplicaGroup> group_;
};

} // namespace troupe::internal
