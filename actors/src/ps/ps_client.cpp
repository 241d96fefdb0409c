#include <troupe/actors/ps/ps_client.hpp>

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/local_actor.hpp>

#include <troupe/core/config.hpp>

namespace troupe::internal {

caf::timespan ps_request_timeout() {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(knobs().collective_timeout_seconds));
}

std::string request_failure(caf::local_actor& self, const std::string& what, const caf::error& err, Errc code) {
  return what + " failed: " + self.system().render(err)
         + (code == Errc::timeout ? "; is the server alive? TROUPE_COLLECTIVE_TIMEOUT_SECONDS sets the deadline"
                                  : "");
}

std::string lost_server_failure(caf::local_actor& self, const std::string& what, const caf::down_msg& msg) {
  return what + " failed: the server's actor terminated (" + self.system().render(msg.reason)
         + "): its task was lost";
}

} // namespace troupe::internal
