#include "mlp.hpp"

#include <chrono>

namespace train {

using troupe::Tensor;

namespace {

constexpr int64_t layer_sizes[] = {784, 256, 128, 10};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

const char* const weight_names[] = {"dense_1/kernel", "dense_1/bias", "dense_2/kernel",
                                    "dense_2/bias",   "dense_3/kernel", "dense_3/bias"};

std::vector<Tensor> initial_weights(uint64_t seed) {
  troupe::RandomGenerator rng(seed);
  std::vector<Tensor> weights;
  for (int layer = 0; layer < 3; ++layer) {
    const int64_t in = layer_sizes[layer];
    const int64_t out = layer_sizes[layer + 1];
    weights.push_back(rng.glorot_uniform(in, out));
    weights.push_back(Tensor::zeros({out}, troupe::DType::float32));
  }
  return weights;
}

Tensor logits_of(const std::vector<Tensor>& weights, const Tensor& x) {
  Tensor h = x;
  for (std::size_t layer = 0; layer < 3; ++layer) {
    h = troupe::bias_add(troupe::matmul(h, weights[2 * layer]), weights[2 * layer + 1]);
    if (layer < 2)
      h = troupe::relu(h);
  }
  return h;
}

std::vector<Tensor> local_sums(const std::vector<Tensor>& weights, const Tensor& host_x, const Tensor& host_y) {
  const Tensor& w1 = weights[0], &b1 = weights[1], &w2 = weights[2], &b2 = weights[3], &w3 = weights[4],
                &b3 = weights[5];
  // The batch goes where the replica's weights are (its GPU, or a view on its CPU device).
  const auto& device = w1.device();
  const Tensor x = host_x.to(device);
  const Tensor y = host_y.to(device);
  // Forward.
  const Tensor z1 = troupe::bias_add(troupe::matmul(x, w1), b1);
  const Tensor h1 = troupe::relu(z1);
  const Tensor z2 = troupe::bias_add(troupe::matmul(h1, w2), b2);
  const Tensor h2 = troupe::relu(z2);
  const Tensor logits = troupe::bias_add(troupe::matmul(h2, w3), b3);
  const auto ce = troupe::sparse_softmax_cross_entropy_with_logits_and_grad(y, logits);
  // Backward: gradients of the summed loss (divided by the global example count below).
  const Tensor& dlogits = ce.backprop;
  const Tensor dz2 = troupe::relu_grad(troupe::matmul(dlogits, w3, false, true), z2);
  const Tensor dz1 = troupe::relu_grad(troupe::matmul(dz2, w2, false, true), z1);
  return {
    troupe::matmul(x, dz1, true, false),  troupe::reduce_sum(dz1, 0),
    troupe::matmul(h1, dz2, true, false), troupe::reduce_sum(dz2, 0),
    troupe::matmul(h2, dlogits, true, false), troupe::reduce_sum(dlogits, 0),
    troupe::reduce_sum(ce.loss),
    Tensor(static_cast<float>(troupe::accuracy_count(y, logits))).to(device),
    Tensor(static_cast<float>(x.shape()[0])).to(device),
  };
}

Mlp::Mlp(troupe::Strategy& strategy, uint64_t seed) {
  auto scope = strategy.scope();
  const auto weights = initial_weights(seed);
  for (std::size_t i = 0; i < weights.size(); ++i)
    variables_.push_back(strategy.create_variable(
      weights[i], {.name = weight_names[i], .aggregation = troupe::VariableAggregation::MEAN}));
}

std::vector<Tensor> Mlp::read_weights() const {
  std::vector<Tensor> weights;
  for (const auto& v : variables_)
    weights.push_back(v.read_value());
  return weights;
}

Tensor Mlp::logits(const Tensor& x) const {
  return logits_of(read_weights(), x);
}

StepResult Mlp::train_step(const Tensor& x, const Tensor& y) const {
  const auto start = std::chrono::steady_clock::now();
  const auto packed = local_sums(read_weights(), x, y);
  StepResult result;
  result.compute_seconds = seconds_since(start);
  const auto comm_start = std::chrono::steady_clock::now();
  auto summed = troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, packed);
  result.communication_seconds = seconds_since(comm_start);
  // The sums come back to the host (from a GPU, a copy).
  result.loss_sum = summed[6].to("CPU:0").item<double>();
  result.correct = summed[7].to("CPU:0").item<double>();
  result.examples = summed[8].to("CPU:0").item<double>();
  const double scale = result.examples > 0 ? 1.0 / result.examples : 0.0;
  for (int i = 0; i < 6; ++i)
    result.gradients.push_back(summed[static_cast<size_t>(i)] * static_cast<float>(scale));
  return result;
}

} // namespace train
