#include <troupe/net/cluster_spec.hpp>

#include <charconv>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_alnum(char c) {
  return is_alpha(c) || is_digit(c);
}

/// TensorFlow's job name rule (DeviceNameUtils): [A-Za-z][A-Za-z0-9_]*.
bool is_valid_job_name(std::string_view name) {
  if (name.empty() || !is_alpha(name.front()))
    return false;
  for (auto c : name)
    if (!is_alnum(c) && c != '_')
      return false;
  return true;
}

[[noreturn]] void reject_spec(const std::string& why) {
  fail(Errc::invalid_argument, "invalid cluster spec: " + why);
}

[[noreturn]] void reject_address(std::string_view address, const std::string& why) {
  fail(Errc::invalid_argument, "invalid task address \"" + std::string(address) + "\": " + why);
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

/// "ps, worker" or "(the cluster is empty)", for messages.
std::string job_list(const ClusterSpec::JobMap& jobs) {
  if (jobs.empty())
    return "the cluster is empty";
  std::string out = "jobs: ";
  bool first = true;
  for (const auto& [name, tasks] : jobs) {
    out += (first ? "" : ", ") + name;
    first = false;
  }
  return out;
}

/// Jobs that tf.distribute allows at most one task of.
void check_single_task_job(const ClusterSpec::JobMap& jobs, const std::string& job,
                           std::string_view fix) {
  auto i = jobs.find(job);
  if (i == jobs.end() || i->second.size() <= 1)
    return;
  std::string addresses;
  for (const auto& address : i->second)
    addresses += (addresses.empty() ? "" : ", ") + quoted(address);
  reject_spec("job \"" + job + "\" has " + std::to_string(i->second.size()) + " tasks (" + addresses
              + ") but there can be at most one " + job + ": " + std::string(fix));
}

/// Writes the canonical JSON of `jobs` to `sink`. Names and addresses were
/// validated, so none needs escaping.
template <class Sink>
void write_json(const ClusterSpec::JobMap& jobs, Sink&& sink) {
  sink("{");
  bool first_job = true;
  for (const auto& [name, tasks] : jobs) {
    sink(first_job ? "\"" : ", \"");
    first_job = false;
    sink(name);
    sink("\": [");
    bool first_task = true;
    for (const auto& address : tasks) {
      sink(first_task ? "\"" : ", \"");
      first_task = false;
      sink(address);
      sink("\"");
    }
    sink("]");
  }
  sink("}");
}

} // namespace

ClusterSpec::ClusterSpec(JobMap jobs) : jobs_(std::move(jobs)) {
  // Where each address was first seen, to name both places of a duplicate.
  std::map<std::string_view, std::string> seen;
  for (const auto& [name, tasks] : jobs_) {
    if (!is_valid_job_name(name))
      reject_spec("job name " + quoted(name)
                  + " is not valid: use letters, digits and '_', starting with a letter (it "
                    "becomes \"/job:"
                  + name + "\" in device names)");
    if (tasks.empty())
      reject_spec("job \"" + name
                  + "\" has no tasks: give it at least one \"host:port\" address or leave it out");
    for (size_t i = 0; i < tasks.size(); ++i) {
      const auto place = name + " task " + std::to_string(i);
      try {
        (void) parse_task_address(tasks[i]);
      } catch (const Error& e) {
        reject_spec(place + ": " + e.what());
      }
      auto [where, inserted] = seen.emplace(tasks[i], place);
      if (!inserted)
        reject_spec("address " + quoted(tasks[i]) + " is used twice, by " + where->second + " and "
                    + place + ": give every task its own host:port");
    }
  }
  check_single_task_job(jobs_, "chief", "make the others \"worker\" tasks");
  check_single_task_job(jobs_, "evaluator", "run one evaluator task outside the training cluster");
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> out;
  out.reserve(jobs_.size());
  for (const auto& [name, tasks] : jobs_)
    out.push_back(name);
  return out;
}

