#pragma once

#include <caf/error.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

/// The Errc of a failed request's error: troupe's own code when the receiver
/// answered with a troupe error, timeout for a request past its deadline,
/// peer_lost otherwise (the receiver exited or is unreachable).
[[nodiscard]] Errc request_errc(const caf::error& err) noexcept;

} // namespace troupe::internal
