#include <troupe/collectives/local_all_gather.hpp>

#include <troupe/ops/tensor_ops.hpp>

namespace troupe::internal {

std::vector<Tensor> local_all_gather(const std::vector<std::vector<Tensor>>& inputs, int axis) {
  std::vector<Tensor> outputs;
  const size_t count = inputs.front().size();
  outputs.reserve(count);
  std::vector<Tensor> column(inputs.size());
  for (size_t i = 0; i < count; ++i) {
    for (size_t p = 0; p < inputs.size(); ++p)
      column[p] = inputs[p][i];
    outputs.push_back(concat(column, axis));
  }
  return outputs;
}

} // namespace troupe::internal
