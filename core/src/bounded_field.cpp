#include <troupe/core/bounded_field.hpp>

#include <caf/binary_deserializer.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {

caf::error too_long(const char* what, std::size_t size, std::size_t limit) {
  return caf::make_error(Errc::data_loss, std::string{what} + " of " + std::to_string(size) +
                                            " bytes exceeds the limit of " + std::to_string(limit) + " bytes");
}

template <class Container>
caf::error save_bytes(caf::serializer& sink, Container& x, std::size_t limit, const char* what) {
  auto size = x.size();
  if (size > limit)
    return too_long(what, size, limit);
  if (auto err = sink.begin_sequence(size))
    return err;
  if (size > 0)
    if (auto err = sink.apply_raw(size, x.data()))
      return err;
  return sink.end_sequence();
}

template <class Container>
caf::error load_bytes(caf::deserializer& source, Container& x, std::size_t limit, const char* what) {
  std::size_t size = 0;
  if (auto err = source.begin_sequence(size))
    return err;
  // Checked before allocating: a corrupt length must not become a huge buffer.
  if (size > limit)
    return too_long(what, size, limit);
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source))
    if (binary->remaining() < size)
      return caf::make_error(Errc::data_loss, "cannot deserialize " + std::string{what} + ": it needs " +
                                                std::to_string(size) + " bytes but only " +
                                                std::to_string(binary->remaining()) + " remain");
  Container result(size, typename Container::value_type{});
  if (size > 0)
    if (auto err = source.apply_raw(size, result.data()))
      return err;
  if (auto err = source.end_sequence())
    return err;
  x = std::move(result);
  return caf::none;
}

} // namespace

caf::error save_bounded(caf::serializer& sink, std::string& x, std::size_t limit, const char* what) {
  return save_bytes(sink, x, limit, what);
}

caf::error save_bounded(caf::serializer& sink, std::vector<uint8_t>& x, std::size_t limit, const char* what) {
  return save_bytes(sink, x, limit, what);
}

caf::error load_bounded(caf::deserializer& source, std::string& x, std::size_t limit, const char* what) {
  return load_bytes(source, x, limit, what);
}

caf::error load_bounded(caf::deserializer& source, std::vector<uint8_t>& x, std::size_t limit, const char* what) {
  return load_bytes(source, x, limit, what);
}

caf::error save_bounded(caf::serializer& sink, std::vector<uint32_t>& x, std::size_t limit, const char* what) {
  if (x.size() > limit)
    return caf::make_error(Errc::data_loss, std::string{what} + " of " + std::to_string(x.size()) +
                                              " entries exceeds the limit of " + std::to_string(limit) + " entries");
  auto size = x.size();
  if (auto err = sink.begin_sequence(size))
    return err;
  for (auto& count : x)
    if (auto err = sink(count))
      return err;
  return sink.end_sequence();
}

caf::error load_bounded(caf::deserializer& source, std::vector<uint32_t>& x, std::size_t limit, const char* what) {
  std::size_t size = 0;
  if (auto err = source.begin_sequence(size))
    return err;
  // Checked before allocating, as for bytes.
  if (size > limit)
    return caf::make_error(Errc::data_loss, "cannot deserialize " + std::string{what} + ": " + std::to_string(size) +
                                              " entries exceed the limit of " + std::to_string(limit) + " entries");
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source))
    if (binary->remaining() / sizeof(uint32_t) < size)
      return caf::make_error(Errc::data_loss, "cannot deserialize " + std::string{what} + ": " +
                                                std::to_string(size) + " entries need more than the " +
                                                std::to_string(binary->remaining()) + " bytes that remain");
  std::vector<uint32_t> result(size);
  for (auto& count : result)
    if (auto err = source(count))
      return err;
  if (auto err = source.end_sequence())
    return err;
  x = std::move(result);
  return caf::none;
}

} // namespace troupe::internal
