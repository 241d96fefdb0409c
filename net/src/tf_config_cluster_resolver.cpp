#include <troupe/net/tf_config_cluster_resolver.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

// Objects keep document order, so messages quote TF_CONFIG as it was written.
using Json = nlohmann::ordered_json;

// Deep enough for any TF_CONFIG; bounds what a hostile one makes the parser
// allocate.
constexpr int max_depth = 256;

[[noreturn]] void reject(const std::string& why) {
  fail(Errc::invalid_argument, "invalid TF_CONFIG: " + why);
}

/// `c` as it can be printed inside a one-line message: control characters
/// and non-ASCII bytes become escapes.
void append_printable(std::string& out, char c) {
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) {
    out += c;
    return;
  }
  const char* hex_digits = "0123456789abcdef";
  out += "\\x";
  out += hex_digits[byte >> 4];
  out += hex_digits[byte & 0xf];
}

/// Rejects TF_CONFIG's JSON at byte `at`, quoting about 20 characters around
/// it on one line.
[[noreturn]] void reject_json(std::string_view text, size_t at, const std::string& why) {
  constexpr size_t radius = 10;
  const auto begin = at > radius ? at - radius : 0;
  const auto end = std::min(text.size(), at + radius);
  std::string snippet = begin > 0 ? "..." : "";
  for (auto i = begin; i < end; ++i)
    append_printable(snippet, text[i]);
  if (end < text.size())
    snippet += "...";
  reject("invalid JSON at byte " + std::to_string(at) + ": " + why + " (near `" + snippet + "`)");
}

/// nlohmann's message without its "[json.exception.parse_error.101] parse
/// error at line 1, column 2: " prefix, which reject_json replaces.
std::string reason_of(const Json::exception& e) {
  const std::string_view what = e.what();
  for (const char* separator : {": ", "] "})
    if (const auto at = what.find(separator); at != std::string_view::npos)
      return std::string(what.substr(at + 2));
  return std::string(what);
}

/// Feeds `text` to nlohmann's parser and remembers how far it has read, so
/// that the checks in the parser callback can name a byte offset as well.
class TrackingIterator {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* at, const char** furthest) : at_(at), furthest_(furthest) {}

  reference operator*() const { return *at_; }
  TrackingIterator& operator++() {
    *furthest_ = ++at_;
    return *this;
  }
  bool operator==(const TrackingIterator& other) const { return at_ == other.at_; }

private:
  const char* at_;
  const char** furthest_;
};

/// TF_CONFIG's JSON, read strictly: RFC 8259 (nlohmann), and besides no key
/// twice in one object (nlohmann would keep the last) and no nesting deeper
/// than max_depth. An error names the offset of the last byte read.
Json parse_json(std::string_view text) {
  const char* furthest = text.data();
  // The byte the parser read last: the '[', '{' or closing '"' of a key when
  // the callback runs, as the lexer reads no further ahead there.
  const auto last_read = [&] {
    return furthest > text.data() ? static_cast<size_t>(furthest - text.data()) - 1 : 0;
  };
  std::vector<std::set<std::string>> keys_of_open_objects;
  const auto check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    using Event = Json::parse_event_t;
    // Runs before the parser allocates the nested value.
    if ((event == Event::object_start || event == Event::array_start) && depth >= max_depth)
      reject_json(text, last_read(),
                  "values are nested deeper than " + std::to_string(max_depth) + " levels");
    if (event == Event::object_start)
      keys_of_open_objects.emplace_back();
    else if (event == Event::object_end)
      keys_of_open_objects.pop_back();
    else if (event == Event::key
             && !keys_of_open_objects.back().insert(parsed.get<std::string>()).second)
      reject_json(text, last_read(), "duplicate key " + parsed.dump() + " in object");
    return true;
  };
  try {
    return Json::parse(TrackingIterator(text.data(), &furthest),
                       TrackingIterator(text.data() + text.size(), &furthest), check);
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1.
    reject_json(text, e.byte > 0 ? e.byte - 1 : 0, reason_of(e));
  } catch (const Json::exception& e) {
    // A number beyond a double's range, found once it has been read.
    reject_json(text, last_read(), reason_of(e));
  }
}

