#include <troupe/strategies/static_shape_steps.hpp>

#include <algorithm>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/ops/tensor_ops.hpp>

namespace troupe::internal {

namespace {

int64_t rows_of(const Element& element) {
  return element.components().front().rank() == 0 ? 1 : element.components().front().shape()[0];
}

// `element` with zero rows appended to every component up to `rows`.
Element padded(const Element& element, int64_t rows) {
  std::vector<Tensor> parts;
  for (const auto& c : element.components()) {
    auto dims = c.shape().dims();
    dims[0] = rows - dims[0];
    parts.push_back(concat({c, Tensor::zeros(Shape(dims), c.dtype())}, 0));
  }
  return element.is_tuple() ? Element::tuple(std::move(parts)) : Element(std::move(parts.front()));
}

} // namespace

std::optional<std::vector<Element>> StaticShapeSteps::next_step() {
  auto step = inner_->next_step();
  if (!step)
    return step;
  ++step_;
  for (const auto& e : *step)
    for (const auto& c : e.components())
      if (c.rank() == 0)
        return step; // scalars have no batch to make static
  int64_t largest = 0;
  for (const auto& e : *step)
    largest = std::max(largest, rows_of(e));
  if (batch_ < 0)
    batch_ = largest;
  bool partial = false;
  std::string sizes;
  for (size_t r = 0; r < step->size(); ++r) {
    const auto rows = rows_of((*step)[r]);
    partial = partial || rows != batch_;
    sizes += (r == 0 ? "" : ", ") + std::to_string(rows);
  }
  if (!partial)
    return step;
  if (!pad_)
    fail(Errc::invalid_argument,
         "TPUStrategy: step " + std::to_string(step_) + " of the distributed dataset gives the replicas batches of "
           + sizes + " examples, but TPUs need static shapes (every replica's batch has " + std::to_string(batch_)
           + " examples, as in the first step): batch the dataset with drop_remainder=True "
             "(dataset.batch(global_batch_size, true)) and a global batch size that is a multiple of the "
             "number of replicas, or pass RunOptions{.experimental_enable_dynamic_batch_size = true} to "
             "experimental_distribute_dataset to pad the partial batch");
  std::string padding;
  for (size_t r = 0; r < step->size(); ++r) {
    auto& e = (*step)[r];
    const auto rows = rows_of(e);
    if (rows == batch_)
      continue;
    if (rows > batch_)
      fail(Errc::invalid_argument, "TPUStrategy: step " + std::to_string(step_) + " gives replica " + std::to_string(r)
                                     + " a batch of " + std::to_string(rows) + " examples, more than the first "
                                       "step's " + std::to_string(batch_) + ": batches cannot grow");
    padding += (padding.empty() ? "" : ", ") + ("replica " + std::to_string(r) + " rows " + std::to_string(rows) + ".."
                                               + std::to_string(batch_ - 1));
    e = padded(e, batch_);
  }
  TROUPE_LOG(warning, "tpu") << "step " << step_ << " is a partial batch (" << sizes << " examples per replica), "
                             << "padded with zeros to " << batch_ << " per replica: padding is " << padding;
  return step;
}

} // namespace troupe::internal
