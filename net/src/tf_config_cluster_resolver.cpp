#include <troupe/net/tf_config_cluster_resolver.hpp>

#include <charconv>
#include <cstdlib>

#include <troupe/core/errors.hpp>
#include <troupe/core/json.hpp>

namespace troupe {

namespace {

[[noreturn]] void reject(const std::string& why) {
  fail(Errc::invalid_argument, "invalid TF_CONFIG: " + why);
}

/// `value` for a message: its kind and its JSON text, e.g. `number 3`.
std::string describe(const JsonValue& value) {
  return std::string(value.kind_name()) + " " + value.to_json();
}

/// The optional string member `key` of TF_CONFIG's top level.
std::optional<std::string> string_member(const JsonValue& config, std::string_view key) {
  const auto* value = config.find(key);
  if (value == nullptr)
    return std::nullopt;
  if (!value->is_string())
    reject("\"" + std::string(key) + "\" must be a string, got " + describe(*value));
  return value->as_string();
}

ClusterSpec parse_cluster(const JsonValue& cluster) {
  if (!cluster.is_object())
    reject("\"cluster\" must be an object mapping job names to lists of \"host:port\" "
           "strings, e.g. {\"worker\": [\"host1:2222\", \"host2:2222\"]}; got "
           + describe(cluster));
  ClusterSpec::JobMap jobs;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const auto& name = cluster.keys()[i];
    const auto& tasks = cluster.items()[i];
    const auto where = "job \"" + name + "\" in \"cluster\"";
    if (tasks.is_object())
      reject(where + " is " + tasks.to_json()
             + ", TensorFlow's sparse {index: address} form, which troupe does not support: "
               "list every task in order, e.g. [\"host1:2222\", \"host2:2222\"]");
    if (!tasks.is_array())
      reject(where + " must be a list of \"host:port\" strings, got " + describe(tasks));
    std::vector<std::string> addresses;
    for (size_t t = 0; t < tasks.size(); ++t) {
      const auto& address = tasks.items()[t];
      if (!address.is_string())
        reject(where + " must be a list of \"host:port\" strings, but task " + std::to_string(t)
               + " is " + describe(address) + " in " + tasks.to_json());
      addresses.push_back(address.as_string());
    }
    jobs.emplace(name, std::move(addresses));
  }
  try {
    return ClusterSpec(std::move(jobs));
  } catch (const Error& e) {
    reject(e.what());
  }
}

/// "index" as TensorFlow's int(): an integer, or a string of one.
int parse_index(const JsonValue& index) {
  std::optional<int64_t> value;
  if (index.is_number()) {
    value = index.as_integer();
  } else if (index.is_string()) {
    const auto& text = index.as_string();
    int64_t parsed = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (!text.empty() && ec == std::errc{} && ptr == text.data() + text.size())
      value = parsed;
  }
  if (!value || *value < -1'000'000'000 || *value > 1'000'000'000)
    reject("\"task\" \"index\" must be an integer, got " + describe(index)
           + ": write the task's position in its job, e.g. \"index\": 0");
  return static_cast<int>(*value);
}

/// A job of `cluster` to show in "add a task" examples.
std::string example_job(const ClusterSpec& cluster) {
  return cluster.num_tasks("worker") > 0 ? "worker" : cluster.jobs().front();
}

} // namespace

TFConfigClusterResolver::TFConfigClusterResolver(std::optional<std::string> task_type,
                                                 std::optional<int> task_id,
                                                 std::optional<std::string> rpc_layer,
                                                 std::optional<std::string> environment)
  : TFConfigClusterResolver(
    Overrides{std::move(task_type), task_id, std::move(rpc_layer), std::move(environment)}, [] {
      // As TensorFlow, a missing TF_CONFIG is "{}"; so is
      // an empty one, which is how shells unset it.
      const char* value = std::getenv("TF_CONFIG");
      return value != nullptr && *value != '\0' ? value : "{}";
    }()) {}

