#include "fashion_mnist_data.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "mlp.hpp"

namespace train {

Split load_split(const std::string& dir, const std::string& prefix) {
  const std::string images_path = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string labels_path = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  for (const auto& path : {images_path, labels_path})
    if (!std::filesystem::exists(path))
      throw std::runtime_error("Fashion-MNIST not found: " + path +
                               " is missing. Install Debian's dataset-fashion-mnist package "
                               "(apt-get install dataset-fashion-mnist), or pass --data-dir DIR");
  auto examples = troupe::read_idx_examples(images_path, labels_path); // counts must match
  const int64_t n = examples.images.shape()[0];
  return {(examples.images.cast(troupe::DType::float32) / 255.0f).reshape({n, 784}), std::move(examples.labels)};
}

double accuracy_of(const std::vector<troupe::Tensor>& weights, const Split& split) {
  // Chunks keep the activations small.
  int64_t correct = 0;
  const int64_t n = split.images.shape()[0];
  for (int64_t begin = 0; begin < n; begin += 2000) {
    const int64_t end = std::min(n, begin + 2000);
    correct += troupe::accuracy_count(split.labels.slice(begin, end), logits_of(weights, split.images.slice(begin, end)));
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

} // namespace train
