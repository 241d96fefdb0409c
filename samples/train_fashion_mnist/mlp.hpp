#pragma once

#include <cstdint>
#include <vector>

#include <troupe/troupe.hpp>

namespace train {

/// What one replica's training step produced, after the all-reduce.
struct StepResult {
  std::vector<troupe::Tensor> gradients; ///< mean over every replica's examples, one per variable
  double loss_sum = 0;                   ///< summed over every replica's examples
  double correct = 0;
  double examples = 0;
  double compute_seconds = 0;            ///< this replica's forward and backward pass
  double communication_seconds = 0;      ///< this replica's wait in the all-reduce
};

/// The weights' names: dense_1/kernel, dense_1/bias, ... (Keras' names).
extern const char* const weight_names[6];

/// The MLP's weights as plain tensors (W1, b1, W2, b2, W3, b3): what Mlp
/// starts from for `seed` (Glorot-uniform kernels, zero biases).
[[nodiscard]] std::vector<troupe::Tensor> initial_weights(uint64_t seed);

/// Logits of `x` [b, 784] with `weights`.
[[nodiscard]] troupe::Tensor logits_of(const std::vector<troupe::Tensor>& weights, const troupe::Tensor& x);

/// Forward and backward pass with `weights` on the batch x [b, 784], y [b]:
/// the gradient sums of the summed loss (one per weight), then the loss sum,
/// the correct count and the example count as float32 scalars: what a
/// replica all-reduces, packed.
[[nodiscard]] std::vector<troupe::Tensor> local_sums(const std::vector<troupe::Tensor>& weights,
                                                     const troupe::Tensor& x, const troupe::Tensor& y);

/// The MLP 784-256-128-10 with ReLU: its weights are mirrored variables of
/// the strategy, created in its scope, Glorot-uniform weights and zero biases.
class Mlp {
public:
  Mlp(troupe::Strategy& strategy, uint64_t seed);

  /// W1, b1, W2, b2, W3, b3, in that order.
  [[nodiscard]] const std::vector<troupe::Variable>& variables() const noexcept { return variables_; }

  /// In replica context: forward and backward pass on this replica's batch
  /// (x [b, 784] float32, y [b] labels), then ONE packed all-reduce of the
  /// gradient sums, loss, accuracy and example count, so the mean gradient is
  /// weighted by examples (a short last batch counts for what it holds).
  [[nodiscard]] StepResult train_step(const troupe::Tensor& x, const troupe::Tensor& y) const;

  /// Logits for `x` with the primary copy of the weights (cross-replica context).
  [[nodiscard]] troupe::Tensor logits(const troupe::Tensor& x) const;

private:
  /// The calling replica's copy of every weight (the primary one in cross-replica context).
  [[nodiscard]] std::vector<troupe::Tensor> read_weights() const;

  std::vector<troupe::Variable> variables_;
};

} // namespace train
