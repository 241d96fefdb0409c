#pragma once

#include <cstdint>
#include <vector>

#include <troupe/core/device_spec.hpp>
#include <troupe/strategies/shard_layout.hpp>

namespace troupe {

/// Which parameter server each new variable of a ParameterServerStrategy lives
/// on (TensorFlow's `_create_variable_round_robin`): variables go to ps tasks
/// 0, 1, ..., num_ps - 1, 0, ... in creation order, every shard of a
/// ShardedVariable counting as one variable, so a variable's shards start where
/// the previous variable stopped. With 2 ps tasks, a variable split in 3 goes
/// to tasks 0, 1, 0 and the next variable to task 1.
///
/// Not thread-safe: the strategy owns one and asks it while creating a
/// variable. A variable colocated with another one takes that one's task and
/// must not call next() (TensorFlow does not advance the counter for it).
class RoundRobinPlacement {
public:
  /// Throws Error(invalid_argument) when `num_ps` < 1 ("There must be at least one ps.").
  explicit RoundRobinPlacement(int num_ps);

  /// The ps task of the next variable (or shard); advances the counter.
  [[nodiscard]] int next();

  /// The ps tasks of a new variable's shards, in shard order (one entry for an
  /// unsplit variable); advances the counter by layout.num_shards().
  [[nodiscard]] std::vector<int> place(const ShardLayout& layout);

  [[nodiscard]] int num_ps() const noexcept { return num_ps_; }
  /// Variables (shards) placed so far, TensorFlow's `_variable_count`.
  [[nodiscard]] int64_t variable_count() const noexcept { return variable_count_; }

  /// "/job:ps/replica:0/task:<ps_task>/device:CPU:0", where TensorFlow puts a
  /// variable of that task.
  [[nodiscard]] static DeviceSpec device(int ps_task);

private:
  int num_ps_;
  int64_t variable_count_ = 0;
};

} // namespace troupe
