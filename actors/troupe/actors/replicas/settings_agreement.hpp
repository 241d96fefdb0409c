#pragma once

// Comparing named settings across workers (internal: not installed):
// MultiWorkerMirroredStrategy's agreement and the parameter-server cluster's.

#include <string>
#include <utility>
#include <vector>

namespace troupe::internal {

/// Named settings whose values every worker must share: (name, value as text).
using Settings = std::vector<std::pair<std::string, std::string>>;

/// One worker's settings, as it sent them.
struct WorkerSettings {
  std::string task; ///< "worker:1"
  Settings settings;
};

/// The bytes a worker sends: the count (u32), then per setting its name and
/// its value, each as length (u32) and bytes.
[[nodiscard]] std::string encode_settings(const Settings& settings);

/// What encode_settings made on task `from`; Error(data_loss) naming it when
/// the bytes are not exactly that (checked before anything is allocated).
[[nodiscard]] Settings decode_settings(const std::string& bytes, const std::string& from);

/// Throws Error(failed_precondition) when a worker's value of some setting
/// differs from the first worker's (the chief's): "<what>: the <who> differ:
/// <name> is <v0> on worker:0, but <v1> on worker:1; ... <fix>", naming every
/// differing setting, worker and value. Every worker gets the same lists, so
/// every worker throws the same text. `who`: "workers", or "tasks" where
/// parameter servers take part.
void require_same_settings(const std::vector<WorkerSettings>& workers, const std::string& what,
                           const std::string& fix, const std::string& who = "workers");

} // namespace troupe::internal
