#include "tf_config_reader.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace troupe::testing {

std::vector<std::string> TfConfig::job(const std::string& name) const {
  for (const auto& [job_name, tasks] : cluster)
    if (job_name == name)
      return tasks;
  return {};
}

TfConfig parse_tf_config(const std::string& json) {
  // ordered_json: the jobs and keys in their JSON order.
  const auto document = nlohmann::ordered_json::parse(json);
  const auto unexpected = [&](const std::string& what) {
    return std::invalid_argument("TF_CONFIG " + json + ": unexpected " + what);
  };
  TfConfig config;
  for (const auto& [key, value] : document.items()) {
    config.keys.push_back(key);
    if (key == "cluster") {
      for (const auto& [job, tasks] : value.items())
        config.cluster.emplace_back(job, tasks.get<std::vector<std::string>>());
    } else if (key == "task") {
      for (const auto& [field, field_value] : value.items()) {
        if (field == "type")
          config.type = field_value.get<std::string>();
        else if (field == "index")
          config.index = field_value.get<int>();
        else
          throw unexpected("task field " + field);
      }
    } else {
      throw unexpected("key " + key);
    }
  }
  return config;
}

int port_of(const std::string& address) {
  return std::stoi(address.substr(address.rfind(':') + 1));
}

} // namespace troupe::testing
