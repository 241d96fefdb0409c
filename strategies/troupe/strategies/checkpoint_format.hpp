#pragma once

// The bytes of a checkpoint file, in the format checkpoint.hpp documents, and
// how checkpoint errors name files and variables (internal: not installed).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// `path` in double quotes, as checkpoint errors name a file.
[[nodiscard]] std::string quote(const std::string& path);

/// "float32 (2, 3)": how checkpoint errors name a variable's dtype and shape.
[[nodiscard]] std::string describe(DType dtype, const Shape& shape);

/// One variable of a parsed checkpoint file, in host memory.
struct CheckpointEntry {
  DType dtype;
  Shape shape;
  Tensor value;
};

/// Writes `entries` in file order (Checkpoint passes them in name order) to
/// `fd`, GPU tensors copied to the host first. Neither syncs nor closes `fd`.
/// A failed write is Error(failed_precondition) naming `path`.
void encode_checkpoint(int fd, const std::string& path,
                       const std::vector<std::pair<std::string, Tensor>>& entries);

/// The variables of a whole checkpoint file read from `path`, by name, after
/// checking every length and checksum; anything wrong is Error(data_loss)
/// naming `path` and what is wrong.
[[nodiscard]] std::map<std::string, CheckpointEntry> parse_checkpoint(const std::string& data,
                                                                      const std::string& path);

} // namespace troupe::internal
