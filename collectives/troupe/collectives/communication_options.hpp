#pragma once

#include <cstdint>

#include <troupe/collectives/fwd.hpp>

namespace troupe {

/// Which collective implementation a strategy uses (tf.distribute.experimental.CommunicationImplementation).
enum class CommunicationImplementation : unsigned char { AUTO, RING, NCCL };

/// Options of a strategy's collectives (tf.distribute.experimental.CommunicationOptions).
struct CommunicationOptions {
  /// Lists of tensors are reduced in packs of at most this many bytes; 0 = one pack.
  int64_t bytes_per_pack = 0;
  /// A collective that has not completed after this long fails on every
  /// participant with Errc::timeout; 0 = the TROUPE_COLLECTIVE_TIMEOUT_SECONDS knob.
  double timeout_seconds = 0;
  CommunicationImplementation implementation = CommunicationImplementation::AUTO;
};

} // namespace troupe
