#include <troupe/actors/gpu/gpu_device_actor.hpp>

#include <cstring>
#include <utility>

#include <caf/all.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

/// Page-locked host memory from the backend, for staging copies.
class PinnedHostMemory final : public RawDeviceMemory {
public:
  explicit PinnedHostMemory(GpuBackend& backend) : backend_(backend) {}
  void* allocate(std::size_t bytes) override { return backend_.allocate_pinned(bytes); }
  void deallocate(void* ptr, std::size_t) noexcept override { backend_.free_pinned(ptr); }

private:
  GpuBackend& backend_;
};

} // namespace

GpuDeviceActor::GpuDeviceActor(caf::actor_config& cfg, GpuDeviceSetup setup)
  : GpuDeviceActorHandle::base(cfg), setup_(std::move(setup)), stream_(setup_.stream),
    nccl_(this, setup_.name, setup_.gpu, setup_.stream, *setup_.backend, setup_.nccl_poller,
          [this](const std::string& why) {
      // Whatever is in flight may read what the aborted collectives left.
      std::lock_guard<std::mutex> guard{lost_->mutex};
      lost_->through = next_sequence_;
      lost_->why = why;
      lost_->unreported = true;
    }) {
  staging_ = std::make_unique<CachingDeviceAllocator>(setup_.name + " host staging",
                                                      std::make_unique<PinnedHostMemory>(*setup_.backend));
}

GpuDeviceActor::~GpuDeviceActor() = default;

GpuDeviceActor::behavior_type GpuDeviceActor::make_behavior() {
  // No handler lets an exception escape: it would kill this actor and leave
  // its callers waiting.
  return {
    [this](GpuTransferMsg& msg) {
      in_order([this, transfer = msg.transfer, owned = std::move(msg.owned)]() mutable {
        start(*transfer, std::move(owned));
      });
    },
    [this](GpuLaunchMsg& msg) {
      in_order([this, launch = std::move(msg)]() mutable { enqueue_kernel(launch); });
    },
    [this](NcclGroupMsg& msg) {
      in_order([this, group = std::move(msg)]() mutable {
        nccl_.start(std::move(group), failure_, failure_.empty() ? take_lost() : std::string{});
      });
    },
    [this](GpuStreamDoneMsg& msg) { finish(msg); },
    [this](const NcclPollMsg& msg) {
      nccl_.poll(msg.waiting);
      run_held();
    },
    [this](const NcclAbortMsg& msg) {
      nccl_.abort(msg.name, msg.why);
      run_held();
    },
    [this](const NcclCloseMsg& msg) {
      nccl_.close(msg.name);
      run_held();
    },
    [this](const NcclGroupDoneMsg& msg) {
      nccl_.group_done(msg.serial);
      run_held();
    },
    [this](const NcclHealthMsg&) {
      nccl_.health();
      run_held();
    },
  };
}

std::string GpuDeviceActor::take_lost() {
  std::lock_guard<std::mutex> guard{lost_->mutex};
  if (!lost_->unreported)
    return {};
  lost_->unreported = false;
  return lost_->why;
}

void GpuDeviceActor::run_held() {
  while (!nccl_.busy() && !held_.empty()) {
    auto work = std::move(held_.front());
    held_.pop_front();
    work();
  }
}

void GpuDeviceActor::enqueue_kernel(GpuLaunchMsg& msg) {
  if (failure_.empty()) {
    try {
      setup_.backend->make_current(setup_.gpu);
      msg.enqueue(GpuLaunchContext{setup_.gpu, stream_, &handles_});
    } catch (const std::exception& e) {
      failure_ = setup_.name + ": " + msg.what + " failed to launch: " + e.what();
    }
  }
  if (msg.confirm != nullptr) {
    msg.confirm->error = failure_.empty() ? take_lost() : failure_;
    msg.confirm->done.set();
  }
}

