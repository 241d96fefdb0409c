// The messages that cross processes on the control plane (the type-ID
// blocks troupe_core, troupe_cluster, troupe_parameter_server,
// troupe_coordinator and troupe_ps_settings) as CAF's BASP hands them to
// their inspect overloads: the first input byte picks the type, the rest is
// deserialized with caf::binary_deserializer. A load fails with an error
// (bounded lengths, known enum values) or yields a value that serializes
// again; it never crashes or allocates what the bytes merely claim.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_settings_messages.hpp>
#include <troupe/core/type_ids.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>

using namespace troupe;
using namespace troupe::internal;

namespace {

using WireTypes = std::tuple<
  // troupe_core
  Tensor, Shape, DeviceSpec,
  // troupe_cluster
  HelloMsg, NodeLookupMsg, NodeFarewellMsg,
  // troupe_parameter_server
  ShardKey, AttemptId, ShardUpdate, PsCreateMsg, PsReadMsg, PsApplyMsg, PsStageMsg, PsCommitMsg, PsCommitReply,
  PsAbortMsg, PsStatsMsg, PsStats, PsGatherMsg, CrossMemoryTensor, PsReadReply, PsReleaseMsg,
  // troupe_coordinator
  ClosureSpec, RunClosureMsg, ClosureFinishedMsg, ClosureAttemptEndedMsg,
  // troupe_ps_settings
  PsSettingsMsg, PsSettingsVerdictMsg>;

caf::actor_system& system() {
  // Never destroyed: libFuzzer exits from inside a run, and CAF's globals
  // are gone before a static actor_system's destructor would run.
  static caf::actor_system* sys = [] {
    static caf::actor_system_config cfg;
    cfg.set("scheduler.policy", caf::atom("testing"));
    return std::make_unique<caf::actor_system>(cfg).release();
  }();
  return *sys;
}

template <class T>
void load(const char* data, std::size_t size) {
  T value;
  caf::binary_deserializer source(system(), data, size);
  if (source(value))
    return;
  std::vector<char> again;
  caf::binary_serializer sink(system(), again);
  if (sink(value))
    std::abort(); // a value that was loaded must save
}

template <std::size_t... Is>
void load_nth(std::size_t n, const char* data, std::size_t size, std::index_sequence<Is...>) {
  ((n == Is ? load<std::tuple_element_t<Is, WireTypes>>(data, size) : void()), ...);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  constexpr std::size_t types = std::tuple_size_v<WireTypes>;
  load_nth(data[0] % types, reinterpret_cast<const char*>(data) + 1, size - 1, std::make_index_sequence<types>{});
  return 0;
}