TFConfigClusterResolver TFConfigClusterResolver::from_json(std::string_view tf_config) {
  return TFConfigClusterResolver(Overrides{}, tf_config);
}

TFConfigClusterResolver::TFConfigClusterResolver(Overrides overrides, std::string_view tf_config) {
  JsonValue config;
  try {
    config = JsonValue::parse(tf_config);
  } catch (const Error& e) {
    reject(e.what());
  }
  if (!config.is_object())
    reject("expected a JSON object such as {\"cluster\": {\"worker\": [\"host1:2222\"]}, "
           "\"task\": {\"type\": \"worker\", \"index\": 0}}, got "
           + describe(config));
  if (const auto* cluster = config.find("cluster"))
    cluster_ = parse_cluster(*cluster);

  // The task as TF_CONFIG gives it.
  const auto* task = config.find("task");
  std::optional<std::string> type;
  std::optional<int> index;
  if (task != nullptr) {
    if (!task->is_object())
      reject("\"task\" must be an object such as {\"type\": \"worker\", \"index\": 0}, got "
             + describe(*task));
    if (const auto* value = task->find("type")) {
      if (!value->is_string())
        reject("\"task\" \"type\" must be a string such as \"worker\", got " + describe(*value));
      type = value->as_string();
    }
    if (const auto* value = task->find("index"))
      index = parse_index(*value);
  }
  rpc_layer_ = overrides.rpc_layer.value_or(string_member(config, "rpc_layer").value_or(""));
  environment_ = overrides.environment.value_or(string_member(config, "environment").value_or(""));
  session_master_ = string_member(config, "session_master").value_or("");

  // Explicit arguments win, as in TensorFlow.
  const bool overridden = overrides.task_type || overrides.task_id;
  if (overrides.task_type)
    type = overrides.task_type;
  if (overrides.task_id)
    index = overrides.task_id;
  const std::string source = overridden ? "invalid TF_CONFIG task (with the task_type/task_id "
                                          "passed to TFConfigClusterResolver)"
                                        : "invalid TF_CONFIG \"task\"";

  // A cluster of several tasks must say which one this process is.
  const auto total = cluster_.num_tasks_total();
  if (total > 1) {
    const auto job = type.value_or(example_job(cluster_));
    const auto size = cluster_.num_tasks(job);
    const auto range =
      size > 0 ? " (0.." + std::to_string(size - 1) + " for job \"" + job + "\")" : std::string();
    if (task == nullptr && !overridden)
      reject("the cluster has " + std::to_string(total)
             + " tasks but TF_CONFIG has no \"task\" to say which one this process is: add "
               "\"task\": {\"type\": \""
             + job + "\", \"index\": N}" + range);
    if (!type)
      reject("\"task\" " + (task != nullptr ? task->to_json() : std::string("{}"))
             + " has no \"type\": add \"type\": \"" + job + "\" (one of the cluster's jobs)");
    if (!index)
      reject("\"task\" " + (task != nullptr ? task->to_json() : std::string("{}"))
             + " has no \"index\": add \"index\": N" + range);
  }
  if (type) {
    // Without an index only the type is checked; index 0 exists in every job.
    check_task(cluster_, *type, index.value_or(0), source);
    task_type_ = *type;
  }
  if (index) {
    if (*index < 0)
      reject("\"task\" \"index\" " + std::to_string(*index)
             + " is negative: write the task's position in its job, counting from 0");
    task_id_ = *index;
  }
}

std::string TFConfigClusterResolver::master(std::string_view task_type, int task_id,
                                            std::string_view rpc_layer) const {
  if (!session_master_.empty())
    return session_master_;
  // TensorFlow: a cluster of at most one task has no master to connect to.
  if (cluster_.num_tasks_total() <= 1)
    return {};
  return ClusterResolver::master(task_type, task_id, rpc_layer);
}

} // namespace troupe
