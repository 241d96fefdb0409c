#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace troupe::internal {

/// The outcome of dial_tcp: a connected socket, or why there is none.
struct DialResult {
  int fd = -1;       ///< a connected, non-blocking TCP socket, or -1
  std::string error; ///< when fd is -1: why, e.g. "connection refused"
};

/// Opens a TCP connection to host:port, giving up after `timeout` (a host
/// that drops SYNs would otherwise block for minutes). Blocks the calling
/// thread: call it off the middleman's I/O thread.
[[nodiscard]] DialResult dial_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

} // namespace troupe::internal
