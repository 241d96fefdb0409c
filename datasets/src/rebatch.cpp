#include <troupe/datasets/rebatch.hpp>

#include <string>

#include <troupe/core/errors.hpp>

namespace troupe {

std::vector<Element> split_global_batch(const Element& batch, int num_replicas) {
  if (num_replicas < 1)
    fail(Errc::invalid_argument, "cannot split a batch over " + std::to_string(num_replicas) + " replicas");
  const auto& parts = batch.components();
  if (parts.empty())
    fail(Errc::invalid_argument, "cannot split an empty element over replicas");
  for (size_t c = 0; c < parts.size(); ++c) {
    if (parts[c].rank() == 0)
      fail(Errc::invalid_argument,
           "experimental_distribute_dataset: component " + std::to_string(c)
             + " of the dataset's elements is a scalar, so it has no batch to split over "
             + std::to_string(num_replicas) + " replicas; batch the dataset by the global batch size "
             "first (dataset.batch(global_batch_size))");
    if (parts[c].shape()[0] != parts[0].shape()[0])
      fail(Errc::invalid_argument, "experimental_distribute_dataset: components 0 and " + std::to_string(c)
                                     + " of a batch have " + std::to_string(parts[0].shape()[0]) + " and "
                                     + std::to_string(parts[c].shape()[0])
                                     + " rows; every component must be batched together");
  }
  const int64_t rows = parts[0].shape()[0];
  const int64_t per_replica = (rows + num_replicas - 1) / num_replicas;
  std::vector<Element> out;
  out.reserve(static_cast<size_t>(num_replicas));
  for (int r = 0; r < num_replicas; ++r) {
    const int64_t begin = std::min(rows, r * per_replica);
    const int64_t end = std::min(rows, begin + per_replica);
    std::vector<Tensor> pieces;
    pieces.reserve(parts.size());
    for (const auto& p : parts)
      pieces.push_back(p.slice(begin, end));
    out.push_back(batch.is_tuple() ? Element::tuple(std::move(pieces)) : Element(std::move(pieces.front())));
  }
  return out;
}

} // namespace troupe
