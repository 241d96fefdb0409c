#include <troupe/core/errors.hpp>

namespace troupe {

std::string_view name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::out_of_range: return "out_of_range";
    case Errc::not_found: return "not_found";
    case Errc::failed_precondition: return "failed_precondition";
    case Errc::timeout: return "timeout";
    case Errc::peer_lost: return "peer_lost";
    case Errc::key_mismatch: return "key_mismatch";
    case Errc::shape_mismatch: return "shape_mismatch";
    case Errc::dtype_mismatch: return "dtype_mismatch";
    case Errc::not_supported: return "not_supported";
    case Errc::cancelled: return "cancelled";
    case Errc::data_loss: return "data_loss";
    case Errc::internal: return "internal";
    case Errc::deadlock: return "deadlock";
    case Errc::unknown: return "unknown";
    case Errc::resource_exhausted: return "resource_exhausted";
  }
  // A code from a newer peer, or a corrupted one: still printable.
  return "unknown";
}

Error::Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}

void fail(Errc code, const std::string& message) {
  throw Error(code, message);
}

} // namespace troupe
