#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tf_config.hpp"

namespace troupe::launch {

/// The GPUs troupe-launch may hand out: the entries of its own
/// CUDA_VISIBLE_DEVICES when that is set (CUDA then shows the tasks only
/// those), else 0 .. device_count - 1.
[[nodiscard]] std::vector<std::string> visible_gpus(const std::optional<std::string>& cuda_visible_devices,
                                                    int device_count);

/// --gpus-per-worker: each task's CUDA_VISIBLE_DEVICES, by task name. The
/// chief and the workers, in `tasks` order, get `per_worker` consecutive GPUs
/// of `visible` each (one NCCL rank per GPU: no two share one); ps and
/// evaluator tasks get none (""), since troupe keeps their work on the CPU.
/// Throws std::invalid_argument naming how many GPUs are needed, how many
/// there are (`where`: "CUDA_VISIBLE_DEVICES=0,1" or "this machine") and the fix.
[[nodiscard]] std::map<std::string, std::string> assign_gpus(const std::vector<TaskId>& tasks, int per_worker,
                                                             const std::vector<std::string>& visible,
                                                             const std::string& where);

} // namespace troupe::launch
