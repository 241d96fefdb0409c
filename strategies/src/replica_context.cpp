#include <troupe/strategies/replica_context.hpp>

#include <algorithm>
#include <cstring>

#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/ops/tensor_ops.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe {

namespace {

/// Elements [begin, end) of `x` along `axis`: a view along the outermost
/// axis that has more than one element; else a copy, made on the host (a
/// GPU tensor's round trip there is the slow path of GPU collectives
/// without NCCL).
Tensor slice_along(const Tensor& x, int axis, int64_t begin, int64_t end) {
  const auto& shape = x.shape();
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d)
    outer *= shape[d];
  const Shape sliced = shape.with_dim(axis, end - begin);
  if (begin == 0 && end == shape[axis])
    return x;
  if (outer <= 1) {
    const int64_t trailing = shape[axis] == 0 ? 0 : x.num_elements() / shape[axis];
    return x.reshape(Shape{shape[axis], trailing}).slice(begin, end).reshape(sliced);
  }
  const Tensor host = x.on_host() ? x : x.to("CPU:0");
  Tensor out = Tensor::empty(sliced, x.dtype(), host.device());
  const std::size_t row = host.nbytes() / static_cast<std::size_t>(outer);  // bytes per index before `axis`
  const std::size_t unit = row / static_cast<std::size_t>(shape[axis]);
  const std::size_t width = unit * static_cast<std::size_t>(end - begin);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.mutable_raw_data() + static_cast<std::size_t>(o) * width,
                host.raw_data() + static_cast<std::size_t>(o) * row + unit * static_cast<std::size_t>(begin), width);
  return x.on_host() ? out : out.to(x.device());
}

} // namespace

ReplicaContext::ReplicaContext(Strategy& strategy, int replica, int num_replicas, DeviceSpec device,
                               internal::ReplicaHandle* handle)
  : strategy_(&strategy), replica_(replica), num_replicas_(num_replicas), device_(std::move(device)),
    handle_(handle) {
}

std::vector<std::string> ReplicaContext::devices() const {
  return {device_.to_string()};
}

Tensor ReplicaContext::all_reduce(ReduceOp op, const Tensor& value) {
  return reduce_values(static_cast<int>(CollectiveKind::all_reduce), op, 0, {value}).front();
}

std::vector<Tensor> ReplicaContext::all_reduce(ReduceOp op, const std::vector<Tensor>& values) {
  return reduce_values(static_cast<int>(CollectiveKind::all_reduce), op, 0, values);
}

std::vector<Tensor> ReplicaContext::reduce_values(int kind, ReduceOp op, int axis, const std::vector<Tensor>& values) {
  const auto integral = [](const Tensor& t) { return t.valid() && is_integer(t.dtype()); };
  if (op != ReduceOp::MEAN || num_replicas_ <= 1 || std::none_of(values.begin(), values.end(), integral))
    return collective(kind, op, axis, values);
  // TensorFlow's MEAN of integers is a true division of their sum (1 and 2
  // average to 1.5), in float64 for int32 and int64, float32 for uint8. The
  // integers are cast to that dtype first and averaged with the other values
  // in the one collective: their sum is exact below 2^53 (2^24 for uint8's
  // float32) and never wraps around, where TensorFlow sums in the integer
  // dtype. GPU kernels cast floating types only: integers are cast on the host.
  std::vector<Tensor> cast = values;
  for (auto& value : cast) {
    if (!integral(value))
      continue;
    const DType dtype = true_division_dtype(value.dtype());
    value = value.on_host() ? value.cast(dtype) : value.to("CPU:0").cast(dtype).to(value.device());
  }
  return collective(kind, op, axis, cast);
}

Tensor ReplicaContext::all_reduce(std::string_view op, const Tensor& value) {
  return all_reduce(parse_reduce_op(op), value);
}

Tensor ReplicaContext::all_reduce_in_place(ReduceOp op, Tensor&& value) {
  std::vector<Tensor> values;
  values.push_back(std::move(value));
  try {
    return all_reduce_in_place(op, std::move(values)).front();
  } catch (...) {
    // A refused call left `values` as it was: the caller's tensor goes back.
    if (!values.empty())
      value = std::move(values.front());
    throw;
  }
}

