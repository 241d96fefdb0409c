#include <troupe/net/link/cross_memory.hpp>

#include <troupe/net/bootstrap/cluster_types.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
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

void CrossMemoryPeers::add(const caf::node_id& node, int32_t pid) {
  std::lock_guard<std::mutex> lock(peers_mutex);
  const int fd = open_pidfd(pid);
  if (fd < 0)
    return;
  if (auto old = pidfds().find(pid); old != pidfds().end())
    ::close(old->second);
  pidfds()[pid] = fd;
  peers()[node] = pid;
}

bool may_read_each_other(const HelloMsg& a, const HelloMsg& b) {
  return a.cross_memory && b.cross_memory && a.pid > 0 && b.pid > 0 && !a.shm_domain.empty()
         && a.shm_domain == b.shm_domain;
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

namespace {

// The loan slots: never freed, so a reader may read any of them at any time.
constexpr std::size_t loan_slots = 4096;
std::array<std::atomic<uint64_t>, loan_slots> slots{};
std::atomic<uint64_t> next_generation{1};
std::atomic<std::size_t> next_slot{0};
std::atomic<std::size_t> open_loans{0};

} // namespace

CrossMemoryLoan CrossMemoryLoan::open() {
  // The token names its slot (low 12 bits) and a generation (never 0).
  for (std::size_t tries = 0; tries < loan_slots; ++tries) {
    const auto index = next_slot.fetch_add(1, std::memory_order_relaxed) % loan_slots;
    const uint64_t token = (next_generation.fetch_add(1, std::memory_order_relaxed) << 12) | index;
    uint64_t free = 0;
    if (slots[index].compare_exchange_strong(free, token, std::memory_order_seq_cst)) {
      open_loans.fetch_add(1, std::memory_order_relaxed);
      return {token, reinterpret_cast<uintptr_t>(&slots[index])};
    }
  }
  return {};
}

void CrossMemoryLoan::close(uint64_t token) {
  if (token == 0)
    return;
  uint64_t expected = token;
  if (slots[token % loan_slots].compare_exchange_strong(expected, 0, std::memory_order_seq_cst))
    open_loans.fetch_sub(1, std::memory_order_relaxed);
}

std::size_t CrossMemoryLoan::open_count() {
  return open_loans.load(std::memory_order_relaxed);
}

std::string read_lent_memory(int32_t pid, uint64_t address, void* out, std::size_t bytes, uint64_t slot_address,
                             uint64_t token) {
  if (auto why = read_cross_memory(pid, address, out, bytes); !why.empty())
    return why;
  uint64_t now = 0;
  if (auto why = read_cross_memory(pid, slot_address, &now, sizeof now); !why.empty())
    return "reading the loan's slot: " + why;
  if (now != token)
    return "the sender had taken the value back before it was read (its request had ended)";
  return {};
}

bool cross_memory_attach_works() {
  // Yama: 0 lets a process read any of its user's; 1 and above only its
  // descendants (or none), and the tasks of a cluster are siblings.
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int level = 0;
  if (scope >> level && level != 0)
    return false;
  int source = 42;
  int target = 0;
  return read_cross_memory(::getpid(), reinterpret_cast<uintptr_t>(&source), &target, sizeof target).empty()
         && target == 42;
}

} // namespace troupe::internal
