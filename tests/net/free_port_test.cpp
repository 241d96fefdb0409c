// bind_free_port: ports for processes that bind them later come from below
// the kernel's ephemeral range, so no outgoing connection takes them.

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <troupe/net/free_port.hpp>

using troupe::internal::bind_free_port;

TEST_CASE("bind_free_port binds distinct free ports below the ephemeral range", "[net]") {
  int low = 32768;
  int high = 60999;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  range >> low >> high;
  std::set<uint16_t> ports;
  std::vector<int> sockets;
  for (int i = 0; i < 8; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockets.push_back(fd);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const uint16_t port = bind_free_port(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    REQUIRE(port != 0);
    if (low - 1 - 10000 >= 1000)
      CHECK(port < low);
    ports.insert(port);
    // The socket holds the port it returned.
    sockaddr_in bound{};
    socklen_t length = sizeof bound;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0);
    CHECK(ntohs(bound.sin_port) == port);
  }
  CHECK(ports.size() == sockets.size());
  for (int fd : sockets)
    ::close(fd);
}
