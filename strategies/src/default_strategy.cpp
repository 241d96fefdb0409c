#include <troupe/strategies/default_strategy.hpp>

#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe::internal {

namespace {

class DefaultExtended final : public StrategyExtended {
public:
  DefaultExtended() : devices_{DeviceSpec::local("CPU", 0)} {
    cross_device_ops_ = std::make_unique<ReductionToOneDevice>(1);
  }

  [[nodiscard]] int num_replicas_in_sync() const override { return 1; }
  [[nodiscard]] const std::vector<DeviceSpec>& worker_devices() const override { return devices_; }
  [[nodiscard]] std::string strategy_name() const override { return "DefaultStrategy"; }

  std::vector<std::exception_ptr> call_for_each_replica(const std::function<void(int)>& body) override {
    std::vector<std::exception_ptr> errors(1);
    try {
      body(0);
    } catch (...) {
      errors[0] = std::current_exception();
    }
    return errors;
  }

  void attach(Strategy& strategy) {
    context_ = std::make_unique<ReplicaContext>(strategy, 0, 1, devices_.front(), nullptr);
  }

  ReplicaContext& context() noexcept { return *context_; }

private:
  std::vector<DeviceSpec> devices_;
  std::unique_ptr<ReplicaContext> context_;
};

} // namespace

DefaultStrategy::DefaultStrategy() : Strategy(std::make_unique<DefaultExtended>()) {
  static_cast<DefaultExtended&>(extended()).attach(*this);
}

DefaultStrategy& DefaultStrategy::instance() {
  static DefaultStrategy strategy;
  return strategy;
}

ReplicaContext& DefaultStrategy::replica_context() noexcept {
  return static_cast<DefaultExtended&>(extended()).context();
}

} // namespace troupe::internal
