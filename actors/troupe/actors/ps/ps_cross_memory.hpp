#pragma once

// Parameter-server reads and updates between tasks on one host: the tensor's
// bytes are read straight out of the other process's memory
// (net/link/cross_memory.hpp) instead of travelling inside the CAF message,
// which costs two copies and a socket. Measured with bench/ps_throughput
// --cluster processes (docs/protocol.md, "Parameter servers").

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <caf/node_id.hpp>

#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/net/link/cross_memory.hpp>

namespace troupe::internal {

/// `value` as a CrossMemoryTensor of this process, when it is worth it: on
/// the host and at least cross_memory_min_bytes; else bytes == 0.
[[nodiscard]] CrossMemoryTensor cross_memory_of(const Tensor& value);

/// Reads `remote` out of process `pid` into a new host tensor `out`: "" or
/// why not. Nothing is allocated unless its dtype and dims describe exactly
/// its byte count and, when `like` is given, equal `like`'s (an update must
/// fit the shard it changes).
[[nodiscard]] std::string take_cross_memory(int32_t pid, const CrossMemoryTensor& remote, const Tensor* like,
                                            Tensor& out);

/// Lends `value` for a reader in another process: fills `remote` (address,
/// size, and an open CrossMemoryLoan) and returns what keeps the value and
/// the loan alive; dropping it closes the loan, then frees the value. Null
/// (and `remote` empty: send the bytes in the message) when the value is
/// small, not on the host, or no loan slot is free.
[[nodiscard]] std::shared_ptr<const void> lend(const Tensor& value, CrossMemoryTensor& remote);

/// The values a parameter server lends to readers that read them from its
/// memory, until each reader's PsReleaseMsg (or twice the request timeout).
/// Each is a CrossMemoryLoan: a reader that comes after the release gets an
/// error, never the memory's next contents.
class ReadLeases {
public:
  /// The most values held at once: past it, readers get the bytes in the
  /// message (memory stays bounded when readers die before releasing).
  static constexpr std::size_t max_held = 256;

  ReadLeases() = default;
  ReadLeases(const ReadLeases&) = delete;
  ReadLeases& operator=(const ReadLeases&) = delete;
  ~ReadLeases();

  /// Holds `value` under a new loan; token 0 when full.
  [[nodiscard]] CrossMemoryLoan hold(Tensor value);
  /// Closes the loan, then drops the value (a token held no more: nothing).
  void release(uint64_t lease);
  [[nodiscard]] std::size_t size() const noexcept { return held_.size(); }

private:
  std::map<uint64_t, Tensor> held_;
};

} // namespace troupe::internal
