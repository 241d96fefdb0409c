#pragma once

#include <cstdint>
#include <string>

#include <caf/expected.hpp>
#include <caf/timespan.hpp>

#include <troupe/net/bootstrap/node_actor_handle.hpp>

namespace caf {
class actor_system;
} // namespace caf

namespace troupe::internal {

/// The actor published at host:port (a task's node actor), reached within
/// `timeout`: a bounded TCP connect (dial_tcp), then CAF's BASP handshake
/// through the middleman's BASP broker, waited for no longer than what is
/// left of `timeout`.
///
/// Used instead of middleman::remote_actor, which connects with a blocking
/// connect() inside the middleman actor: a port whose listen queue is full
/// (a process that accepted once and went silent) drops the SYNs, and the
/// kernel retries them for about two minutes, during which the middleman
/// actor answers nothing else and the process cannot exit; its handshake has
/// no deadline either. Blocks the calling (non-actor) thread. A handshake
/// that never comes leaves its connection to the BASP broker, which closes
/// it at a heartbeat tick (CAF's connection timeout). The host name is
/// resolved without a deadline (getaddrinfo): use addresses, or names the
/// resolver answers at once.
[[nodiscard]] caf::expected<NodeActorHandle> dial_node(caf::actor_system& system, const std::string& host,
                                                       uint16_t port, caf::timespan timeout);

} // namespace troupe::internal
