#pragma once

#include <csignal>
#include <ctime>

#include <pthread.h>

namespace troupe::internal {

/// Blocks SIGPIPE on this thread for its lifetime and discards one raised
/// meanwhile. OpenSSL writes to sockets with write(): a peer that went away
/// would raise SIGPIPE and end the process. As CAF's OpenSSL module does it,
/// around each call, instead of a process-wide handler.
class SigpipeBlock {
public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
  }
  ~SigpipeBlock() {
    timespec zero{};
    sigtimedwait(&pipe_, nullptr, &zero);
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

private:
  sigset_t pipe_;
  sigset_t saved_;
};

} // namespace troupe::internal
