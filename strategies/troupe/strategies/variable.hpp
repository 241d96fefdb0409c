#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/fwd.hpp>

namespace troupe {

/// When the copies of a distributed variable are kept in sync (tf.VariableSynchronization).
enum class VariableSynchronization {
  /// The strategy picks: ON_WRITE for every troupe strategy.
  AUTO,
  /// One copy, never synchronised. Only strategies with one replica accept it
  /// (TensorFlow refuses it under every tf.distribute strategy).
  NONE,
  /// Every write in replica context is aggregated across replicas, so the
  /// copies stay equal (TensorFlow's MirroredVariable).
  ON_WRITE,
  /// Each replica writes its own copy; reading in cross-replica context
  /// aggregates the copies (TensorFlow's SyncOnReadVariable: metrics, batch-norm statistics).
  ON_READ,
};

/// How the replicas' values are combined (tf.VariableAggregation).
enum class VariableAggregation {
  /// No aggregation: an ON_WRITE variable may be updated in replica context
  /// only when every replica passes the same value.
  NONE,
  SUM,
  MEAN,
  /// Replica 0's value is used.
  ONLY_FIRST_REPLICA,
};

/// TensorFlow's spelling: "ON_WRITE", "ONLY_FIRST_REPLICA".
[[nodiscard]] std::string_view name(VariableSynchronization synchronization) noexcept;
[[nodiscard]] std::string_view name(VariableAggregation aggregation) noexcept;

/// How Strategy::create_variable makes a variable (tf.Variable's arguments).
struct VariableOptions {
  /// Empty means "Variable". Names are made unique per strategy as TensorFlow
  /// does: a second "w" becomes "w_1", then "w_2".
  std::string name{};
  /// Unset means TensorFlow's default: true unless synchronization is ON_READ.
  /// An ON_READ variable cannot be trainable (Error(invalid_argument), TensorFlow's text).
  std::optional<bool> trainable{};
  VariableSynchronization synchronization = VariableSynchronization::AUTO;
  VariableAggregation aggregation = VariableAggregation::NONE;
};

namespace detail {
struct VariableState;
} // namespace detail

namespace internal {
struct VariableAccess;
} // namespace internal

/// A variable of a strategy (tf.Variable under tf.distribute): one copy per
/// local replica, kept in sync as its synchronization says. Create it with
/// Strategy::create_variable inside strategy.scope().
///
/// A Variable is a cheap handle: copies share one variable. Its copies start
/// as handles to one buffer (on CPU devices) and each write replaces a copy
/// with a new tensor, so a Tensor returned by read_value() or value() is a
/// snapshot that later writes never change.
///
/// Where a method runs decides what it does, as in TensorFlow:
/// - replica context (inside strategy.run of its strategy): replica i reads
///   and writes copy i; an ON_WRITE write first aggregates the replicas'
///   values (a collective: every replica must make it, in the same order);
/// - cross-replica context (strategy.scope(), merge_call's function, or no
///   scope at all, which enters the variable's strategy as TensorFlow does):
///   reads and writes concern the variable as a whole;
/// - another strategy's scope or replica function: Error(failed_precondition),
///   "Mixing different tf.distribute.Strategy objects".
///
/// Copy i is written only by replica i in replica context, and by the caller
/// in cross-replica context while no replica runs, so no lock is needed. A
/// Variable must not outlive its strategy.
class Variable {
public:
  /// An empty handle: valid() is false and every other method throws Error(invalid_argument).
  Variable() = default;

  // -- properties -----------------------------------------------------------------

  [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }
  /// The unique name given at creation ("w", "Variable_1").
  [[nodiscard]] const std::string& name() const;
  [[nodiscard]] DType dtype() const;
  [[nodiscard]] const Shape& shape() const;
  /// ON_WRITE, ON_READ or NONE (AUTO was resolved at creation).
  [[nodiscard]] VariableSynchronization synchronization() const;
  [[nodiscard]] VariableAggregation aggregation() const;
  [[nodiscard]] bool trainable() const;
  /// The strategy that created it (TensorFlow's distribute_strategy).
  [[nodiscard]] Strategy& distribute_strategy() const;
  /// The devices of its copies, in replica order ("CPU:0" style as ReplicaContext::devices).
  [[nodiscard]] std::vector<std::string> devices() const;
  /// Number of copies (the strategy's local replicas).
  [[nodiscard]] int num_copies() const;

  // -- reading --------------------------------------------------------------------

  /// In replica context: this replica's copy. In cross-replica context:
  /// ON_WRITE and NONE: the primary copy (replica 0's; they are all equal);
  /// ON_READ: the copies aggregated per aggregation() (SUM, MEAN, or replica
  /// 0's copy for ONLY_FIRST_REPLICA); an ON_READ variable with aggregation
  /// NONE cannot be read there (Error(invalid_argument), as TensorFlow).
  [[nodiscard]] Tensor read_value() const;

  /// Copy `replica` (a local replica index) as it is now, in any context;
  /// for tests and inspection. Error(out_of_range) for a bad index.
  [[nodiscard]] Tensor value(int replica) const;

  // -- writing --------------------------------------------------------------------

  /// Sets the variable to `value`, adds it, or subtracts it. `value` must have
  /// the variable's dtype and shape (Error(dtype_mismatch / shape_mismatch)
  /// naming the variable and both). Returns *this.
  ///
  /// Replica context, ON_WRITE: the replicas' values are aggregated first and
  /// every replica updates its copy with the result, so the copies stay equal:
  /// SUM and MEAN through one all_reduce (MEAN needs a floating dtype, as in
  /// TensorFlow); ONLY_FIRST_REPLICA and NONE through one merge_call that
  /// takes replica 0's value, where NONE requires every replica to pass the
  /// same value (else Error(invalid_argument) with TensorFlow's "You must
  /// specify an aggregation method" text).
  /// Replica context, ON_READ: only this replica's copy changes (no collective).
  /// Cross-replica context: ON_WRITE and NONE: every copy is set to the
  /// result. ON_READ: the copies change so that read_value() afterwards
  /// returns the assigned value, or the old one plus or minus `value`:
  /// MEAN, ONLY_FIRST_REPLICA and NONE update every copy; SUM splits an
  /// assigned value over the copies (floating dtypes: value / replicas each,
  /// as TensorFlow; integers: exactly, the remainder on replica 0) and applies
  /// assign_add / assign_sub to replica 0's copy only (TensorFlow refuses those).
  Variable& assign(const Tensor& value);
  Variable& assign_add(const Tensor& value);
  Variable& assign_sub(const Tensor& value);

private:
  friend struct internal::VariableAccess;
  explicit Variable(std::shared_ptr<detail::VariableState> state) noexcept : state_(std::move(state)) {}

  std::shared_ptr<detail::VariableState> state_;
};

/// One copy: `<Variable 'w:0' shape=(2,) dtype=float32, value=[1. 2.]>`.
/// Several copies print as TensorFlow prints a MirroredVariable or a
/// SyncOnReadVariable, copy i > 0 named 'w/replica_i:0' as TensorFlow names it,
/// with troupe's `value=` instead of numpy's repr (as Tensor prints):
/// MirroredVariable:{
///   0: <Variable 'w:0' shape=(2,) dtype=float32, value=[1. 2.]>,
///   1: <Variable 'w/replica_1:0' shape=(2,) dtype=float32, value=[1. 2.]>
/// }
std::ostream& operator<<(std::ostream& out, const Variable& variable);

} // namespace troupe
