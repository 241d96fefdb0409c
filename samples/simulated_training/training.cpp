#include "training.hpp"

#include <cstdio>

namespace sample {

namespace {

troupe::Dataset examples() {
  std::vector<float> x;
  std::vector<float> y;
  for (int i = 0; i < 64; ++i) {
    const float x0 = static_cast<float>(i % 8) / 8.0f;
    const float x1 = static_cast<float>(i / 8) / 8.0f;
    x.insert(x.end(), {x0, x1, 1.0f});
    y.push_back(3.0f * x0 - 2.0f * x1 + 0.5f);
  }
  return troupe::Dataset::from_tensor_slices(troupe::Element::tuple(
           {troupe::Tensor::from_vector(x, {64, 3}), troupe::Tensor::from_vector(y, {64, 1})}))
    .batch(8);
}

} // namespace

Trained train(troupe::Runtime& rt) {
  using troupe::Tensor;
  troupe::MultiWorkerMirroredStrategy strategy(rt);
  troupe::Variable w;
  {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::zeros({3, 1}, troupe::DType::float32),
                                 {.name = "w", .aggregation = troupe::VariableAggregation::MEAN});
  }
  auto dist = strategy.experimental_distribute_dataset(examples());
  Trained out;
  out.task = rt.task_type() + ":" + std::to_string(rt.task_index());
  for (int epoch = 0; epoch < 6; ++epoch)
    for (const auto& batch : dist) {
      auto losses = strategy.run([&](const troupe::Element& b) {
        auto& ctx = troupe::get_replica_context();
        const auto& x = b[0];
        const auto& y = b[1];
        // Mean squared error and its gradient 2/n x^T (x w - y), summed
        // over the replicas' rows with the global batch as n.
        const auto err = troupe::matmul(x, w.read_value()) - y;
        const float n = 8.0f;
        auto grad = troupe::matmul(x, err, /*transpose_a=*/true) * (2.0f / n);
        auto loss = troupe::reduce_sum(err * err) * (1.0f / n);
        auto sums = ctx.all_reduce(troupe::ReduceOp::SUM, std::vector<Tensor>{grad, loss});
        w.assign_sub(sums[0] * 0.5f);
        return sums[1];
      }, batch);
      out.loss = strategy.experimental_local_results(losses).at(0).item<float>();
      ++out.steps;
    }
  out.w = w.read_value().to_vector<float>();
  return out;
}

std::string describe(const Trained& t) {
  std::string text = t.task + " steps " + std::to_string(t.steps) + " w [";
  char buf[32];
  for (size_t i = 0; i < t.w.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.9g", i ? ", " : "", t.w[i]);
    text += buf;
  }
  std::snprintf(buf, sizeof buf, "] loss %.9g", t.loss);
  return text + buf;
}

} // namespace sample
