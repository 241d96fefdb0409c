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
  static void clear();
  /// The pid of the task whose actors live on `node`, when it may be read.
  [[nodiscard]] static std::optional<int32_t> pid_of(const caf::node_id& node);
};

/// Copies `bytes` at `address` in process `pid` to `out`: "" when all were
/// read, else why not (the kernel's refusal, or fewer bytes than asked).
[[nodiscard]] std::string read_cross_memory(int32_t pid, uint64_t address, void* out, std::size_t bytes);

/// Whether this process may read another's memory at all (a container's
/// seccomp profile may forbid process_vm_readv).
[[nodiscard]] bool cross_memory_attach_works();

} // namespace troupe::internal
