#include <troupe/actors/ps/coordinator_messages.hpp>

#include <string>

#include <caf/actor_system_config.hpp>

#include <troupe/core/config.hpp>
#include <troupe/core/type_ids.hpp>

// Out of line in its own file (not coordinator_actor.cpp) so that what
// decodes these messages links without the coordinator (fuzz/messages_fuzz).

namespace troupe::internal {

// -- wire messages ----------------------------------------------------------------

std::chrono::milliseconds default_commit_timeout() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(knobs().collective_timeout_seconds));
}

caf::error unknown_enum_value(const char* what, unsigned value) {
  return caf::make_error(Errc::data_loss, "cannot deserialize " + std::string{what} + ": unknown value " +
                                            std::to_string(value) + " (a newer or corrupt peer)");
}

void add_coordinator_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe_coordinator>();
}

} // namespace troupe::internal
