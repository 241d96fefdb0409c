#pragma once

#include <cstdint>
#include <vector>

#include <netinet/in.h>

namespace troupe::testing {

/// A TCP socket bound to 127.0.0.1 at a port the kernel picked.
struct LoopbackSocket {
  int fd;
  sockaddr_in address;
  [[nodiscard]] uint16_t port() const { return ntohs(address.sin_port); }
};

/// Binds a new socket to 127.0.0.1, port 0; the caller closes it.
LoopbackSocket bind_loopback_socket();

/// `n` distinct TCP ports on 127.0.0.1 that were free a moment ago: all
/// sockets stay bound until every port is picked (so no port comes twice),
/// then close. Another process may take one before the test binds it; the
/// tests accept that small race.
std::vector<int> free_ports(int n);

} // namespace troupe::testing
