#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <caf/timespan.hpp>

#include <troupe/net/auth/cluster_auth.hpp>
#include <troupe/net/bootstrap/node_actor_handle.hpp>
#include <troupe/net/tls/tls_context.hpp>

namespace caf {
class actor_system;
} // namespace caf

namespace troupe::internal {

/// This process, as it presents itself to the tasks it dials.
struct NodeDialer {
  auth::Key key{}; ///< the control plane's key
  uint64_t spec_fingerprint = 0;
  int rank = -1;   ///< its member index
  int pid = 0;
  /// TROUPE_TLS=1: after troupe's handshake, BASP's bytes travel through TLS.
  std::shared_ptr<TlsContext> tls;
};

/// The task to dial: its member index and name, and its address.
struct NodeDialTarget {
  int rank = -1;
  std::string task; ///< "worker:1"
  std::string host;
  uint16_t port = 0;
};

/// The node actor of `target`, reached within `timeout`: a bounded TCP
/// connect (dial_tcp), troupe's handshake (net/auth: both sides prove the
/// cluster token before CAF reads a byte; ControlPlaneGate is the other
/// side), then CAF's BASP handshake through the middleman's BASP broker,
/// waited for no longer than what is left of `timeout`.
///
/// Errors: a troupe error when the peer refused this process (code
/// NodeActor::other_cluster_refusal when for another token or spec,
/// invalid_argument otherwise, or when the peer could not prove the token);
/// a CAF error when it was not reached (try again).
///
/// Used instead of middleman::remote_actor, which connects with a blocking
/// connect() inside the middleman actor: a port whose listen queue is full
/// (a process that accepted once and went silent) drops the SYNs, and the
/// kernel retries them for about two minutes, during which the middleman
/// actor answers nothing else and the process cannot exit; its handshake has
/// no deadline either. Blocks the calling (non-actor) thread. A BASP
/// handshake that never comes leaves its connection to the BASP broker,
/// which closes it at a heartbeat tick (CAF's connection timeout). The host
/// name is resolved without a deadline (getaddrinfo): use addresses, or
/// names the resolver answers at once.
[[nodiscard]] caf::expected<NodeActorHandle> dial_node(caf::actor_system& system, const NodeDialer& me,
                                                       const NodeDialTarget& target, caf::timespan timeout);

} // namespace troupe::internal
