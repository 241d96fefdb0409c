#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <set>
#include <optional>
#include <string>


#include <troupe/actors/gpu/gpu_device_messages.hpp>
#include <troupe/actors/gpu/nccl_messages.hpp>
#include <troupe/actors/gpu/nccl_progress_poller.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>

namespace troupe::internal {

/// A GPU device actor's NCCL: its ranks of the communicators it takes part
/// in (created on first use, cached by name, ended when the actor stops or
/// a peer is lost), and the group of calls it is getting onto the stream.
///
/// Communicators are nonblocking, so the actor never waits for a peer: while
/// a group is not on the stream yet (the communicator is being created, NCCL
/// connects, or its launch thread runs), the driver is busy(), the Runtime's
/// NcclProgressPoller watches the communicator and tells the actor when it
/// moved on (or after max_poll, to look at the deadline), and the actor
/// holds back every other piece of stream work until then: what the caller
/// enqueues after a collective runs after it.
///
/// A group that cannot get onto the stream within its timeout, or whose
/// communicator is aborted (NcclAbortMsg: a peer is gone), fails its caller
/// (its handoff, which the caller's next read or collective throws), and the
/// communicator is aborted: the next group names a new one. A group
/// that got onto the stream but does not finish on the GPU (a peer hangs) is
/// aborted too, with every communicator that has groups on the stream; its
/// caller already has its output tensors, so the transfers in flight fail
/// with the reason (the actor's on_lost), or else the next waited one does,
/// once: the device stays usable. A communicator the driver gives up on its
/// own is reported to its group (NcclGroupMsg::on_communicator_end), which
/// names a new one for the next collective. One group at a time is watched
/// (a completion callback; a health tick while groups run looks at its age),
/// the latest issued when the watch is armed: the stream runs in order, so
/// its completion covers every group before it, and a hang is found within
/// twice the timeout at most, without a callback and a timer per collective.
class NcclDriver {
public:
  /// `poller` is the Runtime's (GpuDeviceSetup::nccl_poller); `on_lost` is
  /// told when collectives on the stream were lost: the actor
  /// fails the transfers in flight (they may read what the aborted
  /// collectives left), or else the next one waited for.
  NcclDriver(GpuDeviceActorHandle::pointer self, std::string device, int gpu, GpuStream stream,
             GpuBackend& gpu_backend, std::shared_ptr<NcclProgressPoller> poller,
             std::function<void(const std::string&)> on_lost);
  ~NcclDriver();
  NcclDriver(const NcclDriver&) = delete;
  NcclDriver& operator=(const NcclDriver&) = delete;

  /// A group waits to get onto the stream: hold back other stream work.
  [[nodiscard]] bool busy() const noexcept { return waiting_.has_value(); }

  /// Starts msg (the driver must not be busy). A non-empty `device_failure`
  /// (the device's sticky failure) fails it at once, and its peers through
  /// the group; a non-empty `lost` (collectives lost before, not reported
  /// yet) is the caller's error once the group is on the stream.
  void start(NcclGroupMsg msg, const std::string& device_failure, std::string lost);
  /// A poll for the group `waiting` (NcclPollMsg); a stale one does nothing.
  void poll(uint64_t waiting);
  void group_done(uint64_t serial);
  /// Reads NCCL's error state of the communicators with groups on the
  /// stream, and ends those with a group past its timeout (NcclHealthMsg).
  void health();
  void abort(const std::string& name, const std::string& why);
  /// Frees this device's rank of `name` once its groups on the stream
  /// finished (no loss: nothing is cut short).
  void close(const std::string& name);

  /// Before the actor waits for its stream: aborts what may never finish.
  void stop_before_stream();
  /// After: frees the communicators left.
  void stop_after_stream() noexcept;

private:
  struct Communicator {
    NcclComm comm = nullptr;
    int rank = 0;
    int ranks = 1;
    uint64_t last_serial = 0;  ///< of its latest group on the stream
    std::function<void(const std::string&, const std::string&)> on_end;
  };
  struct Waiting {
    NcclGroupMsg msg;
    bool issued = false;
    std::chrono::steady_clock::time_point deadline;
    std::string lost;  ///< a loss to report to the caller with this group
  };

  void advance();
  void succeed();
  /// `tell_group`: the driver itself gave the communicator up (not told to).
  void fail_waiting(const std::string& why, bool tell_group);
  /// Aborts this device's rank of `name`; a loss if groups of it may still
  /// run (unless `stopping`: the actor fails what is left then).
  void end(const std::string& name, const std::string& why, bool tell_group, bool stopping = false) noexcept;
  /// Fails `msg` before it started, telling its group (the peers must not
  /// wait); `lost` goes to the caller first.
  void give_up(const NcclGroupMsg& msg, const std::string& why, const std::string& lost);
  /// Ends the communicators with groups on the stream once the watched one is past its deadline.
  void check_watch();
  void remember_aborted(const std::string& name, const std::string& why);
  /// Collectives on the stream are lost, for `why`: tells the actor.
  void lose(const std::string& why);
  /// Watches group `serial` (the latest issued) for completion and a hang.
  void watch(uint64_t serial, std::chrono::nanoseconds timeout);
  /// Watches the latest group issued, if none is watched and some is unfinished.
  void rewatch();
  /// Whether `communicator` may still have groups running on the stream.
  [[nodiscard]] bool running(const Communicator& communicator) const noexcept {
    return communicator.last_serial > finished_serial_;
  }

  GpuDeviceActorHandle::pointer self_;
  std::string device_;
  int gpu_;
  GpuStream stream_;
  GpuBackend& gpu_backend_;
  std::shared_ptr<NcclProgressPoller> poller_;
  std::function<void(const std::string&)> on_lost_;
  std::map<std::string, Communicator> communicators_;
  std::optional<Waiting> waiting_;
  uint64_t started_ = 0;  ///< groups started: names the waiting one's polls
  uint64_t next_serial_ = 0;      ///< the latest group issued
  uint64_t finished_serial_ = 0;  ///< the stream is past every group up to it
  std::optional<uint64_t> watching_;
  std::chrono::steady_clock::time_point watch_deadline_;
  std::chrono::nanoseconds watch_timeout_{0};
  bool health_scheduled_ = false;
  std::set<std::string> closing_;  ///< to end once their groups finished
  std::map<std::string, std::string> aborted_names_;  ///< the latest ones, with why, in aborted_order_
  std::deque<std::string> aborted_order_;
  std::chrono::nanoseconds latest_timeout_{0};
};

} // namespace troupe::internal
