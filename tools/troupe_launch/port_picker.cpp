#include "port_picker.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <troupe/net/free_port.hpp>

namespace troupe::launch {

namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const noexcept { ::freeaddrinfo(info); }
};

// Binds a new socket to a free port on one of `candidates` (below the
// ephemeral range: internal::bind_free_port); returns the socket and its port.
std::pair<UniqueFd, uint16_t> bind_any_port(const std::string& host, const addrinfo* candidates) {
  int last_errno = 0;
  for (const addrinfo* ai = candidates; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last_errno = errno;
      continue;
    }
    sockaddr_storage address{};
    std::memcpy(&address, ai->ai_addr, ai->ai_addrlen);
    const uint16_t port = internal::bind_free_port(fd.get(), reinterpret_cast<sockaddr*>(&address), ai->ai_addrlen);
    if (port == 0) {
      last_errno = errno;
      continue;
    }
    return {std::move(fd), port};
  }
  throw std::runtime_error(
    "cannot pick a free port on --host " + host + ": " + std::strerror(last_errno)
    + "; --host must be an address of this machine, since every task starts here");
}

} // namespace

PortPicker::PortPicker(const std::string& host, size_t count) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* raw = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), "0", &hints, &raw); rc != 0)
    throw std::runtime_error("cannot resolve --host " + host + ": " + ::gai_strerror(rc)
                             + "; pass an address of this machine such as 127.0.0.1");
  std::unique_ptr<addrinfo, AddrInfoDeleter> candidates(raw);
  for (size_t i = 0; i < count; ++i) {
    auto [fd, port] = bind_any_port(host, candidates.get());
    sockets_.push_back(std::move(fd));
    ports_.push_back(port);
  }
}

} // namespace troupe::launch
