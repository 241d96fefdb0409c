#include "tf_config.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace troupe::launch {

namespace {

std::string count_of(int n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

} // namespace

std::vector<TaskId> ClusterShape::tasks() const {
  std::vector<TaskId> result;
  for (int i = 0; i < chief; ++i)
    result.push_back({"chief", i});
  for (int i = 0; i < workers; ++i)
    result.push_back({"worker", i});
  for (int i = 0; i < ps; ++i)
    result.push_back({"ps", i});
  for (int i = 0; i < evaluator; ++i)
    result.push_back({"evaluator", i});
  return result;
}

std::string ClusterShape::describe() const {
  std::vector<std::string> parts;
  if (chief > 0)
    parts.push_back(count_of(chief, "chief", "chiefs"));
  if (workers > 0)
    parts.push_back(count_of(workers, "worker", "workers"));
  if (ps > 0)
    parts.push_back(count_of(ps, "parameter server", "parameter servers"));
  if (evaluator > 0)
    parts.push_back(count_of(evaluator, "evaluator", "evaluators"));
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0)
      text += i + 1 == parts.size() ? " and " : ", ";
    text += parts[i];
  }
  return text;
}

std::string task_address(std::string_view host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string_view::npos && !host.starts_with('[');
  std::string address = ipv6 ? "[" + std::string(host) + "]" : std::string(host);
  return address + ":" + std::to_string(port);
}

ClusterSpec make_cluster_spec(const ClusterShape& shape,
                              const std::vector<std::string>& addresses) {
  if (addresses.size() != static_cast<size_t>(shape.listening_tasks()))
    throw std::logic_error("make_cluster_spec: " + std::to_string(addresses.size())
                           + " addresses for " + std::to_string(shape.listening_tasks())
                           + " tasks");
  ClusterSpec spec;
  size_t next = 0;
  auto add_job = [&](const char* job, int count) {
    if (count == 0)
      return;
    std::vector<std::string> tasks(addresses.begin() + static_cast<std::ptrdiff_t>(next),
                                   addresses.begin() + static_cast<std::ptrdiff_t>(next) + count);
    next += static_cast<size_t>(count);
    spec.jobs.emplace_back(job, std::move(tasks));
  };
  add_job("chief", shape.chief);
  add_job("worker", shape.workers);
  add_job("ps", shape.ps);
  return spec;
}

std::string tf_config_json(const ClusterSpec& cluster, const TaskId& task) {
  // ordered_json keeps the keys in the order documented in tf_config.hpp.
  nlohmann::ordered_json jobs = nlohmann::ordered_json::object();
  for (const auto& [job, tasks] : cluster.jobs)
    jobs[job] = tasks;
  const nlohmann::ordered_json config = {{"cluster", jobs},
                                         {"task", {{"type", task.type}, {"index", task.index}}}};
  return config.dump();
}

std::string describe_ports(const std::vector<uint16_t>& ports) {
  constexpr size_t shown = 16;
  std::string text = ports.size() == 1 ? "port " : "ports ";
  for (size_t i = 0; i < ports.size() && i < shown; ++i)
    text += (i > 0 ? ", " : "") + std::to_string(ports[i]);
  if (ports.size() > shown)
    text += ", ...";
  return text;
}

} // namespace troupe::launch
