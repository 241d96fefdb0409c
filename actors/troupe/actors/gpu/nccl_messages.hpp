#pragma once

// The messages between a GPU's device actor and the NCCL collectives that use
// it (nccl_collective.hpp). They carry raw pointers and closures, so they
// never leave the process.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/actors/fibers/fiber_waiter.hpp>
#include <troupe/core/nccl_backend.hpp>

namespace troupe::internal {

/// Which communicator a group of calls runs on, and how to create this
/// device's rank of it if the device has none under `name` yet.
struct NcclCommunicatorSpec {
  /// Names the communicator in the device actor's cache: the devices it
  /// spans and its generation, "group 3 gen 0: GPU:0,GPU:1".
  std::string name;
  NcclUniqueId id;
  int ranks = 1;
  int rank = 0;
};

/// Caller -> device actor: issue `calls` as one NCCL group on the device's
/// stream, after everything sent to the device before. The actor sets
/// `handoff` once the group is on the stream, or failed; the caller does
/// not wait for it (FiberWaiter::hand_off), and `keep_alive` keeps the
/// buffers alive until then.
struct NcclGroupMsg {
  NcclCommunicatorSpec communicator;
  std::vector<NcclCall> calls;
  std::shared_ptr<const void> keep_alive;
  std::string what;                       ///< "all_reduce (group 3, run 1, #0)", for errors
  std::chrono::nanoseconds timeout{0};    ///< then the communicator is aborted
  std::shared_ptr<HandOff> handoff;
  /// Told (communicator name, why) when the device actor gives up its rank
  /// of the communicator on its own (a failure, a timeout, a hang).
  std::function<void(const std::string&, const std::string&)> on_communicator_end;
};

/// Anyone -> device actor: communicator `name` cannot complete (a peer is
/// gone): abort it now, failing what waits on it with `why`.
struct NcclAbortMsg {
  std::string name;
  std::string why;
};

/// Group -> device actor: communicator `name` will not be used again (its
/// strategy is gone): free this device's rank once its groups finished.
struct NcclCloseMsg {
  std::string name;
};

/// Device actor -> itself: look at the communicator group `waiting` (the
/// driver's count of the groups it started) waits on again.
struct NcclPollMsg {
  uint64_t waiting = 0;
};

/// Backend thread -> device actor: group `serial` finished on the stream.
struct NcclGroupDoneMsg {
  uint64_t serial = 0;
};

/// Device actor -> itself, while groups run: read NCCL's error state of
/// their communicators, and look for a group that should have finished.
struct NcclHealthMsg {};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclGroupMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclAbortMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclCloseMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclPollMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclGroupDoneMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclHealthMsg)
