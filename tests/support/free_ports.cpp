#include "support/free_ports.hpp"

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

namespace troupe::testing {

LoopbackSocket bind_loopback_socket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
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
