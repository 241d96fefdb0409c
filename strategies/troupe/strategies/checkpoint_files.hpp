#pragma once

// How a checkpoint reaches the file system: written beside its path and
// renamed over it, read back whole (internal: not installed).

#include <string>
#include <utility>
#include <vector>

#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// Writes `entries` (see encode_checkpoint) to "<path>.tmp", flushes it to
/// disk and renames it to `path`, so `path` holds the old checkpoint until
/// the new one is whole. Errors name the file and the system's reason:
/// Error(not_found) for a missing directory, else Error(failed_precondition);
/// `path` is then left as it was and "<path>.tmp" removed.
void write_checkpoint_file(const std::string& path,
                           const std::vector<std::pair<std::string, Tensor>>& entries);

/// The bytes of the file `path`. Error(not_found) when it does not exist,
/// Error(invalid_argument) for a directory, Error(failed_precondition) when it
/// cannot be read.
[[nodiscard]] std::string read_checkpoint_file(const std::string& path);

} // namespace troupe::internal
