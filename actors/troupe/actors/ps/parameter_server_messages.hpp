#pragma once

// The messages a ParameterServerActor accepts (parameter_server_actor.hpp),
// with their inspect overloads and type-ID block: they cross processes (a
// worker on one host updates a shard owned by a server on another). Include
// only from .cpp files and tests. The protocol: docs/protocol.md,
// "Parameter servers".

#include <compare>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/type_id.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/core/type_ids.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>

namespace caf {
class actor_system_config;
} // namespace caf

namespace troupe::internal {

// -- addressing -----------------------------------------------------------------

/// One shard a parameter server owns: shard `shard` of variable `variable`.
/// `slot` 0 is the variable itself; 1, 2, ... are its optimizer slots
/// (momentum's accumulator, Adam's m and v), which live on the server that owns
/// the variable's shard, so an optimizer step never leaves the server.
struct ShardKey {
  uint64_t variable = 0;
  int32_t shard = 0;
  int32_t slot = 0;

  friend bool operator==(const ShardKey&, const ShardKey&) = default;
  friend auto operator<=>(const ShardKey&, const ShardKey&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ShardKey& x) {
  return f(caf::meta::type_name("troupe::ShardKey"), x.variable, x.shard, x.slot);
}

/// "shard 1 of variable 7", "slot 2 of shard 0 of variable 7": how errors name a key.
[[nodiscard]] std::string to_string(const ShardKey& key);

/// One attempt at running one scheduled function: the coordinator numbers
/// functions 1, 2, ... and a function's attempts 1, 2, ... (a reschedule is a
/// new attempt). Function id 0 means "no function" (an immediate operation).
struct AttemptId {
  uint64_t function = 0;
  uint32_t attempt = 0;

