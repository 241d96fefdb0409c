#pragma once

// Which transport carries a cluster's data plane (TROUPE_TRANSPORT), decided
// by every task alike from the same hellos: UCX shared memory where it can
// carry every worker, else troupe's TCP broker. Internal: not installed.

#include <string>
#include <vector>

namespace troupe::internal {

/// One data-plane task's offer, from its HelloMsg (this task's own too).
struct TransportOffer {
  std::string task;          ///< "worker:1"
  std::string transport;     ///< its TROUPE_TRANSPORT: tcp, ucx or auto
  bool ucx = false;          ///< it offers a UCX worker
  std::string ucx_error;     ///< why it offers none
  std::string shm_domain;    ///< shared_memory_domain()
};

struct TransportChoice {
  bool ucx = false;
  /// Why this transport, for one log line.
  std::string why;
  /// Non-empty when a task asked for ucx and it cannot carry the cluster:
  /// every task fails naming this.
  std::string error;
};

/// `offers[0]` is any task; all must be the data plane's tasks. Every task
/// that calls this with the same offers gets the same choice.
[[nodiscard]] TransportChoice choose_transport(const std::vector<TransportOffer>& offers);

} // namespace troupe::internal
