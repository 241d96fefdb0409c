// The collective group's flight recorder (CollectiveGroupActor): the last
// collectives it took part in, logged as one block when something goes wrong
// (a stall, a timeout, a fingerprint mismatch, a lost peer), so that every
// task's log shows what it was doing and whom it waited for.

#include <troupe/actors/replicas/collective_group_actor.hpp>

#include <caf/all.hpp>

#include <troupe/core/config.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

int64_t CollectiveGroupActor::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock().now().time_since_epoch()).count();
}

std::string CollectiveGroupActor::waiting_for(const CollectiveKey& key) const {
  auto i = pending_.find(key);
  if (i == pending_.end())
    return "nothing here (it ended without a result on this task)";
  const auto& pending = i->second;
  if (pending.cross && cross_)
    return cross_->waiting_for(key);
  std::vector<int> missing;
  for (size_t r = 0; r < pending.contributions.size(); ++r)
    if (!pending.contributions[r])
      missing.push_back(static_cast<int>(r));
  return missing.empty() ? std::string("its local reduce") : replica_list(missing);
}

void CollectiveGroupActor::dump_flight_record(const std::string& why) {
  if (recorder_.size() == 0) // off, or this group ran no collective: nothing to tell
    return;
  // The task's name without its address: "worker:1 (127.0.0.1:4001)" -> "worker:1".
  std::string task;
  if (setup_.cluster) {
    task = setup_.cluster->task_names.at(static_cast<size_t>(setup_.cluster->rank));
    task = task.substr(0, task.find(' '));
  }
  const auto block =
    recorder_.render(why, [this](const CollectiveKey& key) { return waiting_for(key); }, now_ns(), task);
  TROUPE_LOG(warning, "coll") << block;
  if (task.empty())
    task = "local";
  if (auto err = write_flight_record(knobs().flight_recorder_dir, task, block); !err.empty())
    TROUPE_LOG(warning, "coll") << "flight recorder (TROUPE_FLIGHT_RECORDER_DIR): " << err;
}

} // namespace troupe::internal
