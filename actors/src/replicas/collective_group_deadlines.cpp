// The collective group's deadlines (CollectiveGroupActor): one timer for
// all its pending collectives, which warns once a collective stalls and
// fails it, naming who contributed and who did not, at its deadline.

#include <troupe/actors/replicas/collective_group_actor.hpp>

#include <algorithm>
#include <cstdio>

#include <caf/all.hpp>

#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

std::string seconds(caf::timespan t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", std::chrono::duration<double>(t).count());
  return buf;
}

} // namespace

void CollectiveGroupActor::arm_timer() {
  std::optional<caf::actor_clock::time_point> next;
  for (const auto& [key, pending] : pending_) {
    if (pending.plan)
      continue;
    auto at = pending.warned ? pending.deadline : pending.stall_at;
    if (!next || at < *next)
      next = at;
  }
  if (!next)
    return;
  timer_armed_ = true;
  const auto now = clock().now();
  delayed_send(this, std::max(caf::timespan{0}, *next - now), DeadlineTickMsg{});
}

void CollectiveGroupActor::on_tick() {
  timer_armed_ = false;
  const auto now = clock().now();
  std::vector<CollectiveKey> expired;
  std::vector<CollectiveKey> stalled;
  for (auto& [key, pending] : pending_) {
    if (pending.plan)
      continue;
    if (now >= pending.deadline) {
      expired.push_back(key);
    } else if (now >= pending.stall_at && !pending.warned) {
      pending.warned = true;
      std::vector<int> missing;
      for (size_t i = 0; i < pending.contributions.size(); ++i)
        if (!pending.contributions[i])
          missing.push_back(static_cast<int>(i));
      if (pending.cross)
        TROUPE_LOG(warning, "coll") << describe(key) << " is stalled after " << seconds(setup_.stall_warning)
                                    << " across workers: " << cross_->waiting_for(key);
      else
        TROUPE_LOG(warning, "coll") << describe(key) << " is stalled after "
                                    << seconds(setup_.stall_warning) << ": waiting for "
                                    << replica_list(missing) << "; " << who_sent_what(pending);
      stalled.push_back(key);
    }
  }
  for (const auto& key : stalled)
    dump_flight_record(describe(key) + " is stalled after " + seconds(setup_.stall_warning));
  for (const auto& key : expired) {
    auto& pending = pending_.at(key);
    if (pending.cross) {
      fail(key, pending, Errc::timeout,
           describe(key) + " timed out after " + seconds(setup_.timeout) + " across workers: "
             + cross_->waiting_for(key) + ". Every worker must reach the same collectives; if the step is "
             "legitimately slow, raise CommunicationOptions.timeout_seconds or TROUPE_COLLECTIVE_TIMEOUT_SECONDS.");
      continue;
    }
    std::vector<int> missing;
    for (size_t i = 0; i < pending.contributions.size(); ++i)
      if (!pending.contributions[i])
        missing.push_back(static_cast<int>(i));
    fail(key, pending, Errc::timeout,
         describe(key) + " timed out after " + seconds(setup_.timeout) + ": "
           + who_sent_what(pending) + "; " + replica_list(missing)
           + " did not contribute. Every replica must reach the same collectives; if the step is "
             "legitimately slow, raise CommunicationOptions.timeout_seconds or "
             "TROUPE_COLLECTIVE_TIMEOUT_SECONDS.");
  }
  arm_timer();
}

} // namespace troupe::internal
