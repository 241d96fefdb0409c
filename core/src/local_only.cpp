#include <troupe/core/local_only.hpp>

#include <string>

namespace troupe::detail {

caf::error local_only_error(const char* name) {
  return caf::make_error(Errc::not_supported, std::string(name) + " holds pointers into its process and cannot be "
                                                "sent to another; send it to a local actor only");
}

} // namespace troupe::detail
