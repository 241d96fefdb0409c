#pragma once

// The messages between a GPU's device actor and the NCCL collectives that use
// it (nccl_collective.hpp). They never leave the process: none has a type ID,
// and the group, which carries raw pointers and closures, refuses
// serialisation (core/local_only.hpp). All of them print.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include <troupe/actors/fibers/fiber_waiter.hpp>
#include <troupe/core/local_only.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>

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

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclGroupMsg& x) {
  return inspect_local_only(f, "troupe::NcclGroupMsg", x.what);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclAbortMsg& x) {
  return f(caf::meta::type_name("troupe::NcclAbortMsg"), x.name, x.why);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclCloseMsg& x) {
  return f(caf::meta::type_name("troupe::NcclCloseMsg"), x.name);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclPollMsg& x) {
  return f(caf::meta::type_name("troupe::NcclPollMsg"), x.waiting);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclGroupDoneMsg& x) {
  return f(caf::meta::type_name("troupe::NcclGroupDoneMsg"), x.serial);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclHealthMsg&) {
  return f(caf::meta::type_name("troupe::NcclHealthMsg"));
}

} // namespace troupe::internal