  friend bool operator==(const AttemptId&, const AttemptId&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AttemptId& x) {
  return f(caf::meta::type_name("troupe::AttemptId"), x.function, x.attempt);
}

/// "attempt 2 of function 9".
[[nodiscard]] std::string to_string(const AttemptId& id);

// -- updates ----------------------------------------------------------------------

/// How an update changes a shard. The values are part of the wire format:
/// append new ones (APPLY_MOMENTUM, APPLY_ADAM use slots 1.. of the same
/// shard and more `hyper` entries), never renumber.
enum class UpdateOp : uint8_t {
  ASSIGN = 0,     ///< var = value
  ASSIGN_ADD = 1, ///< var += value
  ASSIGN_SUB = 2, ///< var -= value
  APPLY_SGD = 3,  ///< var -= hyper[0] * value (value is the gradient, hyper[0] the learning rate)
  /// Keras SGD with momentum (troupe::apply_momentum, nesterov off), hyper =
  /// {learning_rate, momentum}: accum = momentum * accum - lr * grad; var += accum.
  /// accum is slot momentum_slot of the same shard.
  APPLY_MOMENTUM = 4,
  /// Keras Adam (troupe::apply_adam), hyper = {learning_rate, beta_1, beta_2,
  /// epsilon}; m, v and the iteration count are slots adam_m_slot,
  /// adam_v_slot and adam_iterations_slot of the same shard; the step is the
  /// count + 1, and the count is incremented once per applied update.
  APPLY_ADAM = 5,
};

/// The optimizer slots APPLY_MOMENTUM and APPLY_ADAM use (ShardKey::slot).
/// Both keep their first moment in slot 1, as the Fashion-MNIST sample's
/// Optimizer does. A missing slot is created at the first applied update
/// (zeros of the variable's shape and dtype; the count an int64 scalar 0), or
/// explicitly with PsCreateMsg (a checkpoint restore); read them with PsReadMsg.
inline constexpr int32_t momentum_slot = 1;
inline constexpr int32_t adam_m_slot = 1;
inline constexpr int32_t adam_v_slot = 2;
/// Adam's iteration count: the number of Adam updates applied to this shard.
inline constexpr int32_t adam_iterations_slot = 3;

/// The most hyperparameters a ShardUpdate carries; a longer list is refused
/// on load (data_loss).
inline constexpr std::size_t max_update_hyper = 16;

/// "assign_add", as TensorFlow spells the method.
[[nodiscard]] const char* to_string(UpdateOp op) noexcept;

// -- bulk bytes from the sender's memory ---------------------------------------------

/// Tensors of at least this many bytes between tasks on one host travel as a
/// CrossMemoryTensor instead of inside the message.
inline constexpr std::size_t cross_memory_min_bytes = std::size_t{64} << 10;
/// The most dimensions a CrossMemoryTensor describes (refused on load).
inline constexpr std::size_t cross_memory_max_dims = 32;

/// A tensor whose bytes the receiver reads straight from the sender's memory
/// (net/link/cross_memory.hpp: one copy, no socket), when both run on one host
/// and the control plane said the receiver may read the sender (the sender's
/// pid comes from its hello, never from here). `bytes == 0`: none; the
/// message carries its tensor itself. What it claims is checked against the
/// shard it belongs to (or the request it answers) before anything is
/// allocated.
struct CrossMemoryTensor {
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint8_t dtype = 0;
  std::vector<int64_t> dims;
  /// The sender's loan (net/link/cross_memory.hpp): the reader checks, after
  /// copying, that the token is still in the sender's slot at `slot_address`
  /// (else the value was taken back and the copy is refused). A read's
  /// server also holds the bytes until PsReleaseMsg names the token.
  uint64_t lease = 0;
  uint64_t slot_address = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CrossMemoryTensor& x) {
  auto check = [&x]() -> caf::error {
    if (x.dims.size() > cross_memory_max_dims)
      return caf::make_error(Errc::data_loss, "a CrossMemoryTensor with " + std::to_string(x.dims.size())
                                                + " dimensions; at most " + std::to_string(cross_memory_max_dims));
    return caf::error{};
  };
  return f(caf::meta::type_name("troupe::CrossMemoryTensor"), x.address, x.bytes, x.dtype, x.dims, x.lease,
           x.slot_address, caf::meta::load_callback(check));
}

/// One change to one shard. Sending the change (a delta, a gradient) rather
/// than the new value is what lets concurrent workers update one variable
/// without overwriting each other.
struct ShardUpdate {
  ShardKey key;
  UpdateOp op = UpdateOp::ASSIGN;
  Tensor value;
  /// The optimizer's hyperparameters (APPLY_SGD: {learning_rate}; see UpdateOp
  /// for the others). New ops append entries; at most max_update_hyper.
  std::vector<double> hyper;
};

/// "" when every hyperparameter of an update made in `context` is finite,
/// else why not, naming it: an update must not leave its process with an
/// infinity, which CAF 0.17's serializer (pack754) loops on forever, nor
/// with a NaN that no server would apply.
[[nodiscard]] inline std::string check_update_hyper(const std::string& context, const std::vector<double>& hyper) {
  for (std::size_t i = 0; i < hyper.size(); ++i)
    if (!std::isfinite(hyper[i]))
      return context + ": hyperparameter " + std::to_string(i) + " is " + (std::isnan(hyper[i]) ? "nan" : "inf")
             + "; a parameter server applies finite learning rates and moments only (did the schedule diverge?)";
  return {};
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ShardUpdate& x) {
  // The op travels as its underlying byte; an unknown byte is refused when the
  // server validates the update.
  auto check_hyper = [&x]() -> caf::error {
    if (x.hyper.size() > max_update_hyper)
      return caf::make_error(Errc::data_loss, "a ShardUpdate carries " + std::to_string(x.hyper.size())
                                                + " hyperparameters; at most "
                                                + std::to_string(max_update_hyper) + " are accepted");
    // CAF 0.17's pack754 never returns for an infinite double: a received
    // infinity would hang whoever serializes this update again.
    for (double h : x.hyper)
      if (std::isinf(h))
        return caf::make_error(Errc::data_loss, "a ShardUpdate carries an infinite hyperparameter");
    return caf::error{};
  };
  return f(caf::meta::type_name("troupe::ShardUpdate"), x.key, x.op, x.value, x.hyper,
           caf::meta::load_callback(check_hyper));
}

// -- requests -------------------------------------------------------------------

/// Creates shard `key` holding `initial` (its dtype and shape are fixed from
/// now on). `name` is the variable's user-facing name, used in errors. A key
/// that exists is Error(invalid_argument). Reply: nothing.
struct PsCreateMsg {
  ShardKey key;
  std::string name;
  Tensor initial;
};

/// Reads shard `key`. With `attempt.function == 0` the reply is the committed
/// value; otherwise it is the committed value with that attempt's staged
/// updates to `key` applied in order (read-your-writes inside a function).
/// Reply: Tensor.
struct PsReadMsg {
  ShardKey key;
  AttemptId attempt;
  /// The reader may read the value from the server's memory (PsClient sets
  /// it for a server on its host).
  bool cross_memory = false;
};

/// A read's answer: the value, or (for a reader that allowed it, and a value
/// of at least cross_memory_min_bytes) where to read it, held for the reader
/// until its PsReleaseMsg or the request timeout.
struct PsReadReply {
  Tensor value;
  CrossMemoryTensor remote;
};

/// The reader copied leased bytes (or gave up): the server drops its hold.
/// No reply.
struct PsReleaseMsg {
  uint64_t lease = 0;
};

/// Applies `update` at once, outside any scheduled function (initialisation,
/// the coordinator's own assignments). Reply: nothing.
struct PsApplyMsg {
  // Constructors, not aggregate initialisation: `remote` is PsClient's to set.
  PsApplyMsg() = default;
  explicit PsApplyMsg(ShardUpdate u) : update(std::move(u)) {}

