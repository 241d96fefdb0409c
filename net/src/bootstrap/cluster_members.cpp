#include <troupe/net/bootstrap/cluster_members.hpp>

namespace troupe::internal {

ClusterMembers::ClusterMembers(const ClusterSpec& spec) {
  for (const char* job : member_jobs) {
    for (int i = 0; i < spec.num_tasks(job); ++i) {
      names_.push_back(std::string(job) + ":" + std::to_string(i));
      addresses_.push_back(spec.task_address(job, i));
    }
    // Parameter servers come after every task of a collective.
    if (std::string_view(job) == "worker")
      participants_ = size();
  }
}

int ClusterMembers::index_of(std::string_view task_type, int task_index) const {
  return index_of(std::string(task_type) + ":" + std::to_string(task_index));
}

int ClusterMembers::index_of(std::string_view task_name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == task_name)
      return static_cast<int>(i);
  return -1;
}

std::vector<std::string> ClusterMembers::tasks_of(std::string_view job) const {
  std::vector<std::string> out;
  const auto prefix = std::string(job) + ":";
  for (const auto& name : names_)
    if (name.starts_with(prefix))
      out.push_back(name);
  return out;
}

} // namespace troupe::internal
