#pragma once

#include <cstdint>

namespace troupe::internal {

/// What a data-plane frame carries.
enum class FrameType : uint8_t {
  hello = 1,    ///< first frame on a new data connection: the sender's rank and cluster token hash
  announce = 2, ///< a worker started collective (group, run, seq): payload = its fingerprint
  data = 3,     ///< algorithm bytes of collective (group, run, seq), pack `pack`, tag `tag`
  abort = 4,    ///< the sender failed collective (group, run, seq): payload = the reason
  run_done = 5, ///< the sender's replicas returned from run `run` after `seq` collectives; payload = failure text
  bye = 6,      ///< the sender shuts down normally: what follows is its exit, not a failure
};

/// The fixed 40-byte header in front of every data-plane frame (then `size`
/// payload bytes). Both ends must share endianness, as for tensors.
struct PeerFrameHeader {
  static constexpr uint32_t magic_value = 0x46505254; // "TRPF"

  uint32_t magic = magic_value;
  FrameType type = FrameType::data;
  uint8_t reserved[3] = {0, 0, 0};
  uint32_t pack = 0;
  uint32_t tag = 0;
  uint64_t group = 0;
  uint64_t run = 0;
  uint32_t seq = 0;
  uint32_t size = 0;
};
static_assert(sizeof(PeerFrameHeader) == 40);

} // namespace troupe::internal
