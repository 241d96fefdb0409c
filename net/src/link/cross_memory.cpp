#include <troupe/net/link/cross_memory.hpp>

#include <cerrno>
#include <cstring>
#include <mutex>

#include <poll.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

namespace troupe::internal {

namespace {

std::mutex peers_mutex;
std::map<caf::node_id, int32_t>& peers() {
  static std::map<caf::node_id, int32_t> instance;
  return instance;
}
/// A pidfd per readable pid: it tells whether that very process is still
/// alive, so that a read from a pid the kernel gave to a new process (the
/// peer died meanwhile) is never taken for the peer's bytes.
std::map<int32_t, int>& pidfds() {
  static std::map<int32_t, int> instance;
  return instance;
}

void close_pidfds() {
  for (auto& [pid, fd] : pidfds())
    ::close(fd);
  pidfds().clear();
}

int open_pidfd(int32_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

} // namespace

void CrossMemoryPeers::set(std::map<caf::node_id, int32_t> pids) {
  std::lock_guard<std::mutex> lock(peers_mutex);
  close_pidfds();
  peers().clear();
  for (auto& [node, pid] : pids) {
    // A peer whose process cannot be pinned is not read at all.
    const int fd = open_pidfd(pid);
    if (fd < 0)
      continue;
    pidfds()[pid] = fd;
    peers()[node] = pid;
  }
}

void CrossMemoryPeers::clear() {
  std::lock_guard<std::mutex> lock(peers_mutex);
  close_pidfds();
  peers().clear();
}

std::optional<int32_t> CrossMemoryPeers::pid_of(const caf::node_id& node) {
  std::lock_guard<std::mutex> lock(peers_mutex);
  if (auto i = peers().find(node); i != peers().end())
    return i->second;
  return std::nullopt;
}

std::string read_cross_memory(int32_t pid, uint64_t address, void* out, std::size_t bytes) {
  auto* dst = static_cast<char*>(out);
  std::size_t done = 0;
  // The kernel may copy less than asked (at most about 2 GiB per call).
  while (done < bytes) {
    iovec local{dst + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address + done)), bytes - done};
    const auto n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0)
      return "process_vm_readv of " + std::to_string(bytes) + " bytes from pid " + std::to_string(pid)
             + " failed: " + std::strerror(errno);
    if (n == 0)
      return "process_vm_readv read " + std::to_string(done) + " of " + std::to_string(bytes) + " bytes from pid "
             + std::to_string(pid);
    done += static_cast<std::size_t>(n);
  }
  // Still the same process after the read: its pid cannot have been reused
  // while it lived. (Its own pid, which tests read, needs no check.)
  if (pid != ::getpid()) {
    std::lock_guard<std::mutex> lock(peers_mutex);
    auto fd = pidfds().find(pid);
    if (fd == pidfds().end())
      return "pid " + std::to_string(pid) + " is no member this process may read";
    pollfd p{fd->second, POLLIN, 0};
    if (::poll(&p, 1, 0) != 0)
      return "the process with pid " + std::to_string(pid) + " ended while its bytes were read";
  }
  return {};
}

bool cross_memory_attach_works() {
  int source = 42;
  int target = 0;
  return read_cross_memory(::getpid(), reinterpret_cast<uintptr_t>(&source), &target, sizeof target).empty()
         && target == 42;
}

} // namespace troupe::internal
