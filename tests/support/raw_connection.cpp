#include "support/raw_connection.hpp"

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace troupe::testing {

RawConnection::RawConnection(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  REQUIRE(fd_ >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
}

RawConnection::~RawConnection() {
  close();
}

void RawConnection::send_bytes(const void* data, std::size_t n) {
  REQUIRE(::send(fd_, data, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n));
}

void RawConnection::close() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

std::optional<std::vector<char>> RawConnection::read_until_closed(std::chrono::steady_clock::time_point deadline) {
  std::vector<char> got;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0)
      continue;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0)
      return got;
    got.insert(got.end(), buf, buf + n);
  }
  return std::nullopt;
}

} // namespace troupe::testing
