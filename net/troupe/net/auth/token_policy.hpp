#pragma once

// Whether a cluster may start without a cluster token (internal: not
// installed): only on this machine's loopback, or when told to.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::internal::auth {

/// The shortest token a cluster beyond loopback accepts: 16 characters
/// (128 bits as 32 hex digits, as troupe-launch makes them, is the advice).
inline constexpr std::size_t min_token_chars = 16;

/// Whether `host` (as TF_CONFIG writes it) is this machine's loopback:
/// "localhost" (any case), an IPv4 address in 127.0.0.0/8, or IPv6's
/// loopback ("::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1").
[[nodiscard]] bool is_loopback_host(std::string_view host);

/// Checks that a cluster whose tasks are on `hosts` may run with
/// `cluster_token`: beyond loopback, Error(failed_precondition) naming a host
/// and the fix when the token is shorter than min_token_chars, or empty and
/// `allow_unauthenticated` is not set. Returns the warning line to log when
/// an empty token is allowed (else "").
[[nodiscard]] std::string check_token_policy(const std::string& cluster_token, const std::vector<std::string>& hosts,
                                             bool allow_unauthenticated);

} // namespace troupe::internal::auth
