#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/net/fwd.hpp>

namespace troupe {

/// The jobs of a cluster and the addresses of their tasks, as tf.train.ClusterSpec.
///
/// Maps a job name to the "host:port" of each of its tasks, in task order:
/// {"chief": [...], "worker": [...], "ps": [...], "evaluator": [...]}. Job
/// names are free, but must spell a TensorFlow device name part
/// ([A-Za-z][A-Za-z0-9_]*, as in "/job:worker"). The constructor checks that
/// every job has tasks, every address is a valid "host:port" (see
/// parse_task_address), no address appears twice, and "chief" and "evaluator"
/// have at most one task each (tf.distribute's rule); a violation is
/// Error(invalid_argument) that quotes the offending part.
class ClusterSpec {
public:
  using JobMap = std::map<std::string, std::vector<std::string>>;

  /// An empty cluster (a single process).
  ClusterSpec() = default;

  /// Validates `jobs` (see the class comment).
  explicit ClusterSpec(JobMap jobs);

  // -- properties --------------------------------------------------------------

  /// Job names, sorted.
  [[nodiscard]] std::vector<std::string> jobs() const;

  /// Number of tasks of `job`; 0 when there is no such job.
  [[nodiscard]] int num_tasks(std::string_view job) const;

  /// Addresses of the tasks of `job`; Error(invalid_argument) naming `job` and
  /// the existing jobs when there is no such job.
  [[nodiscard]] const std::vector<std::string>& job_tasks(std::string_view job) const;

  /// Address of task `task_id` of `job`; Error(invalid_argument) when the job
  /// does not exist or `task_id` is outside [0, num_tasks(job)).
  [[nodiscard]] const std::string& task_address(std::string_view job, int task_id) const;

  /// Total number of tasks over all jobs.
  [[nodiscard]] int num_tasks_total() const noexcept;

  /// True when the cluster has no jobs.
  [[nodiscard]] bool empty() const noexcept { return jobs_.empty(); }

  /// The job map (ClusterSpec.as_dict()).
  [[nodiscard]] const JobMap& as_dict() const noexcept { return jobs_; }

  // -- conversions -------------------------------------------------------------

  /// Canonical JSON with sorted jobs, as Python's json.dumps(spec.as_dict(),
  /// sort_keys=True): {"ps": ["h:1"], "worker": ["h:2", "h:3"]}; "{}" when empty.
  [[nodiscard]] std::string to_json() const;

  /// FNV-1a 64 of to_json(): equal specs have equal fingerprints, so tasks can
  /// check cheaply that they were started with the same cluster.
  [[nodiscard]] uint64_t fingerprint() const noexcept;

  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;

private:
  JobMap jobs_;
};

/// A task address split into host and port.
struct TaskAddress {
  /// Host name, IPv4 address or IPv6 address (without its brackets).
  std::string host;
  uint16_t port = 0;

  friend bool operator==(const TaskAddress&, const TaskAddress&) = default;
};

/// Splits "host:port"; the host may be a name ("worker-0.svc"), an IPv4
/// address or a bracketed IPv6 address ("[::1]:2222"), the port is 1..65535.
/// Anything else is Error(invalid_argument) that quotes `address`.
[[nodiscard]] TaskAddress parse_task_address(std::string_view address);

} // namespace troupe
