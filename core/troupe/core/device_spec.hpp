#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <troupe/core/fwd.hpp>

namespace troupe {

/// A (possibly partial) device specification, as tf.DeviceSpec.
///
/// Accepts every TensorFlow spelling: "CPU:0", "GPU:1", "/gpu:0", "/cpu:*",
/// "/device:GPU:0", "/job:worker/replica:0/task:1/device:GPU:0", "/job:ps" and
/// any partial combination. Known device types (CPU, GPU, TPU) are upper-cased,
/// so "/gpu:0" and "GPU:0" compare equal. A malformed string is an
/// Error(invalid_argument) that quotes it.
class DeviceSpec {
public:
  DeviceSpec() = default;

  /// Parses `text`; throws Error(invalid_argument) quoting it when malformed.
  [[nodiscard]] static DeviceSpec from_string(std::string_view text);

  /// Local device `type:index`, e.g. cpu(0).
  [[nodiscard]] static DeviceSpec local(std::string_view type, int index);

  // -- properties -------------------------------------------------------------

  [[nodiscard]] const std::optional<std::string>& job() const noexcept { return job_; }
  [[nodiscard]] std::optional<int> replica() const noexcept { return replica_; }
  [[nodiscard]] std::optional<int> task() const noexcept { return task_; }
  /// "CPU", "GPU", "TPU" (or a custom type as written).
  [[nodiscard]] const std::optional<std::string>& device_type() const noexcept { return device_type_; }
  /// Unset for "*" or when no index was given.
  [[nodiscard]] std::optional<int> device_index() const noexcept { return device_index_; }

  [[nodiscard]] bool is_cpu() const noexcept { return device_type_ == "CPU"; }
  [[nodiscard]] bool is_gpu() const noexcept { return device_type_ == "GPU"; }

  // -- conversions ------------------------------------------------------------

  /// Canonical form: "/job:worker/replica:0/task:1/device:GPU:0" (only the parts that are set).
  [[nodiscard]] std::string to_string() const;

  /// Short local form "GPU:0" (type and index only); "" when no type is set.
  [[nodiscard]] std::string short_name() const;

  /// This spec with the fields that `other` sets replaced (tf.DeviceSpec.make_merged_spec).
  [[nodiscard]] DeviceSpec make_merged_spec(const DeviceSpec& other) const;

  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;

private:
  std::optional<std::string> job_;
  std::optional<int> replica_;
  std::optional<int> task_;
  std::optional<std::string> device_type_;
  std::optional<int> device_index_;
};

std::ostream& operator<<(std::ostream& out, const DeviceSpec& spec);

} // namespace troupe
