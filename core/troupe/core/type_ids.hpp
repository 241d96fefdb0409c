#pragma once

// CAF glue for the core types: type IDs, the error category and inspect()
// overloads. Include it only from .cpp files that put these types into CAF
// messages; everything else includes core/caf_types.hpp or nothing.

#include <string>
#include <type_traits>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>
#include <caf/type_id.hpp>

#include <troupe/core/device_spec.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>

// -- type IDs -------------------------------------------------------------------

// Later components start their blocks at caf::id_block::troupe_core::end.
CAF_BEGIN_TYPE_ID_BLOCK(troupe_core, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(troupe_core, (troupe::Tensor))
  CAF_ADD_TYPE_ID(troupe_core, (troupe::Shape))
  CAF_ADD_TYPE_ID(troupe_core, (troupe::DeviceSpec))
CAF_END_TYPE_ID_BLOCK(troupe_core)

// -- error category -------------------------------------------------------------

/// `caf::make_error(troupe::Errc::timeout, "what happened")` builds a caf::error of
/// category "troupe"; add_core_types() registers its renderer.
CAF_ERROR_CODE_ENUM(troupe::Errc, "troupe")

namespace troupe {

/// The code's name ("timeout"), for CAF's generic stringification.
[[nodiscard]] std::string to_string(Errc code);

namespace detail {

// The work behind the inspect() overloads below, kept out of line.
caf::error save_tensor(caf::serializer& sink, const Tensor& x);
caf::error load_tensor(caf::deserializer& source, Tensor& x);
caf::error save_shape(caf::serializer& sink, const Shape& x);
caf::error load_shape(caf::deserializer& source, Shape& x);
caf::error save_device_spec(caf::serializer& sink, const DeviceSpec& x);
caf::error load_device_spec(caf::deserializer& source, DeviceSpec& x);

} // namespace detail

// -- inspect overloads (CAF 0.17) -----------------------------------------------

/// Serialises a Tensor as a validity flag, its dtype, dims, device (canonical
/// string) and then all its bytes in one raw block; a received Tensor owns a
/// fresh host buffer. An empty Tensor stays empty. Raw bytes assume that both
/// ends share the same endianness.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tensor& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value)
    return detail::save_tensor(f, x);
  else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value)
    return detail::load_tensor(f, x);
  else // CAF's stringification picks to_string(const Tensor&) first; this is the fallback
    return f(caf::meta::type_name("troupe::Tensor"), to_string(x));
}

/// Serialises a Shape as its dims.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Shape& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value)
    return detail::save_shape(f, x);
  else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value)
    return detail::load_shape(f, x);
  else
    return f(caf::meta::type_name("troupe::Shape"), x.dims());
}

/// Serialises a DeviceSpec as its canonical string.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DeviceSpec& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value)
    return detail::save_device_spec(f, x);
  else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value)
    return detail::load_device_spec(f, x);
  else
    return f(caf::meta::type_name("troupe::DeviceSpec"), x.to_string());
}

} // namespace troupe
