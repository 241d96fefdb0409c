#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace train {

/// The learning rate of step `step` (1, 2, ...) of `total_steps` under a
/// cosine decay from `learning_rate` to 5% of it
/// (keras.optimizers.schedules.CosineDecay, alpha 0.05); total_steps 0 keeps it constant.
[[nodiscard]] double cosine_decay(double learning_rate, int64_t step, int64_t total_steps);

/// SGD with momentum or Adam over mirrored variables (Keras' update rules).
///
/// Its slots (momentum, or Adam's m and v) and the step count are variables
/// of the same strategy, so a checkpoint holds them too. apply() runs in
/// replica context after the gradient all-reduce: every replica applies the
/// same mean gradient to its own copies, so the copies stay equal without a
/// second collective.
class Optimizer {
public:
  /// The learning rate follows a cosine decay from `learning_rate` to 5% of it
  /// over `total_steps` (keras.optimizers.schedules.CosineDecay, alpha 0.05);
  /// total_steps 0 keeps it constant.
  Optimizer(troupe::Strategy& strategy, const std::vector<troupe::Variable>& variables,
            const std::string& kind, double learning_rate, double momentum, int64_t total_steps);

  void apply(const std::vector<troupe::Tensor>& gradients);

  /// The slot and step variables (for checkpoints).
  [[nodiscard]] std::vector<troupe::Variable> state() const;

private:
  [[nodiscard]] double learning_rate_at(int64_t step) const;

  troupe::Strategy& strategy_;
  std::vector<troupe::Variable> variables_;
  std::string kind_;
  double learning_rate_;
  double momentum_;
  int64_t total_steps_;
  std::vector<troupe::Variable> first_;  ///< momentum, or Adam's m
  std::vector<troupe::Variable> second_; ///< Adam's v
  troupe::Variable step_;
};

} // namespace train
