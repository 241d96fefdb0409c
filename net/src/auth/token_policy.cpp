#include <troupe/net/auth/token_policy.hpp>

#include <arpa/inet.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal::auth {

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]")
    return true;
  in_addr address{};
  const std::string text(host);
  if (::inet_pton(AF_INET, text.c_str(), &address) != 1)
    return false; // a name other than localhost, or another IPv6 address: not known to be loopback
  return (ntohl(address.s_addr) >> 24) == 127;
}

std::string check_token_policy(const std::string& cluster_token, const std::vector<std::string>& hosts,
                               bool allow_unauthenticated) {
  if (!cluster_token.empty())
    return {};
  for (const auto& host : hosts) {
    if (is_loopback_host(host))
      continue;
    if (allow_unauthenticated)
      return "this cluster runs without TROUPE_CLUSTER_TOKEN on " + host
             + " (TROUPE_ALLOW_UNAUTHENTICATED=1): anyone who can reach its tasks' ports can join it";
    fail(Errc::failed_precondition,
         "this cluster has a task on " + host + ", beyond this machine's loopback, and TROUPE_CLUSTER_TOKEN is "
         "empty: anyone who can reach its ports could join it. Set the same random TROUPE_CLUSTER_TOKEN on every "
         "task (troupe-launch makes one per run; by hand e.g. export TROUPE_CLUSTER_TOKEN=$(openssl rand -hex 16)), "
         "or TROUPE_ALLOW_UNAUTHENTICATED=1 to run without one (docs/security.md)");
  }
  return {};
}

} // namespace troupe::internal::auth
