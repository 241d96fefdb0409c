#include <troupe/core/device_spec.hpp>

#include <array>
#include <charconv>
#include <ostream>
#include <vector>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

// Device types that TensorFlow's legacy spellings ("/gpu:0") accept and that
// are upper-cased wherever they appear.
constexpr std::array<std::string_view, 3> known_types{"CPU", "GPU", "TPU"};

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  return out;
}

/// The canonical spelling of a known type ("gpu" -> "GPU"), or nullopt.
std::optional<std::string> known_type(std::string_view text) {
  auto up = upper(text);
  for (auto t : known_types)
    if (t == up)
      return up;
  return std::nullopt;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (;;) {
    auto end = text.find(sep, begin);
    if (end == std::string_view::npos) {
      out.push_back(text.substr(begin));
      return out;
    }
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
}

/// Parses a non-negative int made of digits only; nullopt otherwise.
std::optional<int> parse_index(std::string_view text) {
  int value = 0;
  if (text.empty() || text.front() < '0' || text.front() > '9')
    return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size())
    return std::nullopt;
  return value;
}

/// Parses one device string; every error quotes the whole string.
class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  [[noreturn]] void reject(const std::string& why) const {
    fail(Errc::invalid_argument,
         "invalid device string \"" + std::string(text_) + "\": " + why);
  }

  int number(std::string_view field, std::string_view value) const {
    auto n = parse_index(value);
    if (!n)
      reject(std::string(field) + " must be a non-negative integer, got \"" + std::string(value)
             + "\"");
    return *n;
  }

  std::optional<int> device_index(std::string_view value) const {
    if (value == "*")
      return std::nullopt;
    auto n = parse_index(value);
    if (!n)
      reject("device index must be a non-negative integer or \"*\", got \"" + std::string(value)
             + "\"");
    return n;
  }

  void set_type(std::optional<std::string>& slot, std::string type) const {
    // As TensorFlow: "/cpu:0/gpu:0" names two devices, which is an error.
    if (slot)
      reject("multiple device types (\"" + *slot + "\" and \"" + type + "\")");
    slot = std::move(type);
  }

private:
  std::string_view text_;
};

} // namespace

DeviceSpec DeviceSpec::from_string(std::string_view text) {
  // Mirrors tf.DeviceSpec.from_string: split on '/', then each part on ':'.
  Parser parser{text};
  DeviceSpec spec;
  for (auto part : split(text, '/')) {
    if (part.empty())
      continue; // leading "/", "//" and a trailing "/" are harmless
    auto fields = split(part, ':');
    const auto n = fields.size();
    const auto key = fields[0];
    if (n == 2 && key == "job") {
      if (fields[1].empty())
        parser.reject("job name must not be empty");
      spec.job_ = std::string(fields[1]);
    } else if (n == 2 && key == "replica") {
      spec.replica_ = parser.number("replica", fields[1]);
    } else if (n == 2 && key == "task") {
      spec.task_ = parser.number("task", fields[1]);
    } else if ((n == 1 || n == 2) && known_type(key)) {
      // Legacy "/gpu:0", "/cpu:*", "CPU:0" or a bare "GPU".
      parser.set_type(spec.device_type_, *known_type(key));
      spec.device_index_ = n == 2 ? parser.device_index(fields[1]) : std::nullopt;
    } else if (n == 3 && key == "device") {
      if (fields[1].empty())
        parser.reject("device type must not be empty in \"" + std::string(part) + "\"");
      auto type = known_type(fields[1]).value_or(std::string(fields[1]));
      parser.set_type(spec.device_type_, std::move(type));
      spec.device_index_ = parser.device_index(fields[2]);
    } else {
      parser.reject("unknown part \"" + std::string(part)
                    + "\" (expected job:NAME, replica:N, task:N, device:TYPE:N, or CPU:N, "
                      "GPU:N, TPU:N)");
    }
  }
  return spec;
}

DeviceSpec DeviceSpec::local(std::string_view type, int index) {
  if (type.empty() || type.find_first_of("/:") != std::string_view::npos)
    fail(Errc::invalid_argument,
         "invalid device type \"" + std::string(type) + "\": expected a name such as CPU or GPU");
  if (index < 0)
    fail(Errc::invalid_argument, "invalid device index " + std::to_string(index) + " for "
                                   + std::string(type) + ": it must be non-negative");
  DeviceSpec spec;
  spec.device_type_ = known_type(type).value_or(std::string(type));
  spec.device_index_ = index;
  return spec;
}

std::string DeviceSpec::to_string() const {
  std::string out;
  if (job_)
    out += "/job:" + *job_;
  if (replica_)
    out += "/replica:" + std::to_string(*replica_);
  if (task_)
    out += "/task:" + std::to_string(*task_);
  if (device_type_)
    out += "/device:" + short_name();
  return out;
}

std::string DeviceSpec::short_name() const {
  if (!device_type_)
    return {};
  return *device_type_ + ":" + (device_index_ ? std::to_string(*device_index_) : "*");
}

DeviceSpec DeviceSpec::make_merged_spec(const DeviceSpec& other) const {
  // Field by field, as TensorFlow: a set index in `other` overrides ours even
  // when `other` names no type.
  DeviceSpec out = *this;
  if (other.job_)
    out.job_ = other.job_;
  if (other.replica_)
    out.replica_ = other.replica_;
  if (other.task_)
    out.task_ = other.task_;
  if (other.device_type_)
    out.device_type_ = other.device_type_;
  if (other.device_index_)
    out.device_index_ = other.device_index_;
  return out;
}

std::ostream& operator<<(std::ostream& out, const DeviceSpec& spec) {
  return out << spec.to_string();
}

} // namespace troupe
