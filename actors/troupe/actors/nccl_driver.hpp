#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <caf/event_based_actor.hpp>

#include <troupe/actors/nccl_messages.hpp>
#include <troupe/core/gpu_backend.hpp>
#include <troupe/core/nccl_backend.hpp>

namespace troupe::internal {

/// A GPU device actor's NCCL: its ranks of the communicators it takes part
/// in (created on first use, cached by name, ended when the actor stops or
/// a peer is lost), and the group of calls it is getting onto the stream.
///
/// Communicators are nonblocking, so the actor never waits for a peer: while
/// a group is not on the stream yet (the communicator is being created, or
/// NCCL connects), the driver is busy() and polls through messages to the
/// actor, which holds back every other piece of stream work until it is
/// not: what the caller enqueues after a collective runs after it.
///
/// A group that cannot get onto the stream within its timeout, or whose
/// communicator is aborted (NcclAbortMsg: a peer is gone), fails its caller,
/// and the communicator is aborted: the next group names a new one. A group
/// that got onto the stream but does not finish on the GPU within its
/// timeout (a peer hangs) is aborted too; its caller already has its output
/// tensors, so the next waited transfer or collective on the device fails
/// with the reason, once: the device stays usable.
class NcclDriver {
public:
  NcclDriver(caf::event_based_actor* self, std::string device, int gpu, GpuStream stream,
             GpuBackend& gpu_backend);
  ~NcclDriver();
  NcclDriver(const NcclDriver&) = delete;
  NcclDriver& operator=(const NcclDriver&) = delete;

  /// A group waits to get onto the stream: hold back other stream work.
  [[nodiscard]] bool busy() const noexcept { return waiting_.has_value(); }

  /// Starts msg (the driver must not be busy); `device_failure` is the
  /// device's sticky failure, which fails it at once.
  void start(NcclGroupMsg msg, const std::string& device_failure);
  void poll();
  void group_done(uint64_t serial);
  void watchdog(uint64_t serial);
  void abort(const std::string& name, const std::string& why);

  /// Why a collective whose outputs were handed out was lost on the GPU; ""
  /// when none was. Reading it clears it: it is reported once.
  [[nodiscard]] std::string take_lost();

  /// Before the actor waits for its stream: aborts what may never finish.
  void stop_before_stream();
  /// After: frees the communicators left.
  void stop_after_stream() noexcept;

private:
  struct Communicator {
    NcclComm comm = nullptr;
    int rank = 0;
    int ranks = 1;
    int running = 0;  ///< groups on the stream, not known to be finished
  };
  struct Waiting {
    NcclGroupMsg msg;
    bool issued = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::nanoseconds delay;
  };

  void advance();
  void succeed();
  void fail_waiting(const std::string& why);
  void end(const std::string& name) noexcept;

  caf::event_based_actor* self_;
  std::string device_;
  int gpu_;
  GpuStream stream_;
  GpuBackend& gpu_backend_;
  std::map<std::string, Communicator> communicators_;
  std::optional<Waiting> waiting_;
  std::map<uint64_t, std::string> running_;  ///< serial -> communicator
  uint64_t next_serial_ = 0;
  std::string lost_;
};

} // namespace troupe::internal
