#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace troupe::internal {

/// The bytes of one frame: a view into a buffer that `owner` keeps alive.
/// Links send them without copying within a process.
struct FrameBytes {
  std::shared_ptr<const void> owner;
  const std::byte* data = nullptr;
  std::size_t size = 0;

  [[nodiscard]] std::span<const std::byte> span() const noexcept { return {data, size}; }
};

} // namespace troupe::internal
