#pragma once

// inspect() for messages that must stay in their process. Include it only
// from the headers that define such messages.

#include <type_traits>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>

#include <troupe/core/type_ids.hpp>

namespace troupe {

namespace detail {
/// Error(not_supported) naming the local-only message `name` (out of line:
/// GCC 12 warns falsely on the string concatenation inlined here).
[[nodiscard]] caf::error local_only_error(const char* name);
} // namespace detail

/// The body of inspect() for a message that holds what cannot leave its
/// process (a pointer to a waiting caller's slot, a callback, a fiber): it
/// prints as `name(fields...)`, with the printable `fields` given, and
/// serialising it fails with Error(not_supported) naming it, where CAF would
/// drop an unregistered type silently.
template <class Inspector, class... Fields>
typename Inspector::result_type inspect_local_only(Inspector& f, const char* name, Fields&... fields) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value
                || std::is_base_of<caf::deserializer, Inspector>::value)
    return detail::local_only_error(name);
  else
    return f(caf::meta::type_name(name), fields...);
}

} // namespace troupe
