#include "gpu_assignment.hpp"

#include <stdexcept>

namespace troupe::launch {

std::vector<std::string> visible_gpus(const std::optional<std::string>& cuda_visible_devices, int device_count) {
  std::vector<std::string> out;
  if (cuda_visible_devices) {
    std::string entry;
    for (char c : *cuda_visible_devices + ",") {
      if (c != ',') {
        entry += c;
        continue;
      }
      if (!entry.empty())
        out.push_back(entry);
      entry.clear();
    }
    return out;
  }
  for (int i = 0; i < device_count; ++i)
    out.push_back(std::to_string(i));
  return out;
}

std::map<std::string, std::string> assign_gpus(const std::vector<TaskId>& tasks, int per_worker,
                                               const std::vector<std::string>& visible, const std::string& where) {
  std::map<std::string, std::string> out;
  int takers = 0;
  for (const auto& task : tasks)
    takers += task.type == "chief" || task.type == "worker" ? 1 : 0;
  const auto needed = static_cast<std::size_t>(takers) * static_cast<std::size_t>(per_worker);
  if (needed > visible.size())
    throw std::invalid_argument("--gpus-per-worker " + std::to_string(per_worker) + " needs "
                                + std::to_string(needed) + " GPUs for " + std::to_string(takers)
                                + " chief and worker tasks, but " + where + " has " + std::to_string(visible.size())
                                + "; ask for fewer workers or GPUs per worker (NCCL takes one rank per GPU, so "
                                  "tasks cannot share one)");
  std::size_t next = 0;
  for (const auto& task : tasks) {
    std::string list;
    if (task.type == "chief" || task.type == "worker")
      for (int g = 0; g < per_worker; ++g)
        list += (list.empty() ? "" : ",") + visible[next++];
    out[task.name()] = list;
  }
  return out;
}

} // namespace troupe::launch
