#pragma once

// The messages of the coordinator's closure queue (docs/protocol.md,
// "Coordinator"): the edge's calls, worker and parameter-server loss, the
// run/finished exchange with workers, and the attempt notices to observers
// (the servers themselves get PsCommitMsg and PsAbortMsg). The last two cross
// processes: they have inspect overloads, bounded loads and the type-ID block
// troupe_coordinator; the edge's calls hold shared slots and stay local.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/actor.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/remote_value_status.hpp>
#include <troupe/core/bounded_field.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/local_only.hpp>


namespace troupe::internal {

/// A scheduled function's id, unique within one coordinator (1, 2, ...).
using ClosureId = uint64_t;

// -- wire bounds ------------------------------------------------------------------

// What a received coordinator message may hold. A length is checked against
// these (and against the bytes that remain) before anything is allocated, so
// a corrupt or hostile length cannot make the receiver allocate gigabytes.

/// A registered function's name ("train_step").
inline constexpr std::size_t max_function_name_bytes = 4 * 1024;
/// A closure's serialized arguments, or its serialized result. Bulk tensors
/// belong in variables on parameter servers, not in closure arguments.
inline constexpr std::size_t max_closure_payload_bytes = 64 * 1024 * 1024;
/// An error text or a reason ("worker w1 was lost: ...").
inline constexpr std::size_t max_error_text_bytes = 64 * 1024;
/// Entries of ClosureFinishedMsg::staged_per_server (one per parameter
/// server): far above any real cluster, low enough to bound the allocation.
inline constexpr std::size_t max_parameter_servers = 64 * 1024;

/// Error(data_loss) for a received `what` holding an unknown enum byte.
[[nodiscard]] caf::error unknown_enum_value(const char* what, unsigned value);

/// Whether `code` is one of Errc's values (a received byte may be anything).
[[nodiscard]] constexpr bool known_errc(Errc code) noexcept {
  return code >= Errc::invalid_argument && code <= Errc::unknown;
}

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

/// The cluster's failure detector found parameter server `ps_task` (an index
/// into CoordinatorOptions::parameter_servers) lost. A server actor that
/// terminates is found by its down message. Either way every unsettled
/// closure and every call from then on fails with Error(peer_lost) naming it.
struct CoordinatorPsLostMsg {
  int ps_task = 0;
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
  /// How many updates the attempt staged (and had acknowledged) at each
  /// parameter server, by ps task index; empty or all zeros = none. The
  /// coordinator commits exactly these counts (PsCommitMsg), so a worker
  /// never commits by itself. At most max_parameter_servers entries.
  std::vector<uint32_t> staged_per_server;
};

// -- coordinator -> attempt listeners (observers) --------------------------------

/// How one attempt of a closure ended. The values are part of the wire
/// format: append, never renumber.
enum class AttemptOutcome : uint8_t {
  finished = 0, ///< its result was taken: its updates stand
  failed = 1,   ///< the function raised: its result is the closure's error
  aborted = 2,  ///< its worker was lost: discard every update tagged (id, attempt)
};

/// Coordinator -> every attempt listener, once per attempt whose fate was
/// decided (finished: after its commits were acknowledged), for observers.
/// The parameter servers get the same decisions as PsCommitMsg and
/// PsAbortMsg; nothing is told after a parameter server was lost.
struct ClosureAttemptEndedMsg {
  ClosureId id = 0;
  uint32_t attempt = 0;
  AttemptOutcome outcome = AttemptOutcome::finished;
  std::string reason; ///< aborted: why the worker was lost
};

// -- inspect overloads (the wire messages) -------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ClosureSpec& x) {
  return f(caf::meta::type_name("troupe::ClosureSpec"),
           bounded(x.function_name, max_function_name_bytes, "a closure's function name"),
           bounded(x.args, max_closure_payload_bytes, "a closure's arguments"));
}

/// The coordinator handle travels as CAF serialises actors (a proxy on the
/// worker's node), so the worker can answer it.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunClosureMsg& x) {
  return f(caf::meta::type_name("troupe::RunClosureMsg"), x.id, x.attempt, x.worker_index, x.spec, x.coordinator);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ClosureFinishedMsg& x) {
  auto check_code = [&x]() -> caf::error {
    return known_errc(x.code)
             ? caf::error{}
             : unknown_enum_value("a ClosureFinishedMsg's error code", static_cast<unsigned>(x.code));
  };
  return f(caf::meta::type_name("troupe::ClosureFinishedMsg"), x.id, x.attempt, x.ok,
           bounded(x.value, max_closure_payload_bytes, "a closure's value"), x.code,
           bounded(x.error, max_error_text_bytes, "a closure's error text"),
           bounded(x.staged_per_server, max_parameter_servers, "a ClosureFinishedMsg's staged_per_server"),
           caf::meta::load_callback(check_code));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ClosureAttemptEndedMsg& x) {
  auto check_outcome = [&x]() -> caf::error {
    return x.outcome <= AttemptOutcome::aborted
             ? caf::error{}
             : unknown_enum_value("a ClosureAttemptEndedMsg's outcome", static_cast<unsigned>(x.outcome));
  };
  return f(caf::meta::type_name("troupe::ClosureAttemptEndedMsg"), x.id, x.attempt, x.outcome,
           bounded(x.reason, max_error_text_bytes, "an attempt's reason"), caf::meta::load_callback(check_outcome));
}

