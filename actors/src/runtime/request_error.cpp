#include <troupe/actors/runtime/request_error.hpp>

#include <caf/atom.hpp>
#include <caf/sec.hpp>

namespace troupe::internal {

Errc request_errc(const caf::error& err) noexcept {
  if (err.category() == caf::atom("troupe"))
    return static_cast<Errc>(err.code());
  if (err == caf::sec::request_timeout)
    return Errc::timeout;
  return Errc::peer_lost;
}

} // namespace troupe::internal
