#pragma once

// Bulk bytes between tasks on one host without a copy through a socket: one
// process reads a tensor straight out of another's memory
// (process_vm_readv, the mechanism of UCX's cma transport), as
// parameter-server reads and updates do. Which processes may be read is
// decided from the authenticated control plane only (their hellos: same boot,
// namespaces and user), never from a message. Internal: not installed.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <caf/node_id.hpp>

namespace troupe::internal {

/// The other tasks of this process's cluster whose memory it may read, by
/// the CAF node their actors live on: their pids. Set by ClusterNode once
/// the cluster formed (empty with TROUPE_TRANSPORT=tcp or TROUPE_TLS=1, or
/// where the kernel refuses process_vm_readv), cleared when it ends.
/// Thread-safe.
class CrossMemoryPeers {
public:
  static void set(std::map<caf::node_id, int32_t> pids);
  /// One more (a restarted member's new process).
  static void add(const caf::node_id& node, int32_t pid);
  static void clear();
  /// The pid of the task whose actors live on `node`, when it may be read.
  [[nodiscard]] static std::optional<int32_t> pid_of(const caf::node_id& node);
};

/// A value this process lends to a reader in another process: while it is
/// open, its slot (at `slot_address`, in a table that is never freed) holds
/// `token`. Closing sets the slot to 0 before the value may be freed, so a
/// reader that finds the token still there after copying knows the bytes it
/// copied were the lent ones (read_lent_memory), and one that comes too late
/// gets an error instead of reused memory. Thread-safe.
struct CrossMemoryLoan {
  uint64_t token = 0; ///< 0: no slot was free (send the bytes in the message)
  uint64_t slot_address = 0;

  /// Opens a loan (token 0 when all slots are taken).
  [[nodiscard]] static CrossMemoryLoan open();
  /// Closes loan `token`: its slot no longer vouches for the value.
  static void close(uint64_t token);
  /// Loans open now (tests).
  [[nodiscard]] static std::size_t open_count();
};

/// read_cross_memory, then a check that loan `token` was still open in `pid`
/// after the copy (its slot at `slot_address`): "" or why not.
[[nodiscard]] std::string read_lent_memory(int32_t pid, uint64_t address, void* out, std::size_t bytes,
                                           uint64_t slot_address, uint64_t token);

/// Copies `bytes` at `address` in process `pid` to `out`: "" when all were
/// read, else why not (the kernel's refusal, or fewer bytes than asked).
[[nodiscard]] std::string read_cross_memory(int32_t pid, uint64_t address, void* out, std::size_t bytes);

/// Whether this process may read another's memory at all: a container's
/// seccomp profile may forbid process_vm_readv, and Yama's ptrace_scope >= 1
/// (Ubuntu's default) forbids it between sibling processes, as UCX's cma
/// transport also checks.
[[nodiscard]] bool cross_memory_attach_works();

struct HelloMsg;

/// Whether the tasks of hellos `a` and `b` read each other's memory: both
/// offer it (HelloMsg::cross_memory), same shared-memory domain, real pids.
[[nodiscard]] bool may_read_each_other(const HelloMsg& a, const HelloMsg& b);

} // namespace troupe::internal
