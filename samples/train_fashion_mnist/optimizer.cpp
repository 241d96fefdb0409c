#include "optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace train {

using troupe::Tensor;

namespace {

troupe::Variable slot(troupe::Strategy& strategy, const troupe::Variable& of, const std::string& suffix) {
  return strategy.create_variable(Tensor::zeros(of.shape(), of.dtype()),
                                  {.name = of.name() + "/" + suffix, .trainable = false});
}

} // namespace

Optimizer::Optimizer(troupe::Strategy& strategy, const std::vector<troupe::Variable>& variables,
                     const std::string& kind, double learning_rate, double momentum, int64_t total_steps)
  : strategy_(strategy), variables_(variables), kind_(kind), learning_rate_(learning_rate),
    momentum_(momentum), total_steps_(total_steps), step_([&] {
      auto scope = strategy.scope();
      return strategy.create_variable(Tensor(int64_t{0}), {.name = "optimizer/iterations", .trainable = false});
    }()) {
  auto scope = strategy.scope();
  for (const auto& v : variables_) {
    first_.push_back(slot(strategy, v, kind_ == "adam" ? "m" : "momentum"));
    if (kind_ == "adam")
      second_.push_back(slot(strategy, v, "v"));
  }
}

double cosine_decay(double learning_rate, int64_t step, int64_t total_steps) {
  if (total_steps <= 0)
    return learning_rate;
  constexpr double alpha = 0.05;
  // portable_cos, not std::cos: TROUPE_KERNELS=portable runs give the same
  // weights on every x86-64 CPU only if the schedule does too.
  const double progress = std::min(1.0, static_cast<double>(step - 1) / static_cast<double>(total_steps));
  return learning_rate * (alpha + (1 - alpha) * 0.5 * (1 + troupe::portable_cos(std::numbers::pi * progress)));
}

double Optimizer::learning_rate_at(int64_t step) const {
  return cosine_decay(learning_rate_, step, total_steps_);
}

void Optimizer::apply(const std::vector<Tensor>& gradients) {
  auto& extended = strategy_.extended();
  const int64_t step = step_.read_value().to("CPU:0").item<int64_t>() + 1;
  const double learning_rate = learning_rate_at(step);
  for (size_t i = 0; i < variables_.size(); ++i) {
    Tensor var = variables_[i].read_value();
    Tensor first = first_[i].read_value();
    if (kind_ == "adam") {
      Tensor second = second_[i].read_value();
      troupe::apply_adam(var, first, second, gradients[i], step, {.learning_rate = learning_rate});
      extended.update(second_[i], [&](const Tensor&) { return second; });
    } else {
      troupe::apply_momentum(var, first, gradients[i],
                             {.learning_rate = learning_rate, .momentum = momentum_});
    }
    // In replica context update() changes only this replica's copy; every
    // replica computed the same values from the same mean gradient.
    extended.update(first_[i], [&](const Tensor&) { return first; });
    extended.update(variables_[i], [&](const Tensor&) { return var; });
  }
  extended.update(step_, [&](const Tensor&) { return Tensor(step); });
}

std::vector<troupe::Variable> Optimizer::state() const {
  std::vector<troupe::Variable> out = first_;
  out.insert(out.end(), second_.begin(), second_.end());
  out.push_back(step_);
  return out;
}

} // namespace train
