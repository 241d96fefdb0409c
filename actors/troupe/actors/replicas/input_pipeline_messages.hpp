#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/core/local_only.hpp>
#include <troupe/datasets/element.hpp>

namespace troupe::internal {

/// Where the input actor leaves the steps the edge asked for.
struct FetchSlot {
  /// Steps asked for; fewer come only at the end of the data or before a
  /// pipeline error (which the next fetch then gets).
  std::size_t wanted = 1;
  std::vector<std::vector<Element>> steps; ///< empty at the end of the data
  std::exception_ptr error;
  Completion done;
};

/// Edge -> input actor: fill `slot` with the next `slot->wanted` steps.
struct InputFetchMsg {
  std::shared_ptr<FetchSlot> slot;
};

/// Input actor -> itself: produce one more step ahead.
struct InputFillMsg {};

/// What an input actor accepts (InputPipelineActor).
using InputPipelineActorHandle = caf::typed_actor<caf::reacts_to<InputFetchMsg>, caf::reacts_to<InputFillMsg>>;

// Local-only: the slot is where a thread of this process waits.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, InputFetchMsg& x) {
  std::size_t wanted = x.slot ? x.slot->wanted : 0;
  return inspect_local_only(f, "troupe::InputFetchMsg", wanted);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, InputFillMsg&) {
  return f(caf::meta::type_name("troupe::InputFillMsg"));
}

} // namespace troupe::internal
