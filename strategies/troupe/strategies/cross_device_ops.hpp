#pragma once

// How a strategy combines values across replicas and workers (internal: not installed).

#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  /// Every worker's `bytes`, by worker index, with its task name ("worker:1"):
  /// one collective, which every worker must make at the same point.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>>
  gather_from_workers(const std::string& bytes) = 0;
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
  [[nodiscard]] std::vector<std::pair<std::string, std::string>>
  gather_from_workers(const std::string& bytes) override {
    return {{"worker:0", bytes}};
  }

private:
  int local_replicas_;
};

/// Several workers: this worker's part is combined locally, then one
/// collective across workers, issued by this worker's replicas, adds the
/// other workers' parts (TensorFlow's CollectiveAllReduce). Every worker must
/// make the same calls in the same order.
class CollectiveAllReduce final : public CrossDeviceOps {
public:
  /// `task_names`: every worker's, by worker index ("worker:1").
  CollectiveAllReduce(StrategyExtended& extended, std::vector<std::string> task_names)
    : extended_(extended), task_names_(std::move(task_names)) {}

  [[nodiscard]] Tensor reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                              std::optional<int> axis) override;
  [[nodiscard]] Tensor reduce_mirrored(ReduceOp op, const Tensor& value,
                                       std::optional<int> axis) override;
  [[nodiscard]] Tensor gather(const DistributedValues<Tensor>& value, int axis) override;
  [[nodiscard]] Tensor broadcast(const Tensor& value) override;
  [[nodiscard]] std::vector<std::pair<std::string, std::string>>
  gather_from_workers(const std::string& bytes) override;

private:
  /// Throws Error(not_supported) naming `method` inside merge_call's function,
  /// where this worker's replicas cannot take part in a collective.
  void require_workers_reachable(const char* method) const;

  StrategyExtended& extended_;
  std::vector<std::string> task_names_;
};

} // namespace troupe::internal
