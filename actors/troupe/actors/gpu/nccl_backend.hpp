#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <troupe/core/dtype.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/core/scoped_override.hpp>

namespace troupe::internal {

/// A backend's communicator rank (ncclComm_t).
using NcclComm = void*;

/// The name every rank of a communicator being created is given (ncclUniqueId:
/// 128 opaque bytes that the creator hands to the other ranks).
struct NcclUniqueId {
  static constexpr std::size_t size = 128;
  std::array<unsigned char, size> bytes{};
  friend bool operator==(const NcclUniqueId&, const NcclUniqueId&) = default;
};

/// Where a communicator, or the calls last issued on it, stand
/// (ncclCommGetAsyncError: ncclSuccess, ncclInProgress, anything else).
enum class NcclState { ready, in_progress, failed };

/// NCCL's reductions troupe uses (ncclSum, ncclAvg, ncclMax, ncclMin, ncclProd).
enum class NcclReduction { sum, avg, max, min, prod };

/// One collective of a group of calls, on the communicator's GPU.
struct NcclCall {
  enum class Kind {
    all_reduce,     ///< `count` elements of `send` into `recv` on every rank
    all_gather,     ///< `count` from each rank, rank-ordered into `recv` (`count` x ranks)
    broadcast,      ///< `count` from rank `root`'s `send` into every rank's `recv`
    reduce_scatter, ///< `count` x ranks of `send`; rank r gets slice r (`count`) in `recv`
  };
  Kind kind = Kind::all_reduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0; ///< elements, as NCCL counts them for `kind`
  DType dtype = DType::float32;
  NcclReduction reduction = NcclReduction::sum;
  int root = 0;
};

/// The NCCL library that troupe's device actors drive: libnccl in a build
/// with NCCL, none in a build without, an emulation in host memory in
/// troupe's tests.
///
/// Every communicator is nonblocking (ncclConfig_t.blocking = 0): no call
/// waits for the other ranks, so a device actor, which shares its thread
/// with others, never blocks on a peer. A call that could not finish at once
/// leaves its communicator `in_progress`; the caller polls state() until it
/// is `ready` (the work is on the stream) or `failed`, and issues nothing
/// else on that communicator or stream meanwhile. Thread-safe across
/// communicators; one communicator is driven by one actor at a time.
class NcclBackend {
public:
  virtual ~NcclBackend() = default;

  /// Whether communicators can be created here; why not, naming the fix.
  [[nodiscard]] virtual bool available() = 0;
  [[nodiscard]] virtual std::string unavailable_reason() = 0;
  /// "NCCL 2.28.9", for the log.
  [[nodiscard]] virtual std::string version() = 0;

  /// A fresh name for a communicator (ncclGetUniqueId); throws Error(internal).
  [[nodiscard]] virtual NcclUniqueId unique_id() = 0;
  /// Starts creating rank `rank` of `ranks` of communicator `id` on physical
  /// GPU `gpu` (ncclCommInitRankConfig); returns at once. Throws
  /// Error(internal) naming the GPU when NCCL refuses at once.
  [[nodiscard]] virtual NcclComm init_rank(int gpu, const NcclUniqueId& id, int ranks, int rank) = 0;
  /// The communicator's state; `error` gets NCCL's reason when it failed.
  [[nodiscard]] virtual NcclState state(NcclComm comm, std::string& error) = 0;
  /// Issues `calls` as one group (ncclGroupStart ... ncclGroupEnd) on
  /// `stream` of `gpu`, the communicator's GPU, and returns the group's state.
  [[nodiscard]] virtual NcclState enqueue(int gpu, NcclComm comm, GpuStream stream,
                                          const std::vector<NcclCall>& calls, std::string& error) = 0;
  /// Ends the communicator at once (ncclCommAbort): calls still running on
  /// the GPU stop, their results are undefined. Frees it (NCCL frees a
  /// process's ranks of one communicator once all of them were aborted). It
  /// also ends finished communicators: ncclCommDestroy may wait for the
  /// other ranks, which may stop on the thread it blocks.
  virtual void abort(NcclComm comm) noexcept = 0;
};

/// The process's NCCL: libnccl in a build with NCCL, else one that is not available.
[[nodiscard]] NcclBackend& nccl_backend();

/// Replaces the process's NCCL while it lives (troupe's tests emulate it).
using ScopedNcclBackend = ScopedOverride<NcclBackend>;

} // namespace troupe::internal
