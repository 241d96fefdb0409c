#pragma once

// The messages of the coordinator's closure queue (docs/protocol.md,
// "Coordinator"): the edge's calls, worker registration and loss, the
// run/finished exchange with workers, and the attempt notices that parameter
// servers use to discard the updates of aborted attempts.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/actors/completion.hpp>
#include <troupe/core/errors.hpp>

namespace troupe {

/// Where a scheduled function stands (TF's RemoteValueStatus, with its
/// ABORTED split into the function's own failure and a cancellation).
enum class RemoteValueStatus {
  not_ready, ///< queued or running
  ready,     ///< ran; fetch returns its value
  failed,    ///< raised, or could not run (no worker alive); fetch raises that error
  cancelled, ///< never ran because an earlier function failed; fetch says so
};

} // namespace troupe

namespace troupe::internal {

/// A scheduled function's id, unique within one coordinator (1, 2, ...).
using ClosureId = uint64_t;

/// What to run: a function registered under `function_name` in every process,
/// and its serialized arguments.
struct ClosureSpec {
  std::string function_name;
  std::vector<uint8_t> args;
};

/// Where the coordinator leaves a closure's result for its RemoteValue.
/// Written once by the coordinator actor, before `done` is set.
struct ClosureOutcome {
  RemoteValueStatus status = RemoteValueStatus::not_ready;
  std::vector<uint8_t> value;
  Errc code = Errc::internal;
  std::string error;
  Completion done;
};

// -- edge -> coordinator --------------------------------------------------------

/// The answer to one blocking edge call (schedule, join, done).
struct CoordinatorCallSlot {
  ClosureSpec spec;                         ///< schedule: what to queue
  ClosureId id = 0;                         ///< schedule: the queued closure's id
  std::shared_ptr<ClosureOutcome> outcome;  ///< schedule: where its result will be
  bool finished = false;                    ///< done: nothing queued or running
  bool failed = false;                      ///< the call raises Error(code, error)
  Errc code = Errc::internal;
  std::string error;
  Completion answered;
};

/// Queue `slot->spec`; answered once it is queued (later while the queue is full).
struct CoordinatorScheduleMsg {
  std::shared_ptr<CoordinatorCallSlot> slot;
};

/// Answered when everything scheduled so far has finished, or with the first error.
struct CoordinatorJoinMsg {
  std::shared_ptr<CoordinatorCallSlot> slot;
};

/// Answered at once with `finished`, or with the first error (TF's done()).
struct CoordinatorDoneMsg {
  std::shared_ptr<CoordinatorCallSlot> slot;
};

/// A worker (a new one, or a restarted process) that takes closures from now on.
struct CoordinatorAddWorkerMsg {
  caf::actor worker;
  std::string name; ///< e.g. "/job:worker/replica:0/task:1", used in messages
};

/// The cluster's failure detector found `worker` lost or frozen (after the
/// peer timeout). A worker actor that terminates is found by its down message.
struct CoordinatorWorkerLostMsg {
  caf::actor worker;
  std::string reason;
};

/// Coordinator -> itself: the no-worker deadline of arming number `generation`.
struct CoordinatorNoWorkerDeadlineMsg {
  uint64_t generation = 0;
};

// -- coordinator <-> worker -----------------------------------------------------

/// Coordinator -> worker: run attempt `attempt` (1, 2, ...) of closure `id`.
/// The worker answers `coordinator` with one ClosureFinishedMsg.
struct RunClosureMsg {
  ClosureId id = 0;
  uint32_t attempt = 0;
  int worker_index = 0; ///< picks this worker's component of PerWorker arguments
  ClosureSpec spec;
  caf::actor coordinator;
};

/// Worker -> coordinator: attempt `attempt` of closure `id` ended. A result
/// of an attempt that is no longer the current one is ignored.
struct ClosureFinishedMsg {
  ClosureId id = 0;
  uint32_t attempt = 0;
  bool ok = true;
  std::vector<uint8_t> value; ///< when ok
  Errc code = Errc::internal; ///< when not ok
  std::string error;          ///< when not ok
};

// -- coordinator -> attempt listeners (parameter servers) -----------------------

/// How one attempt of a closure ended.
enum class AttemptOutcome {
  finished, ///< its result was taken: its updates stand
  failed,   ///< the function raised: its result is the closure's error
  aborted,  ///< its worker was lost: discard every update tagged (id, attempt)
};

/// Coordinator -> every attempt listener, once per attempt that was started.
/// Parameter servers tag updates with (id, attempt) and drop those of an
/// aborted attempt, which is what makes a rerun's effects count once.
struct ClosureAttemptEndedMsg {
  ClosureId id = 0;
  uint32_t attempt = 0;
  AttemptOutcome outcome = AttemptOutcome::finished;
  std::string reason; ///< aborted: why the worker was lost
};

/// Options of a coordinator actor.
struct CoordinatorOptions {
  /// Closures that may wait in the queue; schedule blocks while it is full.
  /// TensorFlow's _CLOSURE_QUEUE_MAX_SIZE (256 * 1024, not tied to the workers).
  std::size_t queue_capacity = 256 * 1024;
  /// How long closures and calls may wait while no worker is alive (a
  /// restarted worker may rejoin meanwhile) before they fail naming that.
  std::chrono::milliseconds no_worker_timeout{60'000};
  /// Actors told how every attempt ended (ClosureAttemptEndedMsg).
  std::vector<caf::actor> attempt_listeners;
};

} // namespace troupe::internal

// In-process for now: registered with inspect() when workers move to other processes.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CoordinatorScheduleMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CoordinatorJoinMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CoordinatorDoneMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CoordinatorAddWorkerMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CoordinatorWorkerLostMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CoordinatorNoWorkerDeadlineMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::RunClosureMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ClosureFinishedMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ClosureAttemptEndedMsg)
