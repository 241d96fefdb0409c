#pragma once

// Length-checked string and byte fields of messages that cross processes
// (internal; used by the inspect overloads of wire messages).

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/serializer.hpp>

namespace troupe::internal {

/// A string or byte field of a wire message with the most bytes a receiver
/// accepts; its inspect overload checks the length before allocating.
template <class Container>
struct BoundedField {
  Container& data;
  std::size_t limit;
  const char* what; ///< "a closure's arguments", for the error
};

/// `data` as a field of at most `limit` bytes, named `what` in errors.
template <class Container>
BoundedField<Container> bounded(Container& data, std::size_t limit, const char* what) noexcept {
  return {data, limit, what};
}

/// Writes the length, then the bytes in one raw block; an oversized field is
/// Error(data_loss) already here, so the sender learns first.
caf::error save_bounded(caf::serializer& sink, std::string& x, std::size_t limit, const char* what);
caf::error save_bounded(caf::serializer& sink, std::vector<uint8_t>& x, std::size_t limit, const char* what);
/// Reads what save_bounded wrote; a length over `limit` or over the bytes left
/// is Error(data_loss), checked before allocating.
caf::error load_bounded(caf::deserializer& source, std::string& x, std::size_t limit, const char* what);
caf::error load_bounded(caf::deserializer& source, std::vector<uint8_t>& x, std::size_t limit, const char* what);
/// The same for a list of counts; `limit` counts entries, not bytes.
caf::error save_bounded(caf::serializer& sink, std::vector<uint32_t>& x, std::size_t limit, const char* what);
caf::error load_bounded(caf::deserializer& source, std::vector<uint32_t>& x, std::size_t limit, const char* what);

template <class Inspector, class Container>
typename Inspector::result_type inspect(Inspector& f, BoundedField<Container>& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value)
    return save_bounded(f, x.data, x.limit, x.what);
  else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value)
    return load_bounded(f, x.data, x.limit, x.what);
  else
    return f(x.data);
}

} // namespace troupe::internal
