#include <troupe/net/auth/token_policy.hpp>

#include <algorithm>
#include <cctype>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal::auth {

bool is_loopback_host(std::string_view host) {
  std::string text(host);
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "localhost")
    return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  return false; // another name: not known to be loopback
}

std::string check_token_policy(const std::string& cluster_token, const std::vector<std::string>& hosts,
                               bool allow_unauthenticated) {
  for (const auto& host : hosts) {
    if (is_loopback_host(host))
      continue;
    if (cluster_token.size() >= min_token_chars)
      return {};
    if (!cluster_token.empty())
      fail(Errc::failed_precondition,
           "this cluster has a task on " + host + ", beyond this machine's loopback, and TROUPE_CLUSTER_TOKEN has "
           "only " + std::to_string(cluster_token.size()) + " characters: a short token can be guessed offline from "
           "what crosses the network. Use at least " + std::to_string(min_token_chars) + " characters of random "
           "(troupe-launch makes 32 hex digits per run; by hand e.g. `(umask 077; openssl rand -hex 16 > "
           "~/.troupe-token)` on every host and TROUPE_CLUSTER_TOKEN_FILE=~/.troupe-token) (docs/security.md)");
    if (allow_unauthenticated)
      return "this cluster runs without TROUPE_CLUSTER_TOKEN on " + host
             + " (TROUPE_ALLOW_UNAUTHENTICATED=1): anyone who can reach its tasks' ports can join it";
    fail(Errc::failed_precondition,
         "this cluster has a task on " + host + ", beyond this machine's loopback, and TROUPE_CLUSTER_TOKEN is "
         "empty: anyone who can reach its ports could join it. Set the same random TROUPE_CLUSTER_TOKEN on every "
         "task (troupe-launch makes one per run; by hand e.g. `(umask 077; openssl rand -hex 16 > ~/.troupe-token)` "
         "on every host and TROUPE_CLUSTER_TOKEN_FILE=~/.troupe-token), or TROUPE_ALLOW_UNAUTHENTICATED=1 to run "
         "without one (docs/security.md)");
  }
  return {};
}

} // namespace troupe::internal::auth