std::vector<Tensor> ReplicaContext::all_reduce_in_place(ReduceOp op, std::vector<Tensor>&& values) {
  // Checked before they are taken: a refused call leaves the caller's handles.
  std::vector<const std::byte*> addresses;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& t = values[i];
    const auto which = "all_reduce_in_place: value " + std::to_string(i);
    if (!t.valid())
      fail(Errc::invalid_argument, which + " is an empty Tensor");
    if (!t.on_host())
      fail(Errc::not_supported, which + " is in the memory of " + t.device().to_string()
                                  + "; in-place collectives take host memory for now: use all_reduce, whose GPU "
                                    "result is a tensor of its own");
    if (t.use_count() != 1)
      fail(Errc::invalid_argument,
           which + " shares its bytes with " + std::to_string(t.use_count() - 1)
             + " other handle(s), which would see the result change; pass the only handle: std::move it in "
               "(build the vector with push_back(std::move(t)): an initializer list copies), or use all_reduce");
    if (op == ReduceOp::MEAN && num_replicas_ > 1 && is_integer(t.dtype()))
      fail(Errc::invalid_argument,
           which + " is " + std::string(name(t.dtype())) + ": its MEAN is a true division in "
             + std::string(name(true_division_dtype(t.dtype())))
             + ", which does not fit its memory; use SUM and divide, or all_reduce");
    addresses.push_back(t.raw_data());
  }
  if (handle_ == nullptr)
    return std::move(values); // one replica: the result is the value, already in its memory
  require_own_replica("all_reduce_in_place");
  std::vector<Tensor> mine = std::move(values);
  values.clear();
  internal::CollectiveRequest request;
  request.kind = CollectiveKind::all_reduce;
  request.op = op;
  request.tensors = mine;
  request.in_place = true;
  const auto result = handle_->collective(std::move(request)).tensors;
  for (size_t i = 0; i < mine.size(); ++i)
    if (result.at(i).raw_data() != addresses[i])
      fail(Errc::internal, "all_reduce_in_place: the result of value " + std::to_string(i)
                             + " was written elsewhere, not into its memory (a troupe bug: please report it)");
  return mine;
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

Tensor ReplicaContext::reduce_scatter(ReduceOp op, const Tensor& value, int axis) {
  return reduce_scatter(op, std::vector<Tensor>{value}, axis).front();
}

std::vector<Tensor> ReplicaContext::reduce_scatter(ReduceOp op, const std::vector<Tensor>& values, int axis) {
  const int64_t n = num_replicas_;
  std::vector<int> axes;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& shape = values[i].shape();
    if (values[i].valid() && shape.rank() == 0)
      fail(Errc::invalid_argument, "reduce_scatter: value " + std::to_string(i)
                                     + " is a scalar; it needs an axis to split: reshape it to shape (1) first");
    axes.push_back(values[i].valid() ? shape.normalize_axis(axis) : 0);
    if (values[i].valid() && shape[axes.back()] % n != 0)
      fail(Errc::invalid_argument, "reduce_scatter: value " + std::to_string(i) + " has shape " + shape.to_string()
                                     + ", whose size " + std::to_string(shape[axes.back()]) + " along axis "
                                     + std::to_string(axes.back()) + " is not a multiple of the "
                                     + std::to_string(n) + " replicas; pad it to a multiple of " + std::to_string(n));
  }
  // Every tensor's axis must be the same one once normalized, for the fingerprint.
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes.front())
      fail(Errc::invalid_argument, "reduce_scatter: axis " + std::to_string(axis) + " is axis "
                                     + std::to_string(axes.front()) + " of value 0 but axis " + std::to_string(axes[i])
                                     + " of value " + std::to_string(i)
                                     + "; scatter tensors of different ranks with a non-negative axis");
  const int normalized = axes.empty() ? 0 : axes.front();
  auto results = reduce_values(static_cast<int>(CollectiveKind::reduce_scatter), op, normalized, values);
  // NCCL scattered already; the other paths all-reduced, and this replica keeps its block.
  for (size_t i = 0; i < results.size(); ++i) {
    const int64_t size = values[i].shape()[normalized];
    if (n > 1 && results[i].shape()[normalized] == size)
      results[i] = slice_along(results[i], normalized, replica_ * (size / n), (replica_ + 1) * (size / n));
  }
  return results;
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
