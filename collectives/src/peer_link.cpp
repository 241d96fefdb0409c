#include <troupe/collectives/peer_link.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

void PeerCollective::protocol_error(int rank, int from, uint32_t tag, const std::string& what) const {
  fail(Errc::internal, std::string(name()) + " on rank " + std::to_string(rank) + ": frame " + std::to_string(tag)
                         + " from rank " + std::to_string(from) + " " + what);
}

} // namespace troupe::internal
