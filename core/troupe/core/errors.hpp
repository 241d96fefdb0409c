#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <troupe/core/fwd.hpp>

namespace troupe {

/// Every way a troupe operation fails. Registered as CAF error category "troupe"
/// (see core/caf_types.hpp), so an error raised on one node arrives intact on another.
enum class Errc : unsigned char {
  invalid_argument = 1,  ///< bad input from the caller; the message names it and the fix
  out_of_range,          ///< an index or axis outside its bounds
  not_found,             ///< a device, file or name that does not exist
  failed_precondition,   ///< called in the wrong context (e.g. replica vs cross-replica)
  timeout,               ///< a collective or request passed its deadline
  peer_lost,             ///< a participant died or became unreachable
  key_mismatch,          ///< participants issued different collectives for the same key
  shape_mismatch,        ///< shapes that must agree do not
  dtype_mismatch,        ///< dtypes that must agree do not
  not_supported,         ///< a valid request this configuration does not support
  cancelled,             ///< the operation was abandoned because another one failed
  data_loss,             ///< corrupted or truncated data
  internal,              ///< a broken invariant inside troupe (a bug)
  deadlock,              ///< simulation mode found no runnable actor and no timer
  unknown,               ///< a user function raised something other than troupe::Error
  resource_exhausted,    ///< a device ran out of memory; the message names the device, the request and what is held
};

/// TensorFlow-like name of the code ("invalid_argument").
[[nodiscard]] std::string_view name(Errc code) noexcept;

/// The exception a failed troupe call throws at the user-facing edge. Its
/// message says what happened, where (task, replica, collective) and the fix.
class Error : public std::runtime_error {
public:
  Error(Errc code, const std::string& message);

  [[nodiscard]] Errc code() const noexcept { return code_; }

private:
  Errc code_;
};

/// A collective that failed because of the other participants, a mismatch
/// between them or its deadline, not because of the calling replica's own
/// code. strategy.run rethrows a replica's own exception unchanged and only
/// reports collective failures as a CollectiveError naming every replica.
class CollectiveError : public Error {
public:
  using Error::Error;
};

/// Throws Error(code, message).
[[noreturn]] void fail(Errc code, const std::string& message);

} // namespace troupe
