#include <troupe/strategies/replica_context.hpp>

#include <troupe/actors/replica_handle.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe {

ReplicaContext::ReplicaContext(Strategy& strategy, int replica, int num_replicas, DeviceSpec device,
                               internal::ReplicaHandle* handle)
  : strategy_(&strategy), replica_(replica), num_replicas_(num_replicas), device_(std::move(device)),
    handle_(handle) {
}

std::vector<std::string> ReplicaContext::devices() const {
  return {device_.to_string()};
}

Tensor ReplicaContext::all_reduce(ReduceOp op, const Tensor& value) {
  return collective(static_cast<int>(CollectiveKind::all_reduce), op, 0, {value}).front();
}

std::vector<Tensor> ReplicaContext::all_reduce(ReduceOp op, const std::vector<Tensor>& values) {
  return collective(static_cast<int>(CollectiveKind::all_reduce), op, 0, values);
}

Tensor ReplicaContext::all_reduce(std::string_view op, const Tensor& value) {
  return all_reduce(parse_reduce_op(op), value);
}

Tensor ReplicaContext::all_gather(const Tensor& value, int axis) {
  return all_gather(std::vector<Tensor>{value}, axis).front();
}

std::vector<Tensor> ReplicaContext::all_gather(const std::vector<Tensor>& values, int axis) {
  // Every tensor is gathered along the same axis; a negative axis counts from
  // the end of the tensors' rank, so they must share it.
  int normalized = axis;
  for (size_t i = 0; i < values.size(); ++i) {
    const int n = values[i].shape().normalize_axis(axis);
    if (i > 0 && n != normalized)
      fail(Errc::invalid_argument, "all_gather: axis " + std::to_string(axis) + " is axis "
                                     + std::to_string(normalized) + " of value 0 but axis " + std::to_string(n)
                                     + " of value " + std::to_string(i)
                                     + "; gather tensors of different ranks with a non-negative axis");
    normalized = n;
  }
  return collective(static_cast<int>(CollectiveKind::all_gather), ReduceOp::SUM, normalized, values,
                    strategy_->extended().requires_identical_shapes());
}

std::vector<Tensor> ReplicaContext::collective(int kind, ReduceOp op, int axis,
                                               const std::vector<Tensor>& values, bool identical_shapes) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!values[i].valid())
      fail(Errc::invalid_argument, std::string(name(static_cast<CollectiveKind>(kind))) + ": value "
                                     + std::to_string(i) + " is an empty Tensor");
  if (handle_ == nullptr)
    return values; // one replica: the reduction or gather of a single value is the value
  require_own_replica(name(static_cast<CollectiveKind>(kind)).data());
  internal::CollectiveRequest request;
  request.kind = static_cast<CollectiveKind>(kind);
  request.op = op;
  request.axis = axis;
  request.tensors = values;
  request.identical_shapes = identical_shapes;
  return handle_->collective(std::move(request)).tensors;
}

std::vector<Tensor> ReplicaContext::broadcast_from_first_replica(const std::vector<Tensor>& values) {
  return collective(static_cast<int>(CollectiveKind::broadcast), ReduceOp::SUM, 0, values);
}

ReplicaContext::Erased ReplicaContext::merge_call_erased(Erased args, ErasedMerge merge,
                                                         const std::type_info& signature) {
  if (handle_ == nullptr)
    return merge({std::move(args)});
  require_own_replica("merge_call");
  internal::CollectiveRequest request;
  request.kind = CollectiveKind::merge_call;
  request.merge_args = std::move(args);
  request.merge_fn = std::move(merge);
  request.merge_signature = &signature;
  return handle_->collective(std::move(request)).merge_result;
}

void ReplicaContext::require_own_replica(const char* method) const {
  const auto* frame = detail::current_context_frame();
  if (frame != nullptr && frame->replica == this)
    return;
  fail(Errc::failed_precondition,
       std::string(method) + " was called on replica " + std::to_string(replica_)
         + "'s context from outside its function (from merge_call's function, another replica or "
           "another thread); call collectives only inside the function passed to strategy.run, "
           "on get_replica_context()");
}

} // namespace troupe
