#pragma once

// How a strategy combines values across replicas and workers (internal: not installed).

#include <optional>

#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/fwd.hpp>

namespace troupe::internal {

/// How the values of a strategy's replicas are reduced, gathered and
/// broadcast in cross-replica context (TensorFlow's CrossDeviceOps, which
/// each StrategyExtended holds). Distributed values come with one component
/// per local replica; results cover every replica in sync, on every worker.
class CrossDeviceOps {
public:
  virtual ~CrossDeviceOps() = default;

  /// Strategy::reduce of a distributed value. With an axis, each component is
  /// first summed along it, and MEAN divides by the number of elements along
  /// that axis over all replicas. Sums accumulate in a wide dtype; the result
  /// has the values' dtype.
  [[nodiscard]] virtual Tensor reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                                      std::optional<int> axis) = 0;
  /// Strategy::reduce of a value that is the same on every replica.
  [[nodiscard]] virtual Tensor reduce_mirrored(ReduceOp op, const Tensor& value,
                                               std::optional<int> axis) = 0;
  /// Every replica's component concatenated along `axis`, in global replica order.
  [[nodiscard]] virtual Tensor gather(const DistributedValues<Tensor>& value, int axis) = 0;
  /// The value every replica starts from: the chief's (worker 0's), as in TensorFlow.
  [[nodiscard]] virtual Tensor broadcast(const Tensor& value) = 0;
};

/// One worker: the components are this process's tensors, combined directly
/// on the calling thread (TensorFlow's ReductionToOneDevice).
class ReductionToOneDevice final : public CrossDeviceOps {
public:
  explicit ReductionToOneDevice(int local_replicas) : local_replicas_(local_replicas) {}

  [[nodiscard]] Tensor reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                              std::optional<int> axis) override;
  [[nodiscard]] Tensor reduce_mirrored(ReduceOp op, const Tensor& value,
                                       std::optional<int> axis) override;
  [[nodiscard]] Tensor gather(const DistributedValues<Tensor>& value, int axis) override;
  [[nodiscard]] Tensor broadcast(const Tensor& value) override { return value; }

private:
  int local_replicas_;
};

/// Several workers: this worker's part is combined locally, then one
/// collective across workers, issued by this worker's replicas, adds the
/// other workers' parts (TensorFlow's CollectiveAllReduce). Every worker must
/// make the same calls in the same order.
class CollectiveAllReduce final : public CrossDeviceOps {
public:
  explicit CollectiveAllReduce(StrategyExtended& extended) : extended_(extended) {}

  [[nodiscard]] Tensor reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                              std::optional<int> axis) override;
  [[nodiscard]] Tensor reduce_mirrored(ReduceOp op, const Tensor& value,
                                       std::optional<int> axis) override;
  [[nodiscard]] Tensor gather(const DistributedValues<Tensor>& value, int axis) override;
  [[nodiscard]] Tensor broadcast(const Tensor& value) override;

private:
  /// Throws Error(not_supported) naming `method` inside merge_call's function,
  /// where this worker's replicas cannot take part in a collective.
  void require_workers_reachable(const char* method) const;

  StrategyExtended& extended_;
};

} // namespace troupe::internal