void GpuDeviceActor::start(GpuTransfer& transfer, std::shared_ptr<GpuTransfer> owned) {
  if (!failure_.empty()) {
    transfer.error = failure_;
    transfer.done.set();
    return;
  }
  if (!owned && transfer.kind != GpuTransfer::Kind::barrier) {
    // A caller waits for data: it learns of a collective lost on the GPU
    // (once). A barrier (the allocator's, before it frees blocks) does not.
    if (auto lost = take_lost(); !lost.empty()) {
      transfer.error = lost;
      transfer.done.set();
      return;
    }
  }
  InFlight entry{++next_sequence_, &transfer, nullptr, std::move(owned)};
  auto& backend = *setup_.backend;
  try {
    switch (transfer.kind) {
      case GpuTransfer::Kind::to_host:
        entry.staging = staging_->allocate(transfer.bytes);
        backend.copy_async(setup_.gpu, stream_, entry.staging, transfer.src, transfer.bytes,
                           GpuCopyKind::device_to_host, setup_.gpu);
        break;
      case GpuTransfer::Kind::from_host:
        entry.staging = staging_->allocate(transfer.bytes);
        std::memcpy(entry.staging, transfer.src, transfer.bytes);
        transfer.source_owner.reset();  // staged: the source may go
        backend.copy_async(setup_.gpu, stream_, transfer.dst, entry.staging, transfer.bytes,
                           GpuCopyKind::host_to_device, setup_.gpu);
        break;
      case GpuTransfer::Kind::from_device:
        backend.copy_async(setup_.gpu, stream_, transfer.dst, transfer.src, transfer.bytes,
                           GpuCopyKind::device_to_device, transfer.src_gpu);
        break;
      case GpuTransfer::Kind::fill_zero:
        backend.zero_async(setup_.gpu, stream_, transfer.dst, transfer.bytes);
        break;
      case GpuTransfer::Kind::barrier:
        break;
    }
    // The callback runs on a backend thread. A caller that waits is answered
    // from there at once (one hop less than through this actor); the actor
    // gets a message to free the staging buffer and learn the stream's state.
    GpuTransfer* waiter = entry.owned ? nullptr : &transfer;
    backend.notify_when_done(setup_.gpu, stream_,
                             [self = caf::actor_cast<GpuDeviceActorHandle>(this), sequence = entry.sequence, waiter,
                              staging = entry.staging, name = setup_.name, lost = lost_](const std::string& error) {
                               if (waiter != nullptr) {
                                 std::string failed;
                                 if (!error.empty())
                                   failed = name + ": the stream failed: " + error;
                                 if (failed.empty()) {
                                   std::lock_guard<std::mutex> guard{lost->mutex};
                                   if (sequence <= lost->through && waiter->kind != GpuTransfer::Kind::barrier) {
                                     failed = lost->why;
                                     lost->unreported = false;
                                   }
                                 }
                                 if (failed.empty() && waiter->kind == GpuTransfer::Kind::to_host)
                                   std::memcpy(waiter->dst, staging, waiter->bytes);
                                 waiter->error = std::move(failed);
                                 waiter->done.set();  // the caller may free it now
                               }
                               caf::anon_send(self, GpuStreamDoneMsg{sequence, error});
                             });
    if (waiter != nullptr)
      entry.transfer = nullptr;  // answered by the callback
  } catch (const std::exception& e) {
    // The caller learns at once; where nobody waits, the device is poisoned,
    // since the destination's bytes are now wrong. A staging buffer that an
    // enqueued copy may still use is freed only once the stream is past it
    // (the next transfer's callback, or when this actor stops).
    transfer.error = setup_.name + ": " + e.what();
    if (entry.owned && failure_.empty())
      failure_ = setup_.name + ": a copy from the host failed: " + e.what();
    transfer.done.set();
    if (entry.staging != nullptr)
      in_flight_.push_back(InFlight{entry.sequence, nullptr, entry.staging, nullptr});
    return;
  }
  in_flight_.push_back(entry);
}

void GpuDeviceActor::finish(const GpuStreamDoneMsg& msg) {
  // One stream: its callbacks come in the order they were enqueued, and each
  // one means every transfer up to its sequence number is done.
  if (!msg.error.empty() && failure_.empty())
    failure_ = setup_.name + ": the stream failed: " + msg.error;
  // Once the device is poisoned, nothing it finishes is trusted: a copy back
  // may have read what a failed copy or kernel left behind.
  while (!in_flight_.empty() && in_flight_.front().sequence <= msg.sequence) {
    auto entry = in_flight_.front();
    in_flight_.pop_front();
    release(entry, failure_);
  }
}

void GpuDeviceActor::release(InFlight& entry, std::string error) {
  // A transfer its caller waits for was answered by the callback; only its
  // staging buffer is left.
  if (entry.transfer == nullptr) {
    if (entry.staging != nullptr)
      staging_->deallocate(entry.staging);
    return;
  }
  auto& transfer = *entry.transfer;
  if (error.empty() && transfer.kind == GpuTransfer::Kind::to_host)
    std::memcpy(transfer.dst, entry.staging, transfer.bytes);
  if (entry.staging != nullptr)
    staging_->deallocate(entry.staging);
  transfer.error = std::move(error);
  transfer.done.set();
}

void GpuDeviceActor::on_exit() {
  // Waits for the stream, so the staging buffers are no longer read or
  // written, then tells whoever still waits. Held work and NCCL groups that
  // may wait for a peer forever go first.
  nccl_.stop_before_stream();
  run_held();
  while (!held_.empty()) {  // behind a group that started meanwhile
    nccl_.stop_before_stream();
    run_held();
  }
  if (stream_ != nullptr)
    setup_.backend->destroy_stream(setup_.gpu, stream_);
  stream_ = nullptr;
  handles_ = {};  // after the stream: its kernels may have used them
  nccl_.stop_after_stream();
  for (auto& entry : in_flight_)
    release(entry, setup_.name + "'s device actor stopped (its Runtime is being destroyed) before the transfer "
                                 "finished");
  in_flight_.clear();
  staging_.reset();
}

} // namespace troupe::internal
