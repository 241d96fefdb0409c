#include "support/free_ports.hpp"

#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <troupe/net/free_port.hpp>
#include <unistd.h>

namespace troupe::testing {

LoopbackSocket bind_loopback_socket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Below the ephemeral range, where no outgoing connection takes the port
  // between this probe and the process that binds it.
  const uint16_t port = internal::bind_free_port(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  REQUIRE(port != 0);
  addr.sin_port = htons(port);
  return {fd, addr};
}

std::vector<int> free_ports(int n) {
  std::vector<LoopbackSocket> sockets;
  std::vector<int> ports;
  for (int i = 0; i < n; ++i) {
    sockets.push_back(bind_loopback_socket());
    ports.push_back(sockets.back().port());
  }
  for (const auto& s : sockets)
    ::close(s.fd);
  return ports;
}

} // namespace troupe::testing
