#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "unique_fd.hpp"

namespace troupe::launch {

/// Free TCP ports on one host, held by bound sockets until release().
///
/// Each port comes from binding a socket to a free port below the kernel's
/// ephemeral range (internal::bind_free_port), which no outgoing connection
/// takes as its local end. All sockets stay open until every port is picked,
/// so the ports are distinct; release() closes them just before the tasks
/// start, which leaves a short window in which only another bind could take
/// a port.
class PortPicker {
public:
  /// Picks `count` ports on `host` (a name or address of this machine).
  /// Throws std::runtime_error naming the host when it cannot bind there.
  PortPicker(const std::string& host, size_t count);

  /// The picked ports, in order.
  [[nodiscard]] const std::vector<uint16_t>& ports() const noexcept { return ports_; }

  /// Closes the probe sockets; ports() stays valid.
  void release() noexcept { sockets_.clear(); }

private:
  std::vector<UniqueFd> sockets_;
  std::vector<uint16_t> ports_;
};

} // namespace troupe::launch
