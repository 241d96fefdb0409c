// Follows ParameterServerStrategyExtended._create_variable_round_robin in TensorFlow's
// tensorflow/python/distribute/parameter_server_strategy_v2.py.
#include <troupe/strategies/round_robin_placement.hpp>

#include <string>

#include <troupe/core/errors.hpp>

namespace troupe {

RoundRobinPlacement::RoundRobinPlacement(int num_ps) : num_ps_(num_ps) {
  if (num_ps < 1)
    fail(Errc::invalid_argument,
         "ParameterServerStrategy: There must be at least one ps; the cluster has "
           + std::to_string(num_ps) + " parameter servers. Add a \"ps\" job to the cluster spec");
}

int RoundRobinPlacement::next() {
  const int task = static_cast<int>(variable_count_ % num_ps_);
  ++variable_count_;
  return task;
}

std::vector<int> RoundRobinPlacement::place(const ShardLayout& layout) {
  std::vector<int> tasks;
  tasks.reserve(static_cast<std::size_t>(layout.num_shards()));
  for (int64_t i = 0; i < layout.num_shards(); ++i)
    tasks.push_back(next());
  return tasks;
}

DeviceSpec RoundRobinPlacement::device(int ps_task) {
  if (ps_task < 0)
    fail(Errc::invalid_argument, "RoundRobinPlacement::device: ps task " + std::to_string(ps_task)
                                   + " is negative; pass a task index >= 0");
  return DeviceSpec::from_string("/job:ps/replica:0/task:" + std::to_string(ps_task)
                                 + "/device:CPU:0");
}

} // namespace troupe
