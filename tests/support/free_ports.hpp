#pragma once

#include <cstdint>
#include <vector>

#include <netinet/in.h>

namespace troupe::testing {

/// A TCP socket bound to 127.0.0.1 at a free port below the ephemeral range
/// (internal::bind_free_port).
struct LoopbackSocket {
  int fd;
  sockaddr_in address;
  [[nodiscard]] uint16_t port() const { return ntohs(address.sin_port); }
};

/// Binds a new socket to 127.0.0.1 at a free port; the caller closes it.
LoopbackSocket bind_loopback_socket();

/// `n` distinct TCP ports on 127.0.0.1 that were free a moment ago: all
/// sockets stay bound until every port is picked (so no port comes twice),
/// then close. Only another process's bind (not its outgoing connections)
/// could take one before the test binds it.
std::vector<int> free_ports(int n);

} // namespace troupe::testing
