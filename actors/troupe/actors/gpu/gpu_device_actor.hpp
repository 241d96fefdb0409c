#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <troupe/actors/gpu/caching_device_allocator.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/actors/gpu/gpu_device_messages.hpp>
#include <troupe/actors/gpu/nccl_driver.hpp>
#include <troupe/core/device_memory.hpp>

namespace troupe::internal {

/// What a logical GPU's device actor drives.
struct GpuDeviceSetup {
  std::string name;          ///< "GPU:1"
  int gpu = 0;               ///< the physical GPU the logical one lives on
  GpuBackend* backend = nullptr;
  GpuStream stream = nullptr; ///< created on `gpu`; the actor destroys it when it stops
  std::shared_ptr<NcclProgressPoller> nccl_poller; ///< shared by a Runtime's device actors
};

/// The actor that owns one logical GPU's stream: every copy and fill reaches
/// the GPU as a GpuTransferMsg, which it enqueues on its stream; the backend
/// reports the stream past it from its own thread, which answers a waiting
/// caller directly and sends the actor a GpuStreamDoneMsg to free the
/// staging buffer. The actor never waits on the stream itself. Host memory is
/// staged through page-locked buffers (cached), so copies run asynchronously
/// whatever memory the caller's tensor uses. Kernels arrive as GpuLaunchMsg
/// and are enqueued without an answer: the next transfer's completion covers
/// them, since the stream runs its work in order.
///
/// NCCL collectives arrive as NcclGroupMsg; its NcclDriver holds the
/// device's communicators. While a group is not on the stream yet, the actor
/// holds back every other transfer and launch, in order.
///
/// It finishes its transfers in the order it received them (one stream).
/// A kernel that fails to launch, or a stream error, fails every later
/// transfer with that cause (the GPU's results are lost from there on, as
/// with CUDA's sticky errors). When it stops, it waits for its stream, then
/// fails what is still pending.
class GpuDeviceActor final : public GpuDeviceActorHandle::base {
public:
  GpuDeviceActor(caf::actor_config& cfg, GpuDeviceSetup setup);
  ~GpuDeviceActor() override;

  behavior_type make_behavior() override;
  void on_exit() override;

private:
  /// A transfer enqueued on the stream, with its host staging buffer. The
  /// transfer is null where its caller is answered by the backend's callback
  /// or where it failed: only the buffer is left, freed once the stream is
  /// past it.
  struct InFlight {
    uint64_t sequence;
    GpuTransfer* transfer;
    void* staging;
    std::shared_ptr<GpuTransfer> owned;  ///< a transfer nobody waits for
  };

  void start(GpuTransfer& transfer, std::shared_ptr<GpuTransfer> owned);
  void enqueue_kernel(GpuLaunchMsg& msg);
  void finish(const GpuStreamDoneMsg& msg);
  void release(InFlight& entry, std::string error);
  /// Runs `work` now, or after the NCCL group that is getting onto the
  /// stream (a template: the common case allocates nothing).
  template <class Work>
  void in_order(Work&& work) {
    if (nccl_.busy() || !held_.empty())
      held_.emplace_back(std::forward<Work>(work));
    else
      work();
  }
  void run_held();

  GpuDeviceSetup setup_;
  GpuStream stream_;
  std::unique_ptr<CachingDeviceAllocator> staging_;
  std::deque<InFlight> in_flight_;
  uint64_t next_sequence_ = 0;
  GpuLibraryHandles handles_;
  /// NCCL collectives lost on the stream (NcclDriver): transfers up to
  /// `through` (sequence numbers) fail with `why` when the backend reports
  /// them done; if none of them was waited for (`unreported`), the next
  /// waited transfer, confirmed launch or collective fails instead. Shared
  /// with the backend's callbacks.
  struct Lost {
    std::mutex mutex;
    uint64_t through = 0;
    std::string why;
    bool unreported = false;
  };
  /// `why`, once, if collectives were lost and nobody was told yet; else "".
  std::string take_lost();
  std::shared_ptr<Lost> lost_ = std::make_shared<Lost>();
  NcclDriver nccl_;
  std::deque<std::function<void()>> held_;  ///< stream work behind an NCCL group
  /// Why this GPU's results are lost ("" while they are not).
  std::string failure_;
};

} // namespace troupe::internal
