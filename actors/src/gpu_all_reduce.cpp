#include <troupe/actors/gpu_all_reduce.hpp>

#include <troupe/actors/gpu_device_memory.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/gpu_backend.hpp>
#include <troupe/ops/gpu_kernels.hpp>

namespace troupe::internal {

namespace {

int physical_gpu(const DeviceSpec& device) {
  auto memory = device_memory_for(device);
  auto* gpu = dynamic_cast<GpuDeviceMemory*>(memory.get());
  if (gpu == nullptr)
    fail(Errc::internal, "all_reduce: " + device.short_name() + " is not a GPU of a troupe Runtime");
  return gpu->gpu();
}

} // namespace

bool GpuAllReduce::wanted(const std::vector<std::vector<Tensor>>& inputs) noexcept {
  for (const auto& replica : inputs)
    for (const auto& t : replica)
      if (t.valid() && !t.on_host())
        return true;
  return false;
}

GpuAllReduce::GpuAllReduce(ReduceOp op, std::vector<std::vector<Tensor>> inputs, std::vector<DeviceSpec> devices)
  : op_(op), inputs_(std::move(inputs)), devices_(std::move(devices)),
    running_(static_cast<int>(inputs_.size())) {
  const auto n = inputs_.size();
  if (n > static_cast<std::size_t>(kGpuSumMaxInputs))
    fail(Errc::not_supported, "all_reduce of GPU tensors between " + std::to_string(n)
                                + " replicas: at most " + std::to_string(kGpuSumMaxInputs)
                                + " GPU replicas per process are supported");
  std::vector<int> gpus;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t t = 0; t < inputs_[r].size(); ++t) {
      const Tensor& x = inputs_[r][t];
      if (x.on_host() || x.device().short_name() != devices_[r].short_name())
        fail(Errc::invalid_argument, "all_reduce: replica " + std::to_string(r) + " runs on "
                                       + devices_[r].short_name() + " but its value " + std::to_string(t)
                                       + " is in " + x.device().short_name()
                                       + " memory; an all-reduce of GPU tensors needs every replica's values on "
                                         "its own GPU (copy them there with .to())");
      if (x.dtype() != DType::float32)
        fail(Errc::not_supported, "all_reduce on " + devices_[r].short_name()
                                    + ": GPU all-reduce takes float32 tensors, but value " + std::to_string(t)
                                    + " is " + std::string{name(x.dtype())}
                                    + "; cast it to float32 or reduce it on the host");
    }
    gpus.push_back(physical_gpu(devices_[r]));
  }
  auto& backend = gpu_backend();
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < n; ++k)
      if (!backend.can_read_peer(gpus[r], gpus[k]))
        fail(Errc::not_supported, "all_reduce between " + devices_[r].short_name() + " and "
                                    + devices_[k].short_name() + ": their cards (GPU " + std::to_string(gpus[r])
                                    + " and " + std::to_string(gpus[k])
                                    + ") have no peer access, which troupe's GPU all-reduce needs");
  outputs_.resize(n);
  output_data_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    for (const auto& x : inputs_[r]) {
      outputs_[r].push_back(Tensor::empty(x.shape(), DType::float32, devices_[r]));
      output_data_[r].push_back(reinterpret_cast<float*>(outputs_[r].back().mutable_device_data()));
    }
  }
}

std::vector<Tensor> GpuAllReduce::run(int replica, const std::function<void(const Completion&)>& await) {
  const auto n = inputs_.size();
  const auto me = static_cast<std::size_t>(replica);
  try {
    // Every replica's stream must be past the kernels that wrote its inputs,
    // and past the last users of the blocks the outputs took.
    for (const auto& device : devices_)
      device_memory_for(device)->synchronize();
    auto own = device_memory_for(devices_[me]);
    const GpuKernels& kernels = gpu_kernels();
    const float scale = op_ == ReduceOp::MEAN ? 1.0f / static_cast<float>(n) : 1.0f;
    for (std::size_t t = 0; t < inputs_[me].size(); ++t) {
      const int64_t count = inputs_[me][t].num_elements();
      const int64_t begin = count * replica / static_cast<int64_t>(n);
      const int64_t end = count * (replica + 1) / static_cast<int64_t>(n);
      if (begin == end)
        continue;
      std::vector<const float*> slices;
      for (std::size_t k = 0; k < n; ++k)
        slices.push_back(reinterpret_cast<const float*>(inputs_[k][t].device_data()) + begin);
      std::vector<float*> targets;
      for (std::size_t k = 0; k < n; ++k)
        targets.push_back(output_data_[k][t] + begin);
      own->launch("all_reduce", [&kernels, slices, targets, me, length = end - begin, scale](
                                  const GpuLaunchContext& ctx) {
        kernels.sum_n_f32(ctx, slices.data(), static_cast<int>(slices.size()), targets[me], length, scale);
        // The reduced slice, copied into the other replicas' outputs (a sum of one input is a copy).
        const float* reduced = targets[me];
        for (std::size_t k = 0; k < targets.size(); ++k)
          if (k != me)
            kernels.sum_n_f32(ctx, &reduced, 1, targets[k], length, 1.0f);
      });
    }
    own->synchronize();
  } catch (const std::exception& e) {
    record_failure(replica, e.what());
  }
  // The last replica to finish releases the others: only then is every
  // output complete and no input still read.
  if (running_.fetch_sub(1) == 1)
    all_done_.set();
  else
    await(all_done_);
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!failure_.empty())
      fail(Errc::internal, "all_reduce of GPU tensors failed: " + failure_);
  }
  return outputs_[me];
}

void GpuAllReduce::record_failure(int replica, const std::string& why) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (failure_.empty())
    failure_ = "replica " + std::to_string(replica) + " (" + devices_[static_cast<std::size_t>(replica)].short_name()
               + "): " + why;
}

} // namespace troupe::internal
