#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <troupe/strategies/sharded_variable.hpp>
#include <troupe/strategies/variable.hpp>

namespace troupe {

/// How Checkpoint::restore treats what the file and the Checkpoint do not share.
struct CheckpointRestoreOptions {
  /// False (default): a variable in the file that the Checkpoint does not
  /// have is Error(invalid_argument), as a checkpoint of a different model.
  /// True: such variables are ignored (TensorFlow's expect_partial()). A
  /// variable of the Checkpoint missing from the file is an error either way.
  bool expect_partial = false;
};

/// Saves and restores the values of variables (tf.train.Checkpoint's
/// write/read, for variables only). A variable is saved as its cross-replica
/// value (ON_READ copies aggregated), so a checkpoint does not depend on the
/// number of replicas: one saved from 4 replicas restores into 1 or 2.
///
/// File format (version 1; integers little-endian, tensor bytes in the host's
/// element layout, which is little-endian on every platform troupe builds for):
///
///     magic    8 bytes  "TROUPECK"
///     version  u32      1
///     count    u32      number of variables
///     count times, in name order:
///       name_len u32, name   name_len bytes (UTF-8)
///       dtype    u8         troupe::DType's value (stable: new dtypes are appended)
///       rank     u32, dims  rank × i64
///       nbytes   u64, bytes nbytes bytes (row-major elements)
///       crc      u32        CRC-32C of the bytes
///     trailer  u32      CRC-32C of every byte before it
///
/// save() writes "<path>.tmp", flushes it to disk and renames it to `path`,
/// so `path` always holds a complete checkpoint: the old one until the new
/// one is whole. restore() reads and checks the whole file before it changes
/// any variable, so a bad file changes nothing.
///
/// ShardedVariables (ParameterServerStrategy) are saved the same way, as
/// their full value (every shard read and joined) under their name, so the
/// file does not depend on the number of shards or parameter servers either:
/// one saved with 2 parameter servers and 2 shards restores into 3 servers
/// without a partitioner, or into 1; restore splits each value by the
/// variable's own layout. Beside the value, save writes the optimizer state
/// the servers keep for it (ShardedVariable::read_slots) under
/// "<name>/<slot>": "<name>/momentum" after apply_momentum, "<name>/m",
/// "<name>/v" and "<name>/iterations" after apply_adam, nothing before the
/// first optimizer step. "iterations" is an int64 scalar when every shard
/// counted the same number of Adam steps (always, unless a server missed
/// updates), else an int64 vector of one count per shard; restore gives
/// each shard its own count when the variable has as many shards, and every
/// shard the largest count otherwise. restore sets every slot to the
/// file's, and resets the slots the file lacks to never updated (zeros, 0),
/// so a resumed job continues with the saved optimizer state. A
/// ShardedVariable's slots in the file are never "extra" variables.
///
/// All are called in cross-replica context (not inside strategy.run) and,
/// under ParameterServerStrategy, on the coordinator between scheduled
/// functions (after coordinator.join()): inside a function given to
/// ClusterCoordinator::schedule they are Error(failed_precondition). A
/// parameter server lost during save fails it naming the server (the file
/// is left as it was); one lost during restore fails it likewise, with
/// the sharded variables partly restored (the local Variables unchanged):
/// restore again once the cluster is back. A Checkpoint may not mix
/// ShardedVariables with variables of a multi-worker strategy.
///
/// Under a multi-worker strategy (MultiWorkerMirroredStrategy with several
/// workers) save, restore and restore_if_exists are collective, like
/// strategy.run: every worker calls them, in the same order, with the same
/// variables. Only the chief (worker 0) touches the file, at its own `path`;
/// the other workers' `path` is not read or written (they need not see the
/// chief's file system). restore sends the chief's values of every variable
/// (weights, optimizer slots, step and epoch counters alike) to every worker
/// with the strategy's broadcast, so all workers resume from the same state
/// even when a worker cannot see the file or holds another one. When the
/// chief fails (no file, a bad file, a failed write), every worker throws:
/// the chief its own Error, the others an Error of the same code naming
/// their worker, the chief and the chief's message. Inside merge_call's
/// function they are Error(failed_precondition) (the replicas they need wait
/// there). A Checkpoint may not mix variables of a multi-worker strategy with
/// variables of a single-worker one: Error(invalid_argument).
class Checkpoint {
public:
  /// Saves each variable under its name(); two variables of one name are
  /// Error(invalid_argument) (use the map form to name them).
  explicit Checkpoint(const std::vector<Variable>& variables);
  /// The same for a braced list: Checkpoint({w, b}).
  Checkpoint(std::initializer_list<Variable> variables) : Checkpoint(std::vector<Variable>(variables)) {}
  /// Saves each variable under its key.
  explicit Checkpoint(std::map<std::string, Variable> variables);
  /// Variables and sharded variables, each under its name():
  /// Checkpoint({}, {w, b, epochs_done}) for a parameter-server job. Two of
  /// one name, a null ShardedVariable, or a name that is another's slot
  /// entry ("w/m" beside a sharded "w") are Error(invalid_argument).
  Checkpoint(const std::vector<Variable>& variables, const std::vector<ShardedVariable>& sharded);
  /// The same for a braced list (which the map form would take for two elements).
  Checkpoint(const std::vector<Variable>& variables, std::initializer_list<ShardedVariable> sharded)
    : Checkpoint(variables, std::vector<ShardedVariable>(sharded)) {}
  /// Sharded variables only: Checkpoint(sharded) or Checkpoint({w, b}).
  explicit Checkpoint(const std::vector<ShardedVariable>& sharded) : Checkpoint(std::vector<Variable>{}, sharded) {}
  Checkpoint(std::initializer_list<ShardedVariable> sharded) : Checkpoint(std::vector<ShardedVariable>(sharded)) {}
  /// Variables and sharded variables, each under its key (same checks).
  Checkpoint(std::map<std::string, Variable> variables, std::map<std::string, ShardedVariable> sharded);

