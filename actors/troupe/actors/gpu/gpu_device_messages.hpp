#pragma once

// The messages a GpuDeviceActor accepts (gpu_device_actor.hpp), besides the
// NCCL ones (nccl_messages.hpp), and its typed handle.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/meta/type_name.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/gpu/nccl_messages.hpp>
#include <troupe/core/device_memory.hpp>
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

/// What a logical GPU's device actor accepts (GpuDeviceActor): copies,
/// fills and kernels from its DeviceMemory, NCCL groups and their control
/// from the GPU collectives, and its stream's and its own progress reports.
using GpuDeviceActorHandle = caf::typed_actor<
  caf::reacts_to<GpuTransferMsg>, caf::reacts_to<GpuLaunchMsg>, caf::reacts_to<GpuStreamDoneMsg>,
  caf::reacts_to<NcclGroupMsg>, caf::reacts_to<NcclPollMsg>, caf::reacts_to<NcclAbortMsg>,
  caf::reacts_to<NcclCloseMsg>, caf::reacts_to<NcclGroupDoneMsg>, caf::reacts_to<NcclHealthMsg>>;

} // namespace troupe::internal
