#pragma once

// Reading a dataset of int64 tensors back as plain numbers, for comparisons.

#include <cstdint>
#include <vector>

#include <troupe/datasets/dataset.hpp>

namespace troupe::test {

/// Every int64 of every element, in order, each element's tensor flattened
/// (so batched and unbatched pipelines compare alike).
inline std::vector<int64_t> int64_values_of(const Dataset& dataset) {
  std::vector<int64_t> out;
  for (const auto& e : dataset)
    for (auto v : e.tensor().to_vector<int64_t>())
      out.push_back(v);
  return out;
}

} // namespace troupe::test
