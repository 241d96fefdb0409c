#include <troupe/strategies/remote_value.hpp>

#include <string>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/runtime/executor.hpp>

namespace troupe::internal {

RemoteValueStatus outcome_status(const ClosureOutcome& outcome) noexcept {
  return outcome.done.done() ? outcome.status : RemoteValueStatus::not_ready;
}

const std::vector<uint8_t>& fetch_outcome(Executor& runtime, PsCluster* cluster, const ClosureOutcome& outcome,
                                          uint64_t closure_id) {
  const std::string what = "RemoteValue.fetch of closure " + std::to_string(closure_id);
  runtime.wait(outcome.done, what.c_str());
  if (outcome.status != RemoteValueStatus::ready) {
    if (cluster != nullptr)
      cluster->note_raised_error(outcome.error);
    fail(outcome.code, outcome.error);
  }
  return outcome.value;
}

void fail_empty_remote_value() {
  fail(Errc::failed_precondition, "RemoteValue.fetch on an empty RemoteValue: only ClusterCoordinator.schedule "
                                  "makes one that holds a result");
}

} // namespace troupe::internal