/// Registers the coordinator's wire messages with `cfg`, after
/// add_parameter_server_types (make_config does it for every Runtime).
void add_coordinator_types(caf::actor_system_config& cfg);

/// TROUPE_COLLECTIVE_TIMEOUT_SECONDS as milliseconds (CoordinatorOptions' default).
[[nodiscard]] std::chrono::milliseconds default_commit_timeout();

/// Options of a coordinator actor.
struct CoordinatorOptions {
  /// Closures that may wait in the queue; schedule blocks while it is full.
  /// TensorFlow's _CLOSURE_QUEUE_MAX_SIZE (256 * 1024, not tied to the workers).
  std::size_t queue_capacity = 256 * 1024;
  /// How long closures and calls may wait while no worker is alive (a
  /// restarted worker may rejoin meanwhile) before they fail naming that.
  std::chrono::milliseconds no_worker_timeout{60'000};
  /// Actors told how every attempt ended (ClosureAttemptEndedMsg): observers
  /// (tests, diagnostics); the parameter servers get commits and aborts.
  std::vector<caf::actor> attempt_listeners;
  /// The parameter servers, by ps task index (the index of
  /// ClosureFinishedMsg::staged_per_server). The coordinator commits and
  /// aborts attempts on them and monitors them: losing one fails everything.
  std::vector<ParameterServerActorHandle> parameter_servers;
  /// Their names for messages ("/job:ps/replica:0/task:1"); empty = made up
  /// from the index. Otherwise one per server.
  std::vector<std::string> parameter_server_names;
  /// How long a commit may wait for a server's answer before the closure
  /// fails naming the server (aborts get the same deadline; their answer is
  /// not needed). Default: TROUPE_COLLECTIVE_TIMEOUT_SECONDS.
  std::chrono::milliseconds commit_timeout = default_commit_timeout();
};

// -- printing the in-process messages ---------------------------------------------

// Local-only: the edge's calls carry the slot a thread of this process waits on.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorScheduleMsg& x) {
  std::string function = x.slot ? x.slot->spec.function_name : std::string{};
  return inspect_local_only(f, "troupe::CoordinatorScheduleMsg", function);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorJoinMsg&) {
  return inspect_local_only(f, "troupe::CoordinatorJoinMsg");
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorDoneMsg&) {
  return inspect_local_only(f, "troupe::CoordinatorDoneMsg");
}

// The failure detector's verdicts and the timer come from this process only
// (no type ID), but nothing in them ties them to it.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorAddWorkerMsg& x) {
  return f(caf::meta::type_name("troupe::CoordinatorAddWorkerMsg"), x.worker, x.name);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorWorkerLostMsg& x) {
  return f(caf::meta::type_name("troupe::CoordinatorWorkerLostMsg"), x.worker, x.reason);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorPsLostMsg& x) {
  return f(caf::meta::type_name("troupe::CoordinatorPsLostMsg"), x.ps_task, x.reason);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CoordinatorNoWorkerDeadlineMsg& x) {
  return f(caf::meta::type_name("troupe::CoordinatorNoWorkerDeadlineMsg"), x.generation);
}

/// What a coordinator accepts (CoordinatorActor): the edge's calls, the
/// failure detector's verdicts, the workers' results and its own timer.
using CoordinatorActorHandle = caf::typed_actor<
  caf::reacts_to<CoordinatorScheduleMsg>, caf::reacts_to<CoordinatorJoinMsg>, caf::reacts_to<CoordinatorDoneMsg>,
  caf::reacts_to<CoordinatorAddWorkerMsg>, caf::reacts_to<CoordinatorWorkerLostMsg>,
  caf::reacts_to<ClosureFinishedMsg>, caf::reacts_to<CoordinatorNoWorkerDeadlineMsg>,
  caf::reacts_to<CoordinatorPsLostMsg>>;

} // namespace troupe::internal

// Starts where the parameter-server block ends: two blocks that start at the
// same id collide wherever both headers are included.
CAF_BEGIN_TYPE_ID_BLOCK(troupe_coordinator, caf::id_block::troupe_parameter_server::end)
  CAF_ADD_TYPE_ID(troupe_coordinator, (troupe::internal::ClosureSpec))
  CAF_ADD_TYPE_ID(troupe_coordinator, (troupe::internal::RunClosureMsg))
  CAF_ADD_TYPE_ID(troupe_coordinator, (troupe::internal::ClosureFinishedMsg))
  CAF_ADD_TYPE_ID(troupe_coordinator, (troupe::internal::ClosureAttemptEndedMsg))
CAF_END_TYPE_ID_BLOCK(troupe_coordinator)
