#pragma once

#include <troupe/strategies/strategy.hpp>

namespace troupe::internal {

/// TensorFlow's default strategy: what get_strategy() returns outside any
/// scope. One replica on "CPU:0"; run calls the function directly on the
/// calling thread, in the default replica context.
class DefaultStrategy final : public Strategy {
public:
  DefaultStrategy();

  /// The process-wide instance.
  [[nodiscard]] static DefaultStrategy& instance();

  /// Its replica context (collectives are identities over one replica).
  [[nodiscard]] ReplicaContext& replica_context() noexcept;
};

} // namespace troupe::internal