/// `value` as Python's json.dumps writes it, with ", " and ": " between
/// items, as TF_CONFIG is usually written.
std::string to_python_json(const Json& value) {
  if (!value.is_structured() || value.empty())
    return value.dump();
  std::string out = value.is_array() ? "[" : "{";
  for (auto item = value.begin(); item != value.end(); ++item) {
    if (item != value.begin())
      out += ", ";
    if (value.is_object())
      out += Json(item.key()).dump() + ": ";
    out += to_python_json(*item);
  }
  return out + (value.is_array() ? "]" : "}");
}

/// `value` for a message: its kind and its JSON text, e.g. `number 3`.
std::string describe(const Json& value) {
  return std::string(value.type_name()) + " " + to_python_json(value);
}

/// The optional string member `key` of TF_CONFIG's top level.
std::optional<std::string> string_member(const Json& config, const std::string& key) {
  const auto value = config.find(key);
  if (value == config.end())
    return std::nullopt;
  if (!value->is_string())
    reject("\"" + key + "\" must be a string, got " + describe(*value));
  return value->get<std::string>();
}

ClusterSpec parse_cluster(const Json& cluster) {
  if (!cluster.is_object())
    reject("\"cluster\" must be an object mapping job names to lists of \"host:port\" "
           "strings, e.g. {\"worker\": [\"host1:2222\", \"host2:2222\"]}; got "
           + describe(cluster));
  ClusterSpec::JobMap jobs;
  for (const auto& [name, tasks] : cluster.items()) {
    const auto where = "job \"" + name + "\" in \"cluster\"";
    if (tasks.is_object())
      reject(where + " is " + to_python_json(tasks)
             + ", TensorFlow's sparse {index: address} form, which troupe does not support: "
               "list every task in order, e.g. [\"host1:2222\", \"host2:2222\"]");
    if (!tasks.is_array())
      reject(where + " must be a list of \"host:port\" strings, got " + describe(tasks));
    std::vector<std::string> addresses;
    for (size_t t = 0; t < tasks.size(); ++t) {
      const auto& address = tasks[t];
      if (!address.is_string())
        reject(where + " must be a list of \"host:port\" strings, but task " + std::to_string(t)
               + " is " + describe(address) + " in " + to_python_json(tasks));
      addresses.push_back(address.get<std::string>());
    }
    jobs.emplace(name, std::move(addresses));
  }
  try {
    return ClusterSpec(std::move(jobs));
  } catch (const Error& e) {
    reject(e.what());
  }
}

/// "index" as TensorFlow's int(): an integer (3, not 3.0), or a string of one.
int parse_index(const Json& index) {
  std::optional<int64_t> value;
  if (index.is_number_unsigned()) {
    value = static_cast<int64_t>(std::min<uint64_t>(index.get<uint64_t>(), INT64_MAX));
  } else if (index.is_number_integer()) {
    value = index.get<int64_t>();
  } else if (index.is_string()) {
    const auto& text = index.get_ref<const std::string&>();
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
  const Json config = parse_json(tf_config);
  if (!config.is_object())
    reject("expected a JSON object such as {\"cluster\": {\"worker\": [\"host1:2222\"]}, "
           "\"task\": {\"type\": \"worker\", \"index\": 0}}, got "
           + describe(config));
  if (const auto cluster = config.find("cluster"); cluster != config.end())
    cluster_ = parse_cluster(*cluster);

  // The task as TF_CONFIG gives it.
  const auto task_member = config.find("task");
  const Json* task = task_member != config.end() ? &*task_member : nullptr;
  std::optional<std::string> type;
  std::optional<int> index;
  if (task != nullptr) {
    if (!task->is_object())
      reject("\"task\" must be an object such as {\"type\": \"worker\", \"index\": 0}, got "
             + describe(*task));
    if (const auto value = task->find("type"); value != task->end()) {
      if (!value->is_string())
        reject("\"task\" \"type\" must be a string such as \"worker\", got " + describe(*value));
      type = value->get<std::string>();
    }
    if (const auto value = task->find("index"); value != task->end())
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
      reject("\"task\" " + (task != nullptr ? to_python_json(*task) : std::string("{}"))
             + " has no \"type\": add \"type\": \"" + job + "\" (one of the cluster's jobs)");
    if (!index)
      reject("\"task\" " + (task != nullptr ? to_python_json(*task) : std::string("{}"))
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
