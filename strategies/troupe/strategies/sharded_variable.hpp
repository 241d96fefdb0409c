#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <troupe/core/device_spec.hpp>
#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/ops/nn_ops.hpp>

namespace troupe {

namespace internal {
struct ShardedVariableState;
} // namespace internal

/// A variable of ParameterServerStrategy split along axis 0 into shards that
/// live on parameter servers (tf.distribute.experimental.partitioners and
/// TensorFlow's ShardedVariable). Reads and updates go to every shard at once,
/// one request per shard, and wait for all of them.
///
/// Created by ParameterServerStrategy::create_variable. Inside a function
/// scheduled by a ClusterCoordinator, updates are staged under the function's
/// attempt and take effect when the coordinator commits it (exactly once);
/// reads there see the function's own updates. Elsewhere they are immediate.
///
/// Blocking calls are made from one application thread at a time. Each fails
/// with Error naming the variable and the parameter server when a server
/// refuses the request or has exited, and with Error(timeout) after
/// TROUPE_COLLECTIVE_TIMEOUT_SECONDS; none of them hangs. A ShardedVariable is
/// a handle: copies share the same shards.
class ShardedVariable {
public:
  /// One shard: its shape, where it lives and its current value.
  class Shard {
  public:
    [[nodiscard]] int64_t index() const noexcept { return index_; }
    /// The shard's shape: the variable's, with its own rows along axis 0.
    [[nodiscard]] Shape shape() const;
    /// "/job:ps/replica:0/task:N/device:CPU:0", the parameter server holding it.
    [[nodiscard]] DeviceSpec device() const;
    /// The shard's committed value (one request to its server).
    [[nodiscard]] Tensor read_value() const;

  private:
    friend class ShardedVariable;
    Shard(std::shared_ptr<internal::ShardedVariableState> state, int64_t index)
      : state_(std::move(state)), index_(index) {}

    std::shared_ptr<internal::ShardedVariableState> state_;
    int64_t index_;
  };

  /// An empty handle (assign it a created variable); every other call on it
  /// is Error(failed_precondition).
  ShardedVariable() = default;
  explicit ShardedVariable(std::shared_ptr<internal::ShardedVariableState> state) noexcept;

  // -- properties -----------------------------------------------------------------

  [[nodiscard]] const std::string& name() const;
  /// The full variable's shape (every shard's rows together).
  [[nodiscard]] const Shape& shape() const;
  [[nodiscard]] DType dtype() const;
  [[nodiscard]] int64_t num_shards() const;
  /// Shard `i`, 0 <= i < num_shards() (Error(out_of_range) otherwise).
  [[nodiscard]] Shard shard(int64_t i) const;

  // -- reads ----------------------------------------------------------------------

  /// The full value: every shard read at once, joined along axis 0.
  [[nodiscard]] Tensor read_value() const;

  /// Rows `ids` of the variable in the ids' order (tf.nn.embedding_lookup on a
  /// ShardedVariable): `ids` is an int32 or int64 vector, repeats allowed; one
  /// gather request per shard the ids touch, all at once. An id outside
  /// [0, shape[0]) is Error(out_of_range) naming the id and the row count.
  [[nodiscard]] Tensor embedding_lookup(const Tensor& ids) const;

  // -- immediate updates ----------------------------------------------------------

  /// Sets the variable to `value`, which must have its shape and dtype (else
  /// Error naming the variable and both shapes, before anything is sent).
  void assign(const Tensor& value);
  /// Adds `delta` (same checks as assign).
  void assign_add(const Tensor& delta);
  /// Subtracts `delta` (same checks as assign).
  void assign_sub(const Tensor& delta);

  // -- optimizer steps on the parameter servers -------------------------------------

  /// One Keras SGD-with-momentum step (troupe::apply_momentum) applied by each
  /// shard's server to its rows of `gradient`: the gradient travels, not the
  /// new value, so concurrent workers' steps all count. The accumulator lives
  /// beside the shard (created as zeros at the first step). Nesterov is
  /// Error(not_supported).
  void apply_momentum(const Tensor& gradient, const MomentumOptions& options);
  /// One Keras Adam step (troupe::apply_adam) on the servers: m, v and the
  /// step count live beside each shard, which counts its own steps.
  void apply_adam(const Tensor& gradient, const AdamOptions& options);

  /// The optimizer state the servers keep beside the shards, by Keras' slot
  /// names, each joined across shards as read_value: {} before the first
  /// optimizer step, {"momentum"} after apply_momentum, {"m", "v",
  /// "iterations"} after apply_adam. "iterations" is an int64 vector of one
  /// count per shard (each shard counts the Adam steps applied to it). A
  /// shard whose slot does not exist reads as never updated (zeros, 0).
  /// Checkpoints save these; on the coordinator only (inside a scheduled
  /// function Error(failed_precondition)).
  [[nodiscard]] std::map<std::string, Tensor> read_slots() const;
  /// Sets the optimizer state (a checkpoint's restore): `slots` named as
  /// read_slots names them ("momentum" alone, or any of "m", "v",
  /// "iterations"), "momentum", "m" and "v" of the variable's shape and dtype
  /// (split by this variable's layout), "iterations" an int64 scalar for
  /// every shard or a vector of one count per shard, >= 0. Slots the servers
  /// hold that `slots` does not name go back to never updated (zeros, 0), so
  /// the next step continues from exactly `slots`. Bad names, shapes or
  /// counts are Error before anything is sent. Call it between scheduled
  /// functions, on the coordinator (Error(failed_precondition) inside one).
  void assign_slots(const std::map<std::string, Tensor>& slots);

  /// The state the strategy's internals share (null never).
  [[nodiscard]] const std::shared_ptr<internal::ShardedVariableState>& state() const noexcept { return state_; }

private:
  [[nodiscard]] const internal::ShardedVariableState& checked() const;

  std::shared_ptr<internal::ShardedVariableState> state_;
};

// -- several variables in one round trip ----------------------------------------------
// A training step reads all its variables and updates all of them (Keras'
// optimizer.apply_gradients): these send every shard's request of every
// variable at once and wait once, instead of one round trip per variable.
// Inside a scheduled function they read and stage under the function's
// attempt exactly as the methods do (reads see the function's own updates;
// updates take effect when the coordinator commits it). Errors are the
// methods' errors, naming the variable, shard and server.

/// Every variable's full value, in the variables' order (as read_value on
/// each). An empty handle among them is Error(failed_precondition) naming its
/// position, before anything is sent.
[[nodiscard]] std::vector<Tensor> read_values(const std::vector<ShardedVariable>& variables);

/// ShardedVariable::apply_adam of gradients[k] on variables[k], for every k
/// at once (inside a scheduled function: one staging of all the shards).
/// Every variable and gradient is checked first: a count mismatch, an empty
/// handle, or a gradient of another shape or dtype is Error naming the
/// variable, and then nothing is sent.
void apply_adam(const std::vector<ShardedVariable>& variables, const std::vector<Tensor>& gradients,
                const AdamOptions& options);
/// ShardedVariable::apply_momentum on every variable at once, checked as
/// apply_adam (nesterov is Error(not_supported)).
void apply_momentum(const std::vector<ShardedVariable>& variables, const std::vector<Tensor>& gradients,
                    const MomentumOptions& options);

} // namespace troupe
