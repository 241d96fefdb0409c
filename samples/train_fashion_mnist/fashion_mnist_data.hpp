#pragma once

#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace train {

/// One split of Fashion-MNIST.
struct Split {
  troupe::Tensor images; ///< [n, 784] float32 in [0, 1]
  troupe::Tensor labels; ///< [n] uint8
};

/// Reads `prefix` ("train", "t10k") from the IDX files under `dir`; a missing
/// file names the path and the Debian package that provides it.
[[nodiscard]] Split load_split(const std::string& dir, const std::string& prefix);

/// The fraction of `split` that `weights` (W1, b1, ..., b3) classify right.
[[nodiscard]] double accuracy_of(const std::vector<troupe::Tensor>& weights, const Split& split);

} // namespace train
