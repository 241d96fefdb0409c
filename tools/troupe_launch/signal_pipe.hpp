#pragma once

#include <csignal>
#include <utility>
#include <vector>

#include "unique_fd.hpp"

namespace troupe::launch {

/// Turns SIGINT, SIGTERM and SIGCHLD (a child exited, stopped or continued) into bytes on a pipe that a poll loop
/// waits on (the self-pipe trick), and ignores SIGPIPE so that a closed
/// output does not kill the launcher. At most one instance at a time; the
/// destructor restores the previous dispositions.
class SignalPipe {
public:
  SignalPipe();
  ~SignalPipe();

  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  /// The read end: readable when a signal arrived.
  [[nodiscard]] int fd() const noexcept { return read_.get(); }

  /// The signals that arrived since the last call, in order.
  [[nodiscard]] std::vector<int> drain();

private:
  UniqueFd read_;
  UniqueFd write_;
  std::vector<std::pair<int, struct sigaction>> previous_;
};

} // namespace troupe::launch
