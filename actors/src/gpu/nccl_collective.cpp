#include <troupe/actors/gpu/nccl_collective.hpp>

#include <memory>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/collectives/tensor_packing.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>

namespace troupe::internal {

namespace {

NcclReduction reduction_of(ReduceOp op) {
  return op == ReduceOp::MEAN ? NcclReduction::avg : NcclReduction::sum;
}

/// A shape seen from one axis: the elements before it and after it.
struct AxisSplit {
  int axis;          ///< normalized
  int64_t outer;     ///< product of the dimensions before `axis`
  int64_t trailing;  ///< product of the dimensions after it
};

AxisSplit split_at(const Shape& shape, int axis) {
  AxisSplit split{shape.normalize_axis(axis), 1, 1};
  for (int d = 0; d < shape.rank(); ++d)
    if (d != split.axis)
      (d < split.axis ? split.outer : split.trailing) *= shape[d];
  return split;
}

} // namespace

NcclCollective::NcclCollective(Plan plan, std::vector<std::vector<Tensor>> inputs, std::vector<DeviceSpec> devices)
  : plan_(std::move(plan)), inputs_(std::move(inputs)), devices_(std::move(devices)) {
  const std::string kind{name(plan_.kind)};
  for (std::size_t r = 0; r < inputs_.size(); ++r)
    for (std::size_t t = 0; t < inputs_[r].size(); ++t) {
      const Tensor& x = inputs_[r][t];
      if (x.on_host() || x.device().short_name() != devices_[r].short_name())
        fail(Errc::invalid_argument, kind + " through NCCL: replica "
                                       + std::to_string(plan_.communicator.rank + static_cast<int>(r)) + " runs on " + devices_[r].short_name() + " but its value "
                                       + std::to_string(t) + " is in " + x.device().short_name()
                                       + " memory; every replica's values must be on its own GPU (copy them "
                                         "there with .to())");
      if (x.dtype() == DType::bool_)
        fail(Errc::not_supported, kind + " of bool tensors through NCCL: cast them to int32 or uint8 first");
      if (reduces(plan_.kind) && plan_.op == ReduceOp::MEAN && !is_floating(x.dtype()))
        fail(Errc::not_supported, kind + " MEAN of " + std::string{name(x.dtype())}
                                    + " GPU tensors: NCCL averages floating-point values only; reduce with SUM "
                                      "and divide, or cast to float32");
      if ((plan_.kind == CollectiveKind::all_gather || plan_.kind == CollectiveKind::reduce_scatter)
          && x.shape().rank() == 0)
        fail(Errc::invalid_argument, kind + " of a scalar (value " + std::to_string(t)
                                       + "): it needs an axis; reshape it to shape (1) first");
      if (plan_.kind == CollectiveKind::reduce_scatter
          && x.shape()[x.shape().normalize_axis(plan_.axis)] % plan_.communicator.ranks != 0)
        fail(Errc::invalid_argument, "reduce_scatter of value " + std::to_string(t) + " of shape "
                                       + x.shape().to_string() + " along axis " + std::to_string(plan_.axis)
                                       + ": its size there is not a multiple of the "
                                       + std::to_string(plan_.communicator.ranks) + " replicas; pad it");
    }
}

void NcclCollective::pack_all_reduce(GpuDeviceMemory& gpu, const DeviceSpec& device, const std::vector<Tensor>& inputs,
                                     std::vector<Tensor>& outputs, std::vector<NcclCall>& calls) const {
  struct Copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  std::vector<Copy> copies;
  outputs.resize(inputs.size());
  for (const auto& pack : plan_packs(inputs, plan_.bytes_per_pack)) {
    const Tensor& first = inputs[pack.tensors.front()];
    int64_t total = 0;
    for (auto i : pack.tensors)
      total += inputs[i].num_elements();
    if (total == 0) {
      for (auto i : pack.tensors)
        outputs[i] = Tensor::empty(inputs[i].shape(), inputs[i].dtype(), device);
      continue;
    }
    NcclCall call;
    call.kind = NcclCall::Kind::all_reduce;
    call.dtype = first.dtype();
    call.reduction = reduction_of(plan_.op);
    call.count = static_cast<std::size_t>(total);
    if (pack.tensors.size() == 1) {
      outputs[pack.tensors.front()] = Tensor::empty(first.shape(), first.dtype(), device);
      call.send = first.device_data();
      call.recv = outputs[pack.tensors.front()].mutable_device_data();
      calls.push_back(call);
      continue;
    }
    // Copied into one buffer, reduced in place; the outputs are its slices.
    Tensor buffer = Tensor::empty(Shape{total}, first.dtype(), device);
    auto* base = reinterpret_cast<unsigned char*>(buffer.mutable_device_data());
    const std::size_t element = size_of(first.dtype());
    int64_t offset = 0;
    for (auto i : pack.tensors) {
      const int64_t n = inputs[i].num_elements();
      if (n > 0)
        copies.push_back({base + static_cast<std::size_t>(offset) * element, inputs[i].device_data(),
                          static_cast<std::size_t>(n) * element});
      outputs[i] = buffer.slice(offset, offset + n).reshape(inputs[i].shape());
      offset += n;
    }
    call.send = base;
    call.recv = base;
    calls.push_back(call);
  }
  if (copies.empty())
    return;
  // On the device's stream, before the group (the device actor takes its
  // messages in order): after the kernels that wrote the inputs.
  gpu.launch("packing tensors for all_reduce", [copies = std::move(copies)](const GpuLaunchContext& ctx) {
    auto& backend = gpu_backend();
    for (const auto& copy : copies)
      backend.copy_async(ctx.gpu, ctx.stream, copy.dst, copy.src, copy.bytes, GpuCopyKind::device_to_device, ctx.gpu);
  });
}

std::vector<Tensor> NcclCollective::run(int replica, const std::function<void(const Completion&)>&) {
  const auto me = static_cast<std::size_t>(replica);
  const int rank = plan_.communicator.rank + replica;
  const auto& inputs = inputs_[me];
  auto buffers = std::make_shared<std::vector<Tensor>>(inputs);
  std::shared_ptr<DeviceMemory> memory;
  GpuDeviceMemory* gpu = nullptr;
  std::vector<Tensor> outputs;
  NcclGroupMsg group;
  // Along an inner axis, blocks of `rows` rows copied in 2D: a reduce_scatter's
  // input blocks into rank order before the group (arrangements), an
  // all_gather's blocks from NCCL's rank order into place after it (placements).
  struct Placement {
    void* dst;
    std::size_t dst_pitch;
    const void* src;
    std::size_t src_pitch;
    std::size_t width;
    std::size_t rows;
  };
  std::vector<Placement> arrangements;
  std::vector<Placement> placements;
  std::vector<Tensor> staging;  // alive until the placements are sent, behind which they may be reused
  // Until the group reaches the device actor (which tells the group of its
  // own failures), a failure here must abort the other ranks' groups.
  try {
    memory = device_memory_for(devices_[me]);
    gpu = dynamic_cast<GpuDeviceMemory*>(memory.get());
    if (gpu == nullptr)
      fail(Errc::internal, plan_.what + ": " + devices_[me].short_name() + " is not a GPU of a troupe Runtime");
    const bool packing = plan_.kind == CollectiveKind::all_reduce && plan_.bytes_per_pack > 0;
    if (packing)
      pack_all_reduce(*gpu, devices_[me], inputs, outputs, group.calls);
    for (std::size_t t = 0; t < inputs.size() && !packing; ++t) {
      const Tensor& x = inputs[t];
      NcclCall call;
      call.dtype = x.dtype();
      call.send = x.device_data();
      switch (plan_.kind) {
        case CollectiveKind::all_reduce:
        case CollectiveKind::broadcast: {
          outputs.push_back(Tensor::empty(x.shape(), x.dtype(), devices_[me]));
          call.kind = plan_.kind == CollectiveKind::all_reduce ? NcclCall::Kind::all_reduce : NcclCall::Kind::broadcast;
          call.reduction = reduction_of(plan_.op);
          call.count = static_cast<std::size_t>(x.num_elements());
          call.recv = outputs.back().mutable_device_data();
          if (call.count > 0)
            group.calls.push_back(call);
          break;
        }
        case CollectiveKind::all_gather: {
          // Along `axis`: `outer` blocks of `units` x `trailing` elements per rank.
          const auto [axis, outer, trailing] = split_at(x.shape(), plan_.axis);
          int64_t total = 0;
          bool even = true;
          for (const auto& units : plan_.gather_rows) {
            // Sizes announced by other workers: no sum or product may overflow.
            int64_t bytes = 0;
            if (units.at(t) < 0 || __builtin_add_overflow(total, units.at(t), &total)
                || __builtin_mul_overflow(total, outer * trailing, &bytes)
                || __builtin_mul_overflow(bytes, static_cast<int64_t>(size_of(x.dtype())), &bytes))
              fail(Errc::data_loss, "all_gather of value " + std::to_string(t) + ": the ranks' sizes along axis "
                                      + std::to_string(axis) + " add up to more than a tensor can hold");
            even = even && units.at(t) == plan_.gather_rows.front().at(t);
          }
          outputs.push_back(Tensor::empty(x.shape().with_dim(axis, total), x.dtype(), devices_[me]));
          const std::size_t element = size_of(x.dtype());
          auto* out = reinterpret_cast<unsigned char*>(outputs.back().mutable_device_data());
          // NCCL writes each rank's values as one block, rank after rank: the
          // output itself along the outermost axis, else a staging buffer
          // whose blocks are then copied into place, `outer` rows each.
          unsigned char* blocks = out;
          if (outer > 1 && total > 0) {
            staging.push_back(Tensor::empty(Shape{outer * total * trailing}, x.dtype(), devices_[me]));
            blocks = reinterpret_cast<unsigned char*>(staging.back().mutable_device_data());
          }
          int64_t offset = 0;  // units before rank q's
          for (std::size_t q = 0; q < plan_.gather_rows.size(); ++q) {
            const int64_t units = plan_.gather_rows[q].at(t);
            const auto block_bytes = static_cast<std::size_t>(units * trailing) * element;
            auto* block = blocks + static_cast<std::size_t>(offset * outer * trailing) * element;
            if (outer > 1 && units > 0)
              placements.push_back({out + static_cast<std::size_t>(offset * trailing) * element,
                                    static_cast<std::size_t>(total * trailing) * element, block, block_bytes,
                                    block_bytes, static_cast<std::size_t>(outer)});
            if (!even && units > 0) {
              NcclCall part = call;  // each rank broadcasts its block into its place
              part.kind = NcclCall::Kind::broadcast;
              part.root = static_cast<int>(q);
              part.count = static_cast<std::size_t>(outer * units * trailing);
              part.recv = block;
              part.send = static_cast<int>(q) == rank ? x.device_data() : part.recv;
              group.calls.push_back(part);
            }
            offset += units;
          }
          if (even && x.num_elements() > 0) {
            call.kind = NcclCall::Kind::all_gather;
            call.count = static_cast<std::size_t>(x.num_elements());
            call.recv = blocks;
            group.calls.push_back(call);
          }
          break;
        }
        case CollectiveKind::reduce_scatter: {
          // Rank q gets the reduction of block q along `axis`. NCCL takes
          // the blocks one after another: along an inner axis they are first
          // copied into rank order in a staging buffer, `outer` rows each.
          const auto [axis, outer, trailing] = split_at(x.shape(), plan_.axis);
          const int64_t ranks = plan_.communicator.ranks;
          const int64_t units = x.shape()[axis] / ranks;
          outputs.push_back(Tensor::empty(x.shape().with_dim(axis, units), x.dtype(), devices_[me]));
          if (outputs.back().num_elements() == 0)
            break;
          const std::size_t element = size_of(x.dtype());
          const auto block_bytes = static_cast<std::size_t>(units * trailing) * element;
          const auto* blocks = reinterpret_cast<const unsigned char*>(x.device_data());
          if (outer > 1) {
            staging.push_back(Tensor::empty(Shape{x.num_elements()}, x.dtype(), devices_[me]));
            auto* staged = reinterpret_cast<unsigned char*>(staging.back().mutable_device_data());
            for (int64_t q = 0; q < ranks; ++q)
              arrangements.push_back({staged + static_cast<std::size_t>(q * outer) * block_bytes, block_bytes,
                                      blocks + static_cast<std::size_t>(q) * block_bytes,
                                      static_cast<std::size_t>(ranks) * block_bytes, block_bytes,
                                      static_cast<std::size_t>(outer)});
            blocks = staged;
          }
          call.kind = NcclCall::Kind::reduce_scatter;
          call.reduction = reduction_of(plan_.op);
          call.count = static_cast<std::size_t>(outer * units * trailing);
          call.send = blocks;
          call.recv = outputs.back().mutable_device_data();
          group.calls.push_back(call);
          break;
        }
        case CollectiveKind::merge_call:
          fail(Errc::internal, plan_.what + ": merge_call does not run through NCCL");
      }
    }
  } catch (const std::exception& e) {
    if (plan_.on_failure)
      plan_.on_failure(plan_.key, plan_.communicator.name,
                       plan_.what + " on " + devices_[me].short_name() + ": " + e.what());
    throw;
  }
  buffers->insert(buffers->end(), outputs.begin(), outputs.end());
  buffers->insert(buffers->end(), staging.begin(), staging.end());
  if (group.calls.empty())
    return outputs;
  group.communicator = plan_.communicator;
  group.communicator.rank = rank;
  group.keep_alive = std::move(buffers);
  group.what = plan_.what;
  group.timeout = plan_.timeout;
  if (plan_.on_failure)
    group.on_communicator_end = [on_failure = plan_.on_failure, key = plan_.key](const std::string& name,
                                                                                  const std::string& why) {
      on_failure(key, name, why);
    };
  auto copy_2d = [](const std::vector<Placement>& copies, const GpuLaunchContext& ctx) {
    auto& backend = gpu_backend();
    for (const auto& p : copies)
      backend.copy_2d_async(ctx.gpu, ctx.stream, p.dst, p.dst_pitch, p.src, p.src_pitch, p.width, p.rows);
  };
  if (!arrangements.empty())
    gpu->launch("reduce_scatter: blocks in rank order",
                [copy_2d, arrangements = std::move(arrangements)](const GpuLaunchContext& ctx) {
                  copy_2d(arrangements, ctx);
                });
  gpu->nccl(std::move(group));  // its failures reach the group from the device actor
  if (!placements.empty())
    gpu->launch("all_gather: placing the blocks", [copy_2d, placements = std::move(placements),
                                                   staging = std::move(staging)](const GpuLaunchContext& ctx) {
      copy_2d(placements, ctx);
    });
  return outputs;
}

} // namespace troupe::internal
