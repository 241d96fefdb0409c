#include <troupe/core/caf_types.hpp>

#include <cstdint>
#include <limits>
#include <new>
#include <optional>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/message.hpp>

#include <troupe/core/type_ids.hpp>

namespace troupe {

namespace {

caf::error data_loss(const std::string& what) {
  return caf::make_error(Errc::data_loss, "cannot deserialize " + what);
}

/// "troupe(timeout)", or "troupe(timeout): <text>" when the context is the
/// usual single message string.
std::string render_error(uint8_t code, caf::atom_value, const caf::message& context) {
  std::string out = "troupe(";
  out += name(static_cast<Errc>(code));
  out += ')';
  if (context.empty())
    return out;
  if (context.match_elements<std::string>())
    return out + ": " + context.get_as<std::string>(0);
  return out + ": " + to_string(context);
}

/// Element count of `dims`, or nullopt when a dim is negative or the product overflows.
// The element count of `dims` as Shape::num_elements() computes it (in
// int64_t), or nullopt for a negative dim or a count past int64_t.
std::optional<std::size_t> checked_num_elements(const std::vector<int64_t>& dims) {
  bool empty = false;
  for (auto d : dims) {
    if (d < 0)
      return std::nullopt;
    empty = empty || d == 0;
  }
  if (empty) // whatever the other dims: Shape::num_elements() returns 0 too
    return 0;
  int64_t n = 1;
  for (auto d : dims) {
    if (n > std::numeric_limits<int64_t>::max() / d)
      return std::nullopt;
    n *= d;
  }
  return static_cast<std::size_t>(n);
}

} // namespace

void add_core_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe_core>();
  cfg.add_error_category(caf::atom("troupe"), render_error);
}

std::string to_string(Errc code) {
  return std::string(name(code));
}

namespace detail {

// -- Tensor ---------------------------------------------------------------------

caf::error save_tensor(caf::serializer& sink, const Tensor& x) {
  uint8_t valid = x.valid() ? 1 : 0;
  if (auto err = sink(valid))
    return err;
  if (!x.valid())
    return caf::none;
  if (!x.on_host())
    return caf::make_error(Errc::not_supported, "a Tensor in " + x.device().short_name()
                                                  + " memory cannot be sent to another process; send "
                                                    "t.to(\"CPU:0\") instead");
  auto dtype = static_cast<uint8_t>(x.dtype());
  auto dims = x.shape().dims();
  auto device = x.device().to_string();
  if (auto err = sink(dtype, dims, device))
    return err;
  auto nbytes = x.nbytes();
  if (auto err = sink.begin_sequence(nbytes))
    return err;
  // One raw block: element-wise serialisation is about 8x slower (CAF-NOTES §1).
  if (nbytes > 0)
    if (auto err = sink.apply_raw(nbytes, const_cast<std::byte*>(x.raw_data())))
      return err;
  return sink.end_sequence();
}

caf::error load_tensor(caf::deserializer& source, Tensor& x) {
  uint8_t valid = 0;
  if (auto err = source(valid))
    return err;
  if (valid == 0) {
    x = Tensor{};
    return caf::none;
  }
  if (valid != 1)
    return data_loss("a Tensor: bad validity flag " + std::to_string(valid));
  uint8_t dtype_code = 0;
  std::vector<int64_t> dims;
  std::string device;
  if (auto err = source(dtype_code, dims, device))
    return err;
  if (dtype_code > static_cast<uint8_t>(last_dtype))
    return data_loss("a Tensor: unknown dtype code " + std::to_string(dtype_code));
  const auto dtype = static_cast<DType>(dtype_code);
  auto count = checked_num_elements(dims);
  if (!count || *count > std::numeric_limits<std::size_t>::max() / size_of(dtype))
    return data_loss("a Tensor: invalid shape " + Shape{dims}.to_string());
  const std::size_t nbytes = *count * size_of(dtype);
  std::size_t seq_size = 0;
  if (auto err = source.begin_sequence(seq_size))
    return err;
  // CAF 0.17 writes sequence sizes as 32 bits, so compare modulo 2^32; the
  // real size follows from dtype and dims.
  if (static_cast<uint32_t>(seq_size) != static_cast<uint32_t>(nbytes))
    return data_loss("a Tensor of shape " + Shape{dims}.to_string() + ": expected " +
                     std::to_string(nbytes) + " bytes, the sender wrote " +
                     std::to_string(seq_size));
  // Do not allocate a huge buffer for a truncated or corrupt message.
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source))
    if (binary->remaining() < nbytes)
      return data_loss("a Tensor: it needs " + std::to_string(nbytes) + " bytes but only " +
                       std::to_string(binary->remaining()) + " remain");
  Tensor result;
  try {
    result = Tensor::empty(Shape{std::move(dims)}, dtype, DeviceSpec::from_string(device));
  } catch (const Error& e) {
    return data_loss(std::string("a Tensor: ") + e.what());
  } catch (const std::bad_alloc&) {
    return data_loss("a Tensor: out of memory for " + std::to_string(nbytes) + " bytes");
  }
  if (nbytes > 0)
    if (auto err = source.apply_raw(nbytes, result.mutable_raw_data()))
      return err;
  if (auto err = source.end_sequence())
    return err;
  x = std::move(result);
  return caf::none;
}

// -- Shape ----------------------------------------------------------------------

caf::error save_shape(caf::serializer& sink, const Shape& x) {
  auto dims = x.dims();
  return sink(dims);
}

caf::error load_shape(caf::deserializer& source, Shape& x) {
  std::vector<int64_t> dims;
  if (auto err = source(dims))
    return err;
  if (!checked_num_elements(dims))
    return data_loss("a Shape: invalid dims " + Shape{dims}.to_string());
  x = Shape{std::move(dims)};
  return caf::none;
}

// -- DeviceSpec -----------------------------------------------------------------

caf::error save_device_spec(caf::serializer& sink, const DeviceSpec& x) {
  auto text = x.to_string();
  return sink(text);
}

caf::error load_device_spec(caf::deserializer& source, DeviceSpec& x) {
  std::string text;
  if (auto err = source(text))
    return err;
  try {
    x = DeviceSpec::from_string(text);
  } catch (const Error& e) {
    return data_loss(std::string("a DeviceSpec: ") + e.what());
  }
  return caf::none;
}

} // namespace detail

} // namespace troupe
