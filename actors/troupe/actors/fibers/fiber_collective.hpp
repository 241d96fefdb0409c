#pragma once

#include <functional>
#include <vector>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// A collective whose last part each replica runs on its own fiber (the
/// collectives of GPU tensors: the replica's device actor enqueues them),
/// handed to every replica by the collective group once it is agreed on.
class FiberCollective {
public:
  virtual ~FiberCollective() = default;

  /// Replica `replica`'s share; returns its outputs. `await` suspends the
  /// calling fiber until a completion is set. Throws Error naming what failed.
  [[nodiscard]] virtual std::vector<Tensor> run(int replica, const std::function<void(const Completion&)>& await) = 0;
};

} // namespace troupe::internal
