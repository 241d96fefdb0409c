#include <troupe/net/link/tcp_dial.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace troupe::internal {

namespace {

using Clock = std::chrono::steady_clock;

// One address: a non-blocking connect, then poll until it completes or the deadline passes.
DialResult dial_one(const addrinfo& ai, Clock::time_point deadline) {
  const int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0)
    return {-1, std::strerror(errno)};
  if (::connect(fd, ai.ai_addr, ai.ai_addrlen) == 0)
    return {fd, {}};
  if (errno != EINPROGRESS) {
    const auto error = std::strerror(errno);
    ::close(fd);
    return {-1, error};
  }
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::close(fd);
      return {-1, "no answer (timed out)"};
    }
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      continue;
    int error = 0;
    socklen_t len = sizeof error;
    if (n < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
      error = errno;
    if (error == 0)
      return {fd, {}};
    ::close(fd);
    return {-1, std::strerror(error)};
  }
}

} // namespace

DialResult dial_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return {-1, std::string("cannot resolve the host: ") + ::gai_strerror(rc)};
  DialResult result{-1, "the host has no address"};
  for (auto* ai = found; ai != nullptr && result.fd < 0; ai = ai->ai_next)
    result = dial_one(*ai, deadline);
  ::freeaddrinfo(found);
  return result;
}

} // namespace troupe::internal
