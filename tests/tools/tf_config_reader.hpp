#pragma once

#include <string>
#include <utility>
#include <vector>

namespace troupe::testing {

/// TF_CONFIG as read back by a test: the cluster's jobs in their JSON order
/// and the task.
struct TfConfig {
  std::vector<std::pair<std::string, std::vector<std::string>>> cluster;
  std::string type;
  int index = -1;
  std::vector<std::string> keys; ///< the top-level keys, in order

  /// The addresses of `job`; empty when the cluster has no such job.
  [[nodiscard]] std::vector<std::string> job(const std::string& name) const;
};

/// Parses TF_CONFIG's JSON: an object with "cluster" (object of string
/// arrays) and "task" (object with "type" and "index"). Throws on anything
/// else: nlohmann's exceptions (malformed JSON, with its offset, or a value of
/// the wrong type) or std::invalid_argument (an unexpected key).
[[nodiscard]] TfConfig parse_tf_config(const std::string& json);

/// The port of "host:port".
[[nodiscard]] int port_of(const std::string& address);

} // namespace troupe::testing
