#include <troupe/net/free_port.hpp>

#include <cerrno>
#include <fstream>
#include <random>

#include <netinet/in.h>

namespace troupe::internal {

namespace {

/// The lowest port of the kernel's ephemeral range (Linux's default when unknown).
int ephemeral_range_start() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  int high = 0;
  if (in >> low >> high && low > 0 && low <= high)
    return low;
  return 32768;
}

void set_port(sockaddr* address, uint16_t port) {
  if (address->sa_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(port);
  else
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(port);
}

uint16_t bound_port(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0)
    return 0;
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

} // namespace

uint16_t bind_free_port(int fd, sockaddr* address, socklen_t length) {
  // Above the well-known ports and the usual fixed service ports.
  constexpr int first = 10000;
  const int last = ephemeral_range_start() - 1;
  if (last - first >= 1000) {
    std::random_device seed;
    std::mt19937 draw(seed());
    std::uniform_int_distribution<int> port(first, last);
    for (int attempt = 0; attempt < 64; ++attempt) {
      set_port(address, static_cast<uint16_t>(port(draw)));
      if (::bind(fd, address, length) == 0)
        return bound_port(fd);
      if (errno != EADDRINUSE)
        return 0;
    }
  }
  set_port(address, 0);
  if (::bind(fd, address, length) != 0)
    return 0;
  return bound_port(fd);
}

} // namespace troupe::internal
