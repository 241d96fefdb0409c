#include <troupe/strategies/remote_value.hpp>

#include <string>

#include <troupe/actors/runtime_impl.hpp>

namespace troupe::internal {

const std::vector<uint8_t>& fetch_outcome(RuntimeImpl& runtime, const ClosureOutcome& outcome, ClosureId id) {
  const std::string what = "RemoteValue.fetch of closure " + std::to_string(id);
  runtime.wait(outcome.done, what.c_str());
  if (outcome.status != RemoteValueStatus::ready)
    fail(outcome.code, outcome.error);
  return outcome.value;
}

} // namespace troupe::internal
