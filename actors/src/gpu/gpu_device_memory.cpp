#include <troupe/actors/gpu/gpu_device_memory.hpp>

#include <caf/all.hpp>

#include <troupe/actors/gpu/gpu_device_actor.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

GpuDeviceMemory::GpuDeviceMemory(std::string name, int gpu, std::unique_ptr<CachingDeviceAllocator> allocator,
                                 Executor& runtime, GpuDeviceActorHandle device_actor)
  : name_(std::move(name)), gpu_(gpu), allocator_(std::move(allocator)), runtime_(&runtime),
    device_actor_(std::move(device_actor)) {
  // Blocks go back to the driver only once the kernels sent before are on the
  // stream (cudaFree then waits for them). A poisoned or stopped device has
  // enqueued all it will: releasing is safe then too.
  allocator_->set_release_barrier([this] {
    try {
      synchronize();
    } catch (const std::exception&) {
    }
  });
}

void GpuDeviceMemory::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  run(GpuTransfer::Kind::to_host, dst, src, bytes, gpu_, "a copy to the host");
}

void GpuDeviceMemory::copy_from_host(void* dst, std::shared_ptr<const void> owner, const void* src,
                                     std::size_t bytes) {
  // Nobody waits: the message owns the transfer, and the transfer the source.
  auto transfer = std::make_shared<GpuTransfer>();
  transfer->kind = GpuTransfer::Kind::from_host;
  transfer->dst = dst;
  transfer->src = src;
  transfer->bytes = bytes;
  transfer->src_gpu = gpu_;
  transfer->source_owner = std::move(owner);
  std::lock_guard<std::mutex> guard{mutex_};
  if (runtime_ == nullptr)
    fail(Errc::failed_precondition, "a copy from the host to " + name_
                                      + ": the Runtime that owned this GPU was destroyed");
  GpuTransfer* raw = transfer.get();
  caf::anon_send(device_actor_, GpuTransferMsg{raw, std::move(transfer)});
}

void GpuDeviceMemory::copy_from_device(void* dst, DeviceMemory& source, const void* src, std::size_t bytes) {
  auto* gpu_source = dynamic_cast<GpuDeviceMemory*>(&source);
  if (gpu_source == nullptr)
    fail(Errc::internal, name_ + ": a device-to-device copy from " + source.device()
                           + ", which is not a GPU of a troupe Runtime");
  // The copy runs on this device's stream: the source's stream must first be
  // past the work that writes `src`.
  if (gpu_source != this)
    gpu_source->synchronize();
  run(GpuTransfer::Kind::from_device, dst, src, bytes, gpu_source->gpu(), "a copy between GPUs");
}

void GpuDeviceMemory::fill_zero(void* dst, std::size_t bytes) {
  run(GpuTransfer::Kind::fill_zero, dst, nullptr, bytes, gpu_, "zeroing GPU memory");
}

void GpuDeviceMemory::launch(const char* what, std::function<void(const GpuLaunchContext&)> enqueue) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (runtime_ == nullptr)
    fail(Errc::failed_precondition, std::string(what) + " on " + name_
                                      + ": the Runtime that owned this GPU was destroyed; copy GPU tensors to "
                                        "the host (t.to(\"CPU:0\")) before destroying their Runtime");
  caf::anon_send(device_actor_, GpuLaunchMsg{what, std::move(enqueue)});
}

void GpuDeviceMemory::launch_and_confirm(const char* what, std::function<void(const GpuLaunchContext&)> enqueue) {
  GpuTransfer confirm;
  Executor* runtime = nullptr;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    runtime = runtime_;
    if (runtime != nullptr)
      caf::anon_send(device_actor_, GpuLaunchMsg{what, std::move(enqueue), &confirm});
  }
  if (runtime == nullptr)
    fail(Errc::failed_precondition, std::string(what) + " on " + name_
                                      + ": the Runtime that owned this GPU was destroyed");
  // The device actor answers every confirmed launch, also when it stops.
  runtime->wait(confirm.done, what);
  if (!confirm.error.empty())
    fail(Errc::internal, std::string(what) + " failed: " + confirm.error);
}

void GpuDeviceMemory::nccl(NcclGroupMsg group) {
  auto handoff = std::make_shared<HandOff>();
  group.handoff = handoff;
  const std::string what = group.what;
  Executor* runtime = nullptr;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    runtime = runtime_;
    if (runtime != nullptr)
      caf::anon_send(device_actor_, std::move(group));
  }
  if (runtime == nullptr)
    fail(Errc::failed_precondition, what + " on " + name_ + ": the Runtime that owned this GPU was destroyed");
  // The device actor answers every group, also when it stops. A replica's
  // fiber goes on at once (it learns of a failure at its next collective,
  // from a read of the outputs, or when its function returns): waiting here
  // would add a round trip to the device actor to every collective.
  if (auto* fiber = FiberWaiter::current()) {
    fiber->hand_off(std::move(handoff));
    return;
  }
  runtime->wait(handoff->done, what.c_str());
  if (!handoff->error.empty())
    fail(Errc::internal, handoff->error);
}

void GpuDeviceMemory::abort_nccl(const std::string& name, const std::string& why) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (runtime_ != nullptr)
    caf::anon_send(device_actor_, NcclAbortMsg{name, why});
}

void GpuDeviceMemory::close_nccl(const std::string& name) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (runtime_ != nullptr)
    caf::anon_send(device_actor_, NcclCloseMsg{name});
}

void GpuDeviceMemory::synchronize() {
  run(GpuTransfer::Kind::barrier, nullptr, nullptr, 0, gpu_, "waiting for the GPU");
}

void GpuDeviceMemory::run(GpuTransfer::Kind kind, void* dst, const void* src, std::size_t bytes, int src_gpu,
                          const char* what) {
  // A read by a replica waits for the NCCL groups it handed off (its read
  // would wait behind them on the stream anyway), and throws the failure of
  // one that did not get onto the stream: its outputs were never written.
  if (kind == GpuTransfer::Kind::to_host || kind == GpuTransfer::Kind::from_device)
    if (auto* fiber = FiberWaiter::current())
      fiber->settle_handoffs();
  GpuTransfer transfer;
  transfer.kind = kind;
  transfer.dst = dst;
  transfer.src = src;
  transfer.bytes = bytes;
  transfer.src_gpu = src_gpu;
  Executor* runtime = nullptr;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    runtime = runtime_;
    if (runtime != nullptr)
      caf::anon_send(device_actor_, GpuTransferMsg{&transfer, nullptr});
  }
  if (runtime == nullptr)
    fail(Errc::failed_precondition, std::string(what) + " on " + name_
                                      + ": the Runtime that owned this GPU was destroyed; copy GPU tensors to "
                                        "the host (t.to(\"CPU:0\")) before destroying their Runtime");
  // The device actor answers every transfer, also when it stops.
  runtime->wait(transfer.done, what);
  if (!transfer.error.empty())
    fail(Errc::internal, std::string(what) + " failed: " + transfer.error);
}

void GpuDeviceMemory::detach() noexcept {
  std::lock_guard<std::mutex> guard{mutex_};
  runtime_ = nullptr;
  device_actor_ = nullptr;
}

} // namespace troupe::internal
