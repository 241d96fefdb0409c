#include <troupe/actors/ps/ps_client.hpp>

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/local_actor.hpp>
#include <caf/send.hpp>

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

std::shared_ptr<const void> lend_to_server(const ParameterServerActorHandle& server, ShardUpdate& update,
                                           CrossMemoryTensor& remote) {
  if (!CrossMemoryPeers::pid_of(server.node()))
    return nullptr;
  auto loan = lend(update.value, remote);
  if (loan)
    update.value = Tensor{};
  return loan;
}

Tensor take_read_reply(const ParameterServerActorHandle& server, std::optional<int32_t> pid, PsReadReply& reply,
                       bool wanted, std::string& why) {
  if (reply.remote.bytes == 0)
    return std::move(reply.value);
  Tensor value;
  // A request that already settled takes nothing: only the release is due.
  if (wanted) {
    if (!pid)
      why = "the server answered with a tensor in its memory, which this process did not ask for";
    else if (auto failed = take_cross_memory(*pid, reply.remote, nullptr, value); !failed.empty())
      why = "reading the value from the server's memory failed: " + failed;
  }
  caf::anon_send(server, PsReleaseMsg{reply.remote.lease});
  return value;
}

} // namespace troupe::internal
