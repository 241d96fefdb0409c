#pragma once

// Parameter-server reads and updates between tasks on one host: the tensor's
// bytes are read straight out of the other process's memory
// (net/link/cross_memory.hpp) instead of travelling inside the CAF message,
// which costs two copies and a socket. Measured with bench/ps_throughput
// --cluster processes (docs/protocol.md, "Parameter servers").

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <caf/node_id.hpp>

#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The pid of the process whose actors live on `node`, when this process may
/// read its memory (ClusterNode decided it from the hellos); nullopt for this
/// process's own actors and for every other host.
[[nodiscard]] std::optional<int32_t> cross_memory_peer(const caf::node_id& node);

/// `value` as a CrossMemoryTensor of this process, when it is worth it: on
/// the host and at least cross_memory_min_bytes; else bytes == 0.
[[nodiscard]] CrossMemoryTensor cross_memory_of(const Tensor& value);

/// Reads `remote` out of process `pid` into a new host tensor `out`: "" or
/// why not. Nothing is allocated unless its dtype and dims describe exactly
/// its byte count and, when `like` is given, equal `like`'s (an update must
/// fit the shard it changes).
[[nodiscard]] std::string take_cross_memory(int32_t pid, const CrossMemoryTensor& remote, const Tensor* like,
                                            Tensor& out);

/// The values a parameter server holds for readers that read them from its
/// memory, until each reader's PsReleaseMsg (or the request timeout).
class ReadLeases {
public:
  /// The most values held at once: past it, readers get the bytes in the
  /// message (memory stays bounded when readers die before releasing).
  static constexpr std::size_t max_held = 256;

  /// Holds `value`; 0 when full.
  [[nodiscard]] uint64_t hold(Tensor value);
  void release(uint64_t lease) { held_.erase(lease); }
  [[nodiscard]] std::size_t size() const noexcept { return held_.size(); }

private:
  std::map<uint64_t, Tensor> held_;
  uint64_t next_ = 0;
};

} // namespace troupe::internal