  /// Writes every variable's value to `path` (see the class comment). An I/O
  /// failure is Error(not_found) for a missing directory, else
  /// Error(failed_precondition), naming the file and the system's reason;
  /// `path` is left as it was.
  void save(const std::string& path) const;

  /// Sets every variable to its value in `path`, on every replica's copy.
  /// Errors, all before any variable changes: Error(not_found) when the file
  /// does not exist; Error(data_loss) naming the file and what is wrong when
  /// it is not a troupe checkpoint, has another version, is truncated or
  /// fails a checksum; Error(invalid_argument) "checkpoint from a different
  /// model" when a variable is missing from the file, has another dtype or
  /// shape there (both named), a sharded variable's optimizer slot there has
  /// another dtype or shape than the variable, or the file holds variables
  /// this Checkpoint does not have (unless options.expect_partial).
  void restore(const std::string& path, const CheckpointRestoreOptions& options = {});

  /// restore() when `path` (the chief's, under a multi-worker strategy)
  /// exists: returns true on every worker after restoring, false on every
  /// worker, changing nothing, when it does not. Other errors as restore().
  [[nodiscard]] bool restore_if_exists(const std::string& path, const CheckpointRestoreOptions& options = {});

  /// The variables by the key they are saved under.
  [[nodiscard]] const std::map<std::string, Variable>& variables() const noexcept { return variables_; }
  /// The sharded variables by the key they are saved under.
  [[nodiscard]] const std::map<std::string, ShardedVariable>& sharded_variables() const noexcept { return sharded_; }

private:
  /// restore() and restore_if_exists() (`missing_ok`).
  bool restore_from(const std::string& path, const CheckpointRestoreOptions& options, bool missing_ok);
  /// The chief's `value` on every worker of `strategy` (its CrossDeviceOps broadcast).
  [[nodiscard]] static Tensor broadcast_from_chief(Strategy& strategy, const Tensor& value);

  /// Error(invalid_argument) for a null ShardedVariable or a key used twice.
  void check_keys() const;
  /// The local part of restore: sets every sharded variable, then every variable.
  void assign_values(std::map<std::string, Tensor> values) const;

  std::map<std::string, Variable> variables_;
  std::map<std::string, ShardedVariable> sharded_;
};

} // namespace troupe