int ClusterSpec::num_tasks(std::string_view job) const {
  auto i = jobs_.find(std::string(job));
  return i == jobs_.end() ? 0 : static_cast<int>(i->second.size());
}

const std::vector<std::string>& ClusterSpec::job_tasks(std::string_view job) const {
  auto i = jobs_.find(std::string(job));
  if (i == jobs_.end())
    fail(Errc::invalid_argument, "no job " + quoted(job) + " in the cluster spec ("
                                   + job_list(jobs_) + "): use one of its jobs");
  return i->second;
}

const std::string& ClusterSpec::task_address(std::string_view job, int task_id) const {
  const auto& tasks = job_tasks(job);
  if (task_id < 0 || static_cast<size_t>(task_id) >= tasks.size())
    fail(Errc::invalid_argument, "no task " + std::to_string(task_id) + " in job " + quoted(job)
                                   + ": it has " + std::to_string(tasks.size())
                                   + " tasks, so the index must be in 0.."
                                   + std::to_string(tasks.size() - 1));
  return tasks[static_cast<size_t>(task_id)];
}

int ClusterSpec::num_tasks_total() const noexcept {
  size_t out = 0;
  for (const auto& [name, tasks] : jobs_)
    out += tasks.size();
  return static_cast<int>(out);
}

std::string ClusterSpec::to_json() const {
  std::string out;
  write_json(jobs_, [&](std::string_view part) { out += part; });
  return out;
}

uint64_t ClusterSpec::fingerprint() const noexcept {
  // FNV-1a 64 over the bytes of to_json(), without building the string.
  uint64_t hash = 0xcbf29ce484222325ull;
  write_json(jobs_, [&](std::string_view part) {
    for (auto c : part) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ull;
    }
  });
  return hash;
}

TaskAddress parse_task_address(std::string_view address) {
  if (auto scheme = address.find("://"); scheme != std::string_view::npos)
    reject_address(address, "a task address has no scheme: write \""
                              + std::string(address.substr(scheme + 3))
                              + "\" and give the protocol as the rpc layer");
  std::string_view host;
  std::string_view port;
  if (!address.empty() && address.front() == '[') {
    // "[v6]:port"
    auto close = address.find(']');
    if (close == std::string_view::npos)
      reject_address(address, "'[' without ']': write IPv6 hosts as \"[::1]:2222\"");
    host = address.substr(1, close - 1);
    auto rest = address.substr(close + 1);
    if (rest.empty() || rest.front() != ':')
      reject_address(address, "expected ':' and a port after ']', e.g. \"[::1]:2222\"");
    port = rest.substr(1);
    if (host.find(':') == std::string_view::npos)
      reject_address(address, "brackets are for IPv6 hosts, \"" + std::string(host)
                                + "\" is not one: write \"host:port\" without brackets");
    for (auto c : host)
      if (!is_alnum(c) && c != ':' && c != '.' && c != '%' && c != '_' && c != '-')
        reject_address(address, "invalid character '" + std::string(1, c) + "' in IPv6 host \""
                                  + std::string(host) + "\"");
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string_view::npos)
      reject_address(address, "expected \"host:port\", e.g. \"localhost:12345\"");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      reject_address(address, "an IPv6 host needs brackets, e.g. \"[::1]:2222\"");
    for (auto c : host)
      if (!is_alnum(c) && c != '.' && c != '-' && c != '_')
        reject_address(address, "invalid character '" + std::string(1, c) + "' in host \""
                                  + std::string(host) + "\" (use a host name or an IP address)");
  }
  if (host.empty())
    reject_address(address, "the host is empty: expected \"host:port\", e.g. \"localhost:12345\"");
  int value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || !is_digit(port.front()) || ec != std::errc{}
      || ptr != port.data() + port.size() || value < 1 || value > 65535)
    reject_address(address, "port \"" + std::string(port) + "\" is not a number in 1..65535");
  return TaskAddress{std::string(host), static_cast<uint16_t>(value)};
}

} // namespace troupe
