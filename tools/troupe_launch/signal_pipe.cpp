#include "signal_pipe.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace troupe::launch {

namespace {

volatile sig_atomic_t signal_write_fd = -1;

extern "C" void on_signal(int signal) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signal);
  // A full pipe drops the byte: the loop is already awake then.
  (void)!::write(signal_write_fd, &byte, 1);
  errno = saved_errno;
}

} // namespace

SignalPipe::SignalPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("cannot create the signal pipe: ") + std::strerror(errno));
  read_.reset(fds[0]);
  write_.reset(fds[1]);
  signal_write_fd = fds[1];
  for (int signal : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) {
    struct sigaction action {};
    action.sa_handler = signal == SIGPIPE ? SIG_IGN : on_signal;
    ::sigemptyset(&action.sa_mask);
    // SIGCHLD also when a child stops (SIGSTOP): a stopped task is a frozen one.
    action.sa_flags = 0;
    struct sigaction old {};
    ::sigaction(signal, &action, &old);
    previous_.emplace_back(signal, old);
  }
}

SignalPipe::~SignalPipe() {
  for (const auto& [signal, old] : previous_)
    ::sigaction(signal, &old, nullptr);
  signal_write_fd = -1;
}

std::vector<int> SignalPipe::drain() {
  std::vector<int> signals;
  unsigned char buffer[64];
  ssize_t n;
  while ((n = ::read(read_.get(), buffer, sizeof buffer)) > 0)
    signals.insert(signals.end(), buffer, buffer + n);
  return signals;
}

} // namespace troupe::launch
