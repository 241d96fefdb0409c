#pragma once

// ShardedVariable's CAF side, for troupe's own code and tests (not installed):
// the state behind the handle, the factory that creates the shards on the
// parameter servers, and the per-shard calls that take an AttemptId.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/strategies/partitioners.hpp>
#include <troupe/strategies/round_robin_placement.hpp>
#include <troupe/strategies/shard_layout.hpp>
#include <troupe/strategies/sharded_variable.hpp>

namespace troupe::internal {

/// What a ShardedVariable handle shares: where each shard lives and how to
/// reach its server.
struct ShardedVariableState {
  RuntimeImpl* runtime = nullptr;
  std::string name;
  uint64_t variable_id = 0; ///< ShardKey::variable of every shard
  DType dtype = DType::float32;
  ShardLayout layout{Shape{}, 1};
  std::vector<int> ps_tasks;        ///< per shard: its ps task
  std::vector<ParameterServerActorHandle> servers;  ///< per shard: that task's server
};

/// Creates variable `name` with value `initial` on `servers` (the parameter
/// servers by ps task index): splits it with ShardLayout::for_variable, places
/// the shards with `placement` (advancing it) and creates every shard on its
/// server at once (immediate create), waiting for all of them. Throws Error
/// naming the server that refused or exited, or Error(timeout). With
/// `create_on_servers` false it only makes the handle (a worker process of a
/// cluster, whose coordinator creates the shards).
[[nodiscard]] ShardedVariable make_sharded_variable(Runtime& runtime, const std::vector<ParameterServerActorHandle>& servers,
                                                    std::string name, const Tensor& initial,
                                                    const std::optional<Partitioner>& partitioner,
                                                    RoundRobinPlacement& placement, bool create_on_servers = true);

// -- reads and updates under an attempt ----------------------------------------------
// ShardedVariable's public calls pass current_attempt(): inside a scheduled
// function reads see the attempt's own staged updates and updates are staged
// (WorkerContext::stage) until the coordinator commits the attempt; elsewhere
// (AttemptId{}, function 0) they read and apply committed values at once.

/// The running scheduled function's attempt, or AttemptId{} outside one.
[[nodiscard]] AttemptId current_attempt();

/// Every shard's value (one read per shard, at once), in shard order.
[[nodiscard]] std::vector<Tensor> read_shards(const ShardedVariableState& state, AttemptId attempt = {});
/// Rows `ids` (int32/int64 vector of full-variable rows) in the ids' order.
[[nodiscard]] Tensor gather_rows(const ShardedVariableState& state, const Tensor& ids, AttemptId attempt = {});
/// Applies `op` with `value` (the full variable's shape and dtype) and the
/// optimizer's `hyper` parameters to every shard at once.
void update_shards(const ShardedVariableState& state, UpdateOp op, const Tensor& value, AttemptId attempt = {},
                   const std::vector<double>& hyper = {});

} // namespace troupe::internal
