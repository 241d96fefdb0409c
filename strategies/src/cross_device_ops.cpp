#include <troupe/strategies/cross_device_ops.hpp>

#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include <troupe/actors/replicas/agreement_group.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/distributed_values.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy_extended.hpp>
#include <troupe/strategies/strategy_scope.hpp>

namespace troupe::internal {

namespace {

// Cross-replica sums accumulate in a wide dtype (int64 for integers, float32
// for 16-bit floats): a SUM is cast back to the values' dtype, a MEAN of
// floats divides the exact sum, then is cast back, and a MEAN of integers
// is a true division (finish_reduction).
DType accumulation_dtype(DType dtype) {
  switch (dtype) {
    case DType::int32:
    case DType::uint8: return DType::int64;
    case DType::float16:
    case DType::bfloat16: return DType::float32;
    default: return dtype;
  }
}

/// This worker's part of a reduction: its components' sum in the wide dtype
/// and the number of elements summed (replicas, or examples along an axis).
struct PartialSum {
  Tensor total;
  double count = 0;
  DType dtype = DType::float32; ///< the components' dtype, which the result takes
  bool along_axis = false;      ///< the elements along an axis were summed, not only the replicas
};

PartialSum sum_local_components(const DistributedValues<Tensor>& value, std::optional<int> axis) {
  const auto& values = value.values();
  if (values.empty())
    fail(Errc::invalid_argument, "reduce: the distributed value has no components");
  const DType dtype = values.front().dtype();
  const DType wide = accumulation_dtype(dtype);
  Tensor total;
  double count = 0;
  if (axis) {
    // Sum along the axis on each replica and count the elements reduced, so
    // MEAN divides by the examples of all replicas, not by the replica count.
    const auto& first = values.front();
    const int first_axis = first.shape().normalize_axis(*axis);
    for (size_t i = 0; i < values.size(); ++i) {
      const auto& v = values[i];
      const int ax = v.shape().normalize_axis(*axis);
      if (v.dtype() != dtype || v.rank() != first.rank() || ax != first_axis
          || v.shape().with_dim(ax, 0) != first.shape().with_dim(first_axis, 0))
        fail(Errc::shape_mismatch,
             "reduce: replica 0 has a " + std::string(name(dtype)) + " tensor of shape "
               + first.shape().to_string() + " but replica " + std::to_string(i) + " has a "
               + std::string(name(v.dtype())) + " tensor of shape " + v.shape().to_string()
               + "; along axis " + std::to_string(*axis)
               + " the shapes may differ only in that axis");
      count += static_cast<double>(v.shape()[ax]);
      auto partial = reduce_sum(v.cast(wide), ax);
      total = total.valid() ? add(total, partial) : partial;
    }
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].shape() != values.front().shape() || values[i].dtype() != dtype)
        fail(Errc::shape_mismatch,
             "reduce: replica 0 has a " + std::string(name(dtype)) + " tensor of shape "
               + values.front().shape().to_string() + " but replica " + std::to_string(i)
               + " has a " + std::string(name(values[i].dtype())) + " tensor of shape "
               + values[i].shape().to_string() + "; pass an axis to reduce along it first");
      auto v = values[i].cast(wide);
      total = total.valid() ? add(total, v) : v;
    }
    count = static_cast<double>(values.size());
  }
  return {total, count, dtype, axis.has_value()};
}

Tensor finish_reduction(ReduceOp op, const PartialSum& sum) {
  Tensor total = sum.total;
  // TensorFlow divides an integer sum with true division (1 and 2 average
  // to 1.5 in float64), except for one replica's value without an axis,
  // which it returns as it is.
  if (op == ReduceOp::MEAN && is_integer(sum.dtype) && (sum.along_axis || sum.count > 1)) {
    const DType result = true_division_dtype(sum.dtype);
    return divide(total.cast(result), scalar_like(sum.count, result));
  }
  if (op == ReduceOp::MEAN)
    total = divide(total, scalar_like(sum.count, accumulation_dtype(sum.dtype)));
  return total.cast(sum.dtype);
}

/// `value` once per local replica, as a distributed value.
PerReplica<Tensor> copies_per_replica(const Tensor& value, int local_replicas) {
  return PerReplica<Tensor>(std::vector<Tensor>(static_cast<size_t>(local_replicas), value));
}

