#include <troupe/collectives/collective_key.hpp>

namespace troupe {

std::string to_string(const CollectiveKey& key) {
  return "collective #" + std::to_string(key.seq) + " of run " + std::to_string(key.run)
         + " (group " + std::to_string(key.group) + ")";
}

} // namespace troupe
