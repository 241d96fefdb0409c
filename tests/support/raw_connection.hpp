#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace troupe::testing {

/// A blocking TCP connection to 127.0.0.1:port, for a test that plays a
/// task's peer, or a stranger, byte by byte. Closed by the destructor.
class RawConnection {
public:
  /// Connects (a failed connect fails the test).
  explicit RawConnection(uint16_t port);
  struct Adopt {};
  /// Takes a connected socket (one the test accepted).
  RawConnection(Adopt, int connected_fd) noexcept : fd_(connected_fd) {}
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Sends all `n` bytes (a short send fails the test).
  void send_bytes(const void* data, std::size_t n);
  /// Closes this end now.
  void close();
  /// Reads until the peer closes its end or `deadline`: what it sent, or
  /// nullopt when it was still open at the deadline.
  [[nodiscard]] std::optional<std::vector<char>> read_until_closed(std::chrono::steady_clock::time_point deadline);

private:
  int fd_;
};

} // namespace troupe::testing
