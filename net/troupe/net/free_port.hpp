#pragma once

// Picking a port for a process that binds it later (internal: troupe-launch
// and the multi-process tests).

#include <cstdint>

#include <sys/socket.h>

namespace troupe::internal {

/// Binds `fd` to a free port of `address` (whose port is ignored) and returns
/// that port; 0 when no port could be bound (errno says why).
///
/// The port is drawn from below the kernel's ephemeral range
/// (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default) when
/// there is room: the kernel never gives such a port to a connect() as its
/// local end, so a process that binds it after `fd` closes cannot lose it to
/// an outgoing connection opened in between, only to another bind. A port
/// from binding port 0 comes from the ephemeral range, and any process's
/// next connect() may take it (a task of a launched cluster then failed to
/// listen: "tcp socket creation failed"). Falls back to port 0 when the
/// range leaves no room below it.
[[nodiscard]] uint16_t bind_free_port(int fd, sockaddr* address, socklen_t length);

} // namespace troupe::internal
