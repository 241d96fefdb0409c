#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace troupe::internal {

/// What a data-plane frame carries. Every payload layout is named here; the
/// header's fields mean the same in every frame type.
enum class FrameType : uint8_t {
  // 1: the hello of protocol versions before 5; a connection now opens with
  // net/auth's handshake instead, before any frame.
  announce = 2, ///< a worker started collective (group, run, seq); payload: its fingerprint and replica count
  data = 3,     ///< algorithm bytes of collective (group, run, seq), pack `pack`, tag `tag`
  abort = 4,    ///< the sender failed collective (group, run, seq); payload: error code, then the reason
  run_done = 5, ///< the sender's replicas returned from run `run`; payload: collectives issued, then failure text
  bye = 6,      ///< the sender shuts down normally: what follows is its exit, not a failure
};

/// The fixed 40-byte header in front of every data-plane frame (then `size`
/// payload bytes). Both ends must share endianness, as for tensors.
struct FrameHeader {
  static constexpr uint32_t magic_value = 0x46505254; // "TRPF"
  /// Raised whenever a field or payload changes meaning; a peer that speaks
  /// another version is refused at its first frame, naming both versions.
  /// 3: the agreement group (id 0) and cluster strategy ids by position.
  /// 4: collective kind 4 (reduce_scatter) in announced fingerprints.
  /// 5: no hello frame: connections open with net/auth's handshake.
  static constexpr uint8_t current_version = 5;

  uint32_t magic = magic_value;
  uint8_t version = current_version;
  FrameType type = FrameType::data;
  uint8_t reserved[2] = {0, 0};
  uint32_t pack = 0;  ///< data: which pack of the collective's tensors
  uint32_t tag = 0;   ///< data: the algorithm's own tag within the pack
  uint64_t group = 0; ///< the collective group (one per strategy)
  uint64_t run = 0;   ///< the strategy.run the collective belongs to
  uint32_t seq = 0;   ///< the collective's number within its run
  uint32_t size = 0;  ///< payload bytes that follow
};
static_assert(sizeof(FrameHeader) == 40);

/// The most payload bytes an announce, abort or run_done frame carries: a
/// fingerprint or a reason, never tensor bytes. The data plane refuses a
/// header that claims more before it allocates anything.
inline constexpr uint32_t max_control_payload_bytes = uint32_t{64} << 20;

/// How many payload bytes a frame of `type` may carry; nullopt for a type
/// this protocol version does not have. A data frame carries at most
/// `max_data_bytes` (TROUPE_MAX_FRAME_MIB): collectives send larger blocks
/// of a tensor in pieces.
[[nodiscard]] constexpr std::optional<uint32_t> frame_payload_limit(FrameType type, uint32_t max_data_bytes) {
  switch (type) {
    case FrameType::announce:
    case FrameType::abort:
    case FrameType::run_done: return max_control_payload_bytes;
    case FrameType::data: return max_data_bytes;
    case FrameType::bye: return 0;
  }
  return std::nullopt;
}

/// "announce", "data", ...: how errors name a frame type.
[[nodiscard]] constexpr std::string_view frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::announce: return "announce";
    case FrameType::data: return "data";
    case FrameType::abort: return "abort";
    case FrameType::run_done: return "run_done";
    case FrameType::bye: return "bye";
  }
  return "unknown";
}

} // namespace troupe::internal
