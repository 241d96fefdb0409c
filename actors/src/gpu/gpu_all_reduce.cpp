#include <troupe/actors/gpu/gpu_all_reduce.hpp>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/core/log.hpp>
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

struct GpuAllReduce::Events {
  Events(GpuBackend& backend, const std::vector<int>& gpus) : backend(backend), gpus(gpus) {
    for (int gpu : gpus) {
      inputs_written.push_back(backend.create_event(gpu));
      slices_written.push_back(backend.create_event(gpu));
    }
  }
  ~Events() {
    // CUDA frees an event still pending in a stream once it completes.
    for (std::size_t r = 0; r < gpus.size(); ++r) {
      backend.destroy_event(gpus[r], inputs_written[r]);
      backend.destroy_event(gpus[r], slices_written[r]);
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  GpuBackend& backend;
  std::vector<int> gpus;                    // [replica]: its physical GPU
  std::vector<GpuEvent> inputs_written;     // [replica]
  std::vector<GpuEvent> slices_written;     // [replica]
};

GpuAllReduce::GpuAllReduce(ReduceOp op, std::vector<std::vector<Tensor>> inputs, std::vector<DeviceSpec> devices)
  : op_(op), inputs_(std::move(inputs)), devices_(std::move(devices)),
    inputs_recorded_(static_cast<int>(inputs_.size())), slices_recorded_(static_cast<int>(inputs_.size())) {
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
  // Each replica allocates its outputs on its fiber (run): an allocation may
  // wait for the device (CachingDeviceAllocator's release barrier), which an
  // actor's handler must not.
  outputs_.resize(n);
  output_data_.resize(n);
  slices_written_ = std::make_unique<std::atomic<bool>[]>(n);
  events_ = std::make_shared<Events>(backend, gpus);
}

std::vector<Tensor> GpuAllReduce::run(int replica, const std::function<void(const Completion&)>& await) {
  const auto n = inputs_.size();
  const auto me = static_cast<std::size_t>(replica);
  auto events = events_;
  GpuBackend* backend = &events->backend;
  std::shared_ptr<DeviceMemory> own;
  // 1. This replica's outputs, and its inputs written once its stream passes
  // this event (the outputs' blocks are free by then too: they were
  // allocated before it).
  try {
    own = device_memory_for(devices_[me]);
    for (const auto& x : inputs_[me]) {
      outputs_[me].push_back(Tensor::empty(x.shape(), DType::float32, devices_[me]));
      output_data_[me].push_back(reinterpret_cast<float*>(outputs_[me].back().mutable_device_data()));
    }
    own->launch_and_confirm("all_reduce", [backend, event = events->inputs_written[me]](const GpuLaunchContext& ctx) {
      backend->record_event(ctx.gpu, ctx.stream, event);
    });
  } catch (const std::exception& e) {
    record_failure(replica, e.what());
  }
  arrive(inputs_recorded_, await);
  rethrow_failure();
  // 2. After every input: this replica's slice of every tensor, reduced once
  // and written into every replica's output.
  try {
    const GpuKernels& kernels = gpu_kernels();
    const float scale = op_ == ReduceOp::MEAN ? 1.0f / static_cast<float>(n) : 1.0f;
    struct Slice {
      std::vector<const float*> inputs;
      std::vector<float*> outputs;
      int64_t length;
    };
    std::vector<Slice> slices;
    for (std::size_t t = 0; t < inputs_[me].size(); ++t) {
      const int64_t count = inputs_[me][t].num_elements();
      const int64_t begin = count * replica / static_cast<int64_t>(n);
      const int64_t end = count * (replica + 1) / static_cast<int64_t>(n);
      if (begin == end)
        continue;
      Slice slice{{}, {}, end - begin};
      for (std::size_t k = 0; k < n; ++k) {
        slice.inputs.push_back(reinterpret_cast<const float*>(inputs_[k][t].device_data()) + begin);
        slice.outputs.push_back(output_data_[k][t] + begin);
      }
      slices.push_back(std::move(slice));
    }
    own->launch_and_confirm("all_reduce", [backend, events, &kernels, slices = std::move(slices), me, scale](
                                            const GpuLaunchContext& ctx) {
      for (std::size_t k = 0; k < events->inputs_written.size(); ++k)
        if (k != me)
          backend->wait_event(ctx.gpu, ctx.stream, events->inputs_written[k]);
      for (const auto& slice : slices)
        kernels.sum_n_f32(ctx, slice.inputs.data(), static_cast<int>(slice.inputs.size()), slice.outputs.data(),
                          static_cast<int>(slice.outputs.size()), slice.length, scale);
      backend->record_event(ctx.gpu, ctx.stream, events->slices_written[me]);
    });
    slices_written_[me].store(true);
  } catch (const std::exception& e) {
    record_failure(replica, e.what());
  }
  arrive(slices_recorded_, await);
  // 3. What this replica enqueues from now on runs after every slice of its
  // outputs is written and every read of its inputs is done; on failure too,
  // for the slices that were written.
  std::vector<GpuEvent> written;
  bool all_written = true;
  for (std::size_t k = 0; k < n; ++k) {
    if (k == me)
      continue;
    if (slices_written_[k].load())
      written.push_back(events->slices_written[k]);
    else
      all_written = false;
  }
  try {
    own->launch("all_reduce", [backend, events, written](const GpuLaunchContext& ctx) {
      for (GpuEvent event : written)
        backend->wait_event(ctx.gpu, ctx.stream, event);
    });
  } catch (const std::exception& e) {
    record_failure(replica, e.what());
  }
  if (!all_written)
    keep_buffers_forever(replica);
  rethrow_failure();
  return outputs_[me];
}

void GpuAllReduce::keep_buffers_forever(int replica) {
  // A replica whose kernels may have been enqueued without their event (its
  // launch failed half-way) may still read every input and write every
  // output: no stream can wait for it, so no block it names may be reused.
  // Its device is poisoned; the memory is the price of never corrupting the
  // others'. Each replica that sees it keeps its own inputs and outputs.
  const auto me = static_cast<std::size_t>(replica);
  auto* kept = new std::vector<Tensor>(inputs_[me]);  // intentionally never freed
  kept->insert(kept->end(), outputs_[me].begin(), outputs_[me].end());
  TROUPE_LOG(warning, "coll") << "all_reduce of GPU tensors: a replica failed while its kernels may run on "
                              << devices_[me].short_name() << "'s buffers; keeping " << kept->size()
                              << " of them allocated for good";
}

void GpuAllReduce::arrive(Rendezvous& rendezvous, const std::function<void(const Completion&)>& await) {
  if (rendezvous.waiting.fetch_sub(1) == 1)
    rendezvous.all_arrived.set();
  else
    await(rendezvous.all_arrived);
}

void GpuAllReduce::rethrow_failure() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!failure_.empty())
    fail(Errc::internal, "all_reduce of GPU tensors failed: " + failure_);
}

void GpuAllReduce::record_failure(int replica, const std::string& why) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (failure_.empty())
    failure_ = "replica " + std::to_string(replica) + " (" + devices_[static_cast<std::size_t>(replica)].short_name()
               + "): " + why;
}

} // namespace troupe::internal