// A collective needs every local replica: runs `fn(replica)` on each, in
// replica context, rethrows the first failure and returns replica 0's result
// (the collective gives every replica the same).
template <class Fn>
auto on_every_replica(StrategyExtended& extended, Fn&& fn) {
  std::vector<std::invoke_result_t<Fn&, int>> results(extended.worker_devices().size());
  auto errors = extended.call_for_each_replica(
    [&](int replica) { results[static_cast<size_t>(replica)] = fn(replica); });
  for (auto& e : errors)
    if (e)
      std::rethrow_exception(e);
  return results.front();
}

} // namespace

// -- ReductionToOneDevice -----------------------------------------------------------------

Tensor ReductionToOneDevice::reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                                    std::optional<int> axis) {
  return finish_reduction(op, sum_local_components(value, axis));
}

Tensor ReductionToOneDevice::reduce_mirrored(ReduceOp op, const Tensor& value,
                                             std::optional<int> axis) {
  // The same value on every replica: its mean is itself, dtype included (TensorFlow's
  // reduce_non_distributed_value).
  if (op == ReduceOp::MEAN && !axis)
    return value;
  return reduce(op, copies_per_replica(value, local_replicas_), axis);
}

Tensor ReductionToOneDevice::gather(const DistributedValues<Tensor>& value, int axis) {
  return concat(value.values(), axis);
}

// -- CollectiveAllReduce ------------------------------------------------------------------

Tensor CollectiveAllReduce::reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                                   std::optional<int> axis) {
  auto sum = sum_local_components(value, axis);
  // The other workers' replicas count too: one cross-worker all-reduce of
  // this worker's partial sum and its element count.
  require_workers_reachable("reduce");
  const std::vector<Tensor> local{sum.total, Tensor(sum.count)};
  auto reduced = on_every_replica(extended_, [&](int replica) {
    // Replica 0 contributes this worker's part and the others zeros, so that
    // the all-reduce adds each worker's part once.
    std::vector<Tensor> mine;
    for (const auto& t : local)
      mine.push_back(replica == 0 ? t : Tensor::zeros(t.shape(), t.dtype()));
    return get_replica_context().all_reduce(ReduceOp::SUM, mine);
  });
  sum.total = reduced[0];
  sum.count = reduced[1].item<double>();
  return finish_reduction(op, sum);
}

Tensor CollectiveAllReduce::reduce_mirrored(ReduceOp op, const Tensor& value,
                                            std::optional<int> axis) {
  // The same value on every replica of every worker: its mean is itself.
  if (!axis)
    return value;
  return reduce(op, copies_per_replica(value, static_cast<int>(extended_.worker_devices().size())),
                axis);
}

Tensor CollectiveAllReduce::gather(const DistributedValues<Tensor>& value, int axis) {
  // Every worker's replicas, in global replica order: one cross-worker all_gather.
  require_workers_reachable("gather");
  const auto& values = value.values();
  return on_every_replica(extended_, [&](int replica) {
    return get_replica_context().all_gather(values.at(static_cast<size_t>(replica)), axis);
  });
}

Tensor CollectiveAllReduce::broadcast(const Tensor& value) {
  return on_every_replica(extended_, [&](int) {
    return get_replica_context().broadcast_from_first_replica({value}).front();
  });
}

std::vector<std::pair<std::string, std::string>>
CollectiveAllReduce::gather_from_workers(const std::string& bytes) {
  require_workers_reachable("check_same_across_workers");
  // Every replica gives the same block, so the gathered blocks come in
  // global replica order: worker w's is block w x local replicas.
  const Tensor block = pack_block(bytes);
  const auto gathered = on_every_replica(extended_, [&](int) { return get_replica_context().all_gather(block, 0); });
  const auto local = extended_.worker_devices().size();
  const auto blocks = unpack_blocks(gathered, local * task_names_.size());
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t w = 0; w < task_names_.size(); ++w)
    out.emplace_back(task_names_[w], blocks[w * local]);
  return out;
}

void CollectiveAllReduce::require_workers_reachable(const char* method) const {
  // Across workers a cross-replica reduction is a collective of this worker's
  // replicas, which merge_call's function runs while they wait for it.
  if (const auto* frame = detail::current_context_frame(); frame != nullptr && frame->in_merge_call)
    fail(Errc::not_supported,
         std::string(method) + " of a " + extended_.strategy_name() + " with "
           + std::to_string(extended_.num_workers())
           + " workers cannot run inside merge_call's function (it would combine every worker's "
             "values while "
             "this worker's replicas wait in merge_call); reduce in the replica function with "
             "get_replica_context().all_reduce, and pass the result to merge_call");
}

} // namespace troupe::internal
