#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/typed_event_based_actor.hpp>

#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_cross_memory.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// Options of one parameter server.
struct ParameterServerOptions {
  /// How errors name this server ("ps:0", "/job:ps/task:0").
  std::string name = "ps";
};

/// A parameter server of ParameterServerStrategy: owns variable shards by
/// ShardKey and applies updates to them, with exactly-once effects for the
/// updates of scheduled functions.
///
/// Exactly-once protocol (docs/protocol.md, "Parameter servers"):
/// 1. An immediate update (PsApplyMsg) applies at once.
/// 2. A scheduled function's attempt stages its updates (PsStageMsg); they
///    are held per attempt, invisible to every other reader, but visible to
///    the same attempt's reads (PsReadMsg with its AttemptId).
/// 3. When the function returned, the coordinator commits the attempt at
///    every server (PsCommitMsg): the staged updates apply in arrival order,
///    all or nothing, and the function is remembered as committed. A repeated
///    commit of that attempt answers already_committed; any other attempt of
///    the function is refused from then on.
/// 4. When the coordinator declares an attempt dead, it aborts it at every
///    server (PsAbortMsg): its staged updates are dropped and its later
///    stages and commit refused.
/// 5. The watermark carried by commits and aborts ("every function below N is
///    resolved") lets the server forget those functions, so its records stay
///    bounded by the functions in flight.
///
/// Errors name the server, the shard (variable name and key) and the attempt.
/// Handlers never throw: kernel exceptions become errors.
class ParameterServerActor final : public ParameterServerActorHandle::base {
public:
  ParameterServerActor(caf::actor_config& cfg, ParameterServerOptions options);

  behavior_type make_behavior() override;
  [[nodiscard]] const char* name() const override { return "troupe.parameter_server"; }

private:
  /// One shard: its value and the variable's name for errors.
  struct Shard {
    std::string name;
    Tensor value;
  };

  /// What the server knows about one function.
  struct FunctionRecord {
    std::optional<uint32_t> committed_attempt;
    std::set<uint32_t> aborted_attempts;
    /// Updates per attempt still waiting for a commit, in arrival order.
    std::map<uint32_t, std::vector<ShardUpdate>> staged;
  };

  // -- message handlers ----------------------------------------------------------

  caf::result<void> on_create(PsCreateMsg& msg);
  caf::result<PsReadReply> on_read(const PsReadMsg& msg);
  caf::result<void> on_apply(PsApplyMsg& msg);
  caf::result<void> on_stage(PsStageMsg& msg);
  caf::result<PsCommitReply> on_commit(const PsCommitMsg& msg);
  caf::result<uint32_t> on_abort(const PsAbortMsg& msg);
  [[nodiscard]] PsStats stats() const;
  caf::result<Tensor> on_gather(const PsGatherMsg& msg);

  // -- helpers --------------------------------------------------------------------

  /// The value `msg` reads: committed, or with its attempt's staged updates.
  [[nodiscard]] caf::expected<Tensor> read_value(const PsReadMsg& msg);
  /// Reads an update's value out of its sender's memory (`remote`, from
  /// PsApplyMsg or PsStageMsg), checked against the shard it changes;
  /// nothing when the update carries its value.
  [[nodiscard]] caf::error resolve_remote(ShardUpdate& update, CrossMemoryTensor& remote, const char* context);

  /// The shard `update` targets, after checking its op, dtype, shape and
  /// hyperparameters; an error names the shard and the fix.
  [[nodiscard]] caf::expected<Shard*> checked_target(const ShardUpdate& update, const char* context);
  /// Error(failed_precondition) when `id` may no longer stage, read or commit.
  [[nodiscard]] caf::error refuse_if_resolved(const AttemptId& id, const char* what) const;
  /// Forgets every function below `resolved_below` (a no-op when it does not advance).
  void advance_watermark(uint64_t resolved_below);
  [[nodiscard]] caf::error make_error(Errc code, const std::string& text) const;
  [[nodiscard]] std::string describe(const ShardKey& key) const;
  /// Sets shard `key` to `value`, creating it (a slot's first update) under
  /// its variable's name.
  void install(const ShardKey& key, Tensor value);
  /// `key`'s value in `pending` if there, else the held one, else an empty tensor.
  [[nodiscard]] Tensor current_value(const std::map<ShardKey, Tensor>& pending, const ShardKey& key) const;

  ParameterServerOptions options_;
  std::map<ShardKey, Shard> shards_;
  std::unordered_map<uint64_t, FunctionRecord> functions_;
  uint64_t resolved_below_ = 0;
  ReadLeases leases_; ///< values readers on this host read from this process's memory
};

/// The value of `value` after `update` (ASSIGN: the update's value; the
/// others element-wise). Throws troupe::Error on a dtype or shape mismatch.
[[nodiscard]] Tensor updated_value(const Tensor& value, const ShardUpdate& update);

/// Every value `update` writes, by key: the shard's new value and, for
/// APPLY_MOMENTUM and APPLY_ADAM, its slots' (momentum, m, v, the iteration
/// count). `current` gives a key's value now, or an empty tensor for a key
/// that does not exist yet (a slot then starts as zeros, the count as 0).
/// Nothing is changed in place. Throws troupe::Error on a mismatch.
[[nodiscard]] std::vector<std::pair<ShardKey, Tensor>>
updated_values(const std::function<Tensor(const ShardKey&)>& current, const ShardUpdate& update);

} // namespace troupe::internal
