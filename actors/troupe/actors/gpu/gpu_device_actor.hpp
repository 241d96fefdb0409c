#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <caf/meta/type_name.hpp>
#include <caf/event_based_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/gpu/nccl_driver.hpp>
#include <troupe/actors/gpu/nccl_messages.hpp>
#include <troupe/actors/gpu/caching_device_allocator.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/core/local_only.hpp>

namespace troupe::internal {

/// One copy or fill that a caller asks a logical GPU's device actor for, and
/// where the caller waits for it. The caller keeps it alive until `done`.
struct GpuTransfer {
  enum class Kind {
    to_host,     ///< `bytes` from this device at `src` to host memory at `dst`
    from_host,   ///< from host memory at `src` to this device at `dst`
    from_device, ///< from `src` on physical GPU `src_gpu` to this device at `dst`
    fill_zero,   ///< zeroes `bytes` at `dst` on this device
    barrier,     ///< nothing: done once the stream is past the work sent before it
  };
  Kind kind = Kind::fill_zero;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  int src_gpu = 0;
  /// Set by the device actor: "" or why the transfer failed.
  std::string error;
  Completion done;
  /// A copy from the host that nobody waits for: keeps `src` alive until the
  /// actor has staged it.
  std::shared_ptr<const void> source_owner;
};

/// Caller -> device actor: run `transfer` on the device's stream. The caller
/// keeps it alive until `done`, or hands it over in `owned` and does not wait
/// (a failure then poisons the device).
struct GpuTransferMsg {
  GpuTransfer* transfer = nullptr;
  std::shared_ptr<GpuTransfer> owned;
};

/// Caller -> device actor: enqueue a kernel on the device's stream
/// (DeviceMemory::launch says what a failure does). With `confirm`, the
/// actor sets its `done` (and `error`) once the work is enqueued.
struct GpuLaunchMsg {
  const char* what = "";
  std::function<void(const GpuLaunchContext&)> enqueue;
  GpuTransfer* confirm = nullptr;
};

/// Backend thread -> device actor: the stream finished the work enqueued up
/// to transfer number `sequence`, with "" or the stream's error.
struct GpuStreamDoneMsg {
  uint64_t sequence = 0;
  std::string error;
};

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
class GpuDeviceActor : public caf::event_based_actor {
public:
  GpuDeviceActor(caf::actor_config& cfg, GpuDeviceSetup setup);
  ~GpuDeviceActor() override;

  caf::behavior make_behavior() override;
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

// Local-only: a transfer points to a waiting caller's buffers and flag, a
// launch holds a closure that enqueues a kernel.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GpuTransferMsg& x) {
  const GpuTransfer* transfer = x.transfer != nullptr ? x.transfer : x.owned.get();
  int kind = transfer != nullptr ? static_cast<int>(transfer->kind) : -1;
  std::size_t bytes = transfer != nullptr ? transfer->bytes : 0;
  return inspect_local_only(f, "troupe::GpuTransferMsg", kind, bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GpuLaunchMsg& x) {
  std::string what = x.what != nullptr ? x.what : "";
  return inspect_local_only(f, "troupe::GpuLaunchMsg", what);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GpuStreamDoneMsg& x) {
  return f(caf::meta::type_name("troupe::GpuStreamDoneMsg"), x.sequence, x.error);
}

} // namespace troupe::internal
