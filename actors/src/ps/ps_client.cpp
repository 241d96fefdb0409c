#include <troupe/actors/ps/ps_client.hpp>

#include <algorithm>

#include <troupe/actors/runtime/request_error.hpp>
#include <troupe/core/config.hpp>

namespace troupe::internal {

PsClient::PsClient(caf::event_based_actor* self)
  : self_(self),
    timeout_(std::chrono::duration_cast<caf::timespan>(
      std::chrono::duration<double>(knobs().collective_timeout_seconds))) {
}

std::shared_ptr<bool> PsClient::track(const ParameterServerHandle& server, const std::string& what,
                                      const OnFailure& on_failure) {
  auto& open = in_flight_[server.address()];
  if (open.empty())
    self_->monitor(server);
  std::erase_if(open, [](const Open& request) { return !*request.open; });
  auto flag = std::make_shared<bool>(true);
  open.push_back({flag, what, on_failure});
  return flag;
}

std::string PsClient::failure(const std::string& what, const caf::error& err, Errc code) const {
  return what + " failed: " + self_->system().render(err)
         + (code == Errc::timeout ? "; is the server alive? TROUPE_COLLECTIVE_TIMEOUT_SECONDS sets the deadline"
                                  : "");
}

void PsClient::server_down(const caf::down_msg& msg) {
  auto i = in_flight_.find(msg.source);
  if (i == in_flight_.end())
    return;
  auto requests = std::move(i->second);
  in_flight_.erase(i);
  for (auto& request : requests)
    if (std::exchange(*request.open, false))
      request.on_failure(Errc::peer_lost, request.what + " failed: the server's actor terminated ("
                                            + self_->system().render(msg.reason) + "): its task was lost");
}

} // namespace troupe::internal