  ShardUpdate update;
  /// Set (and `update.value` empty) when the server reads the value from the
  /// sender's memory; the server resolves it before anything else.
  CrossMemoryTensor remote;
};

/// Holds `update` for `attempt`; it takes effect only when that attempt
/// commits. `sequence` numbers the attempt's stages at this server 0, 1, ...:
/// a repeated sequence number is a duplicate and is acknowledged without
/// staging again, a gap is Error(data_loss). Refused
/// (Error(failed_precondition)) when the function was committed by any
/// attempt, the attempt was aborted, or the function is below the resolved
/// watermark. Reply: nothing (sent after validation, so the worker knows the
/// update will apply if the attempt commits).
struct PsStageMsg {
  PsStageMsg() = default;
  PsStageMsg(AttemptId a, uint32_t s, ShardUpdate u) : attempt(a), sequence(s), update(std::move(u)) {}

  AttemptId attempt;
  uint32_t sequence = 0;
  ShardUpdate update;
  CrossMemoryTensor remote; ///< as in PsApplyMsg
};

/// Applies every update staged for `attempt` on this server, in arrival
/// order and all or nothing, and records the function as committed.
/// `staged_updates` is how many updates the worker staged here (acknowledged
/// ones, so every one has arrived); a different count is a broken protocol:
/// nothing is applied (Error(data_loss)). `resolved_below`: every function id below it is
/// resolved, so the server may forget them (0 = no news). Reply: PsCommitReply.
struct PsCommitMsg {
  AttemptId attempt;
  uint32_t staged_updates = 0;
  uint64_t resolved_below = 0;
};

/// How a commit ended.
struct PsCommitReply {
  /// false: this commit applied the updates; true: this attempt had committed
  /// before (a duplicate commit), nothing applied now.
  bool already_committed = false;
  uint32_t applied = 0;
};

/// Discards the updates staged for `attempt` and refuses its later stages and
/// commit. Aborting an attempt the server never heard of is fine (a worker
/// that died before staging anything here); aborting the committed attempt is
/// Error(failed_precondition). Reply: uint32_t, the number of updates discarded.
struct PsAbortMsg {
  AttemptId attempt;
  uint64_t resolved_below = 0;
};

/// Asks for the server's bookkeeping sizes (tests, diagnostics). Reply: PsStats.
struct PsStatsMsg {};

/// What a parameter server holds.
struct PsStats {
  uint64_t shards = 0;
  uint64_t function_records = 0; ///< functions remembered (committed, aborted or staging)
  uint64_t staged_updates = 0;   ///< updates waiting for their attempt's commit
  uint64_t resolved_below = 0;   ///< the watermark
  uint64_t read_leases = 0;      ///< values held for readers that read them from this process's memory
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsCreateMsg& x) {
  return f(caf::meta::type_name("troupe::PsCreateMsg"), x.key, x.name, x.initial);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsReadMsg& x) {
  return f(caf::meta::type_name("troupe::PsReadMsg"), x.key, x.attempt, x.cross_memory);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsReadReply& x) {
  return f(caf::meta::type_name("troupe::PsReadReply"), x.value, x.remote);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsReleaseMsg& x) {
  return f(caf::meta::type_name("troupe::PsReleaseMsg"), x.lease);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsApplyMsg& x) {
  return f(caf::meta::type_name("troupe::PsApplyMsg"), x.update, x.remote);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsStageMsg& x) {
  return f(caf::meta::type_name("troupe::PsStageMsg"), x.attempt, x.sequence, x.update, x.remote);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsCommitMsg& x) {
  return f(caf::meta::type_name("troupe::PsCommitMsg"), x.attempt, x.staged_updates, x.resolved_below);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsCommitReply& x) {
  return f(caf::meta::type_name("troupe::PsCommitReply"), x.already_committed, x.applied);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsAbortMsg& x) {
  return f(caf::meta::type_name("troupe::PsAbortMsg"), x.attempt, x.resolved_below);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsStatsMsg&) {
  return f(caf::meta::type_name("troupe::PsStatsMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsStats& x) {
  return f(caf::meta::type_name("troupe::PsStats"), x.shards, x.function_records, x.staged_updates,
           x.resolved_below, x.read_leases);
}

/// Reads rows `rows` (an int64 1-D tensor of row indices local to the shard,
/// any order, repeats allowed) of shard `key`: ShardedVariable's
/// embedding_lookup sends one per shard it touches instead of reading whole
/// shards. `attempt` as in PsReadMsg (function 0: the committed value). A row
/// outside the shard is Error(out_of_range) naming it. Reply: Tensor of shape
/// (rows.size(), shard's other dimensions...). Bounded on load as the other
/// messages: the rows travel as a Tensor.
struct PsGatherMsg {
  ShardKey key;
  Tensor rows;
  AttemptId attempt;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsGatherMsg& x) {
  return f(caf::meta::type_name("troupe::PsGatherMsg"), x.key, x.rows, x.attempt);
}

/// What a parameter server accepts (ParameterServerActor); every request is
/// answered, or failed naming the server, the variable and the attempt.
using ParameterServerActorHandle = caf::typed_actor<
  caf::reacts_to<PsCreateMsg>, caf::replies_to<PsReadMsg>::with<PsReadReply>, caf::reacts_to<PsReleaseMsg>,
  caf::reacts_to<PsApplyMsg>,
  caf::reacts_to<PsStageMsg>, caf::replies_to<PsCommitMsg>::with<PsCommitReply>,
  caf::replies_to<PsAbortMsg>::with<uint32_t>, caf::replies_to<PsStatsMsg>::with<PsStats>,
  caf::replies_to<PsGatherMsg>::with<Tensor>>;

/// Registers the parameter-server messages with `cfg`, after
/// add_cluster_types (every process that hosts or talks to a parameter
/// server must; make_config does it for every Runtime).
void add_parameter_server_types(caf::actor_system_config& cfg);

} // namespace troupe::internal

// After the cluster block; a later block (the coordinator's) starts at
// caf::id_block::troupe_parameter_server::end.
CAF_BEGIN_TYPE_ID_BLOCK(troupe_parameter_server, caf::id_block::troupe_cluster::end)
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::ShardKey))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::AttemptId))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::ShardUpdate))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsCreateMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsReadMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsApplyMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsStageMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsCommitMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsCommitReply))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsAbortMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsStatsMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsStats))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsGatherMsg))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::CrossMemoryTensor))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsReadReply))
  CAF_ADD_TYPE_ID(troupe_parameter_server, (troupe::internal::PsReleaseMsg))
CAF_END_TYPE_ID_BLOCK(troupe_parameter_server)
