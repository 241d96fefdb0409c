#include <troupe/net/link/transport_choice.hpp>

namespace troupe::internal {

TransportChoice choose_transport(const std::vector<TransportOffer>& offers) {
  TransportChoice choice;
  std::string asked; // a task that asked for ucx
  std::string blocker;
  for (const auto& offer : offers) {
    if (offer.transport == "ucx" && asked.empty())
      asked = offer.task;
    if (!blocker.empty())
      continue;
    if (offer.transport == "tcp")
      blocker = "task " + offer.task + " runs with TROUPE_TRANSPORT=tcp";
    else if (!offer.ucx)
      blocker = "task " + offer.task + " offers no UCX data plane: " + offer.ucx_error;
    else if (offer.shm_domain != offers.front().shm_domain)
      blocker = "tasks " + offers.front().task + " and " + offer.task
                + " share no memory (other hosts, or other network or IPC namespaces or users): UCX carries only "
                  "tasks on one host";
  }
  if (blocker.empty()) {
    choice.ucx = true;
    choice.why = "every worker shares memory on this host";
    return choice;
  }
  choice.why = blocker;
  if (!asked.empty())
    choice.error = "task " + asked + " asks for TROUPE_TRANSPORT=ucx, but " + blocker
                   + "; set TROUPE_TRANSPORT=tcp or auto on every task";
  return choice;
}

} // namespace troupe::internal
