// The data plane's frames as a peer sends them: a 40-byte FrameHeader, then
// its payload. The header gets the checks the broker makes before it reads
// a payload (magic, version, type, frame_payload_limit); a frame that passes
// has its payload decoded as cross_worker_collectives does (announce, abort,
// run_done). Every refusal must be Error, never a crash.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <troupe/collectives/wire_payloads.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/link/frame_header.hpp>

using namespace troupe;
using namespace troupe::internal;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FrameHeader header;
  if (size < sizeof header)
    return 0;
  std::memcpy(&header, data, sizeof header);
  const auto limit = frame_payload_limit(header.type, uint32_t{64} << 20); // TROUPE_MAX_FRAME_MIB's default
  (void) frame_type_name(header.type);
  if (header.magic != FrameHeader::magic_value || header.version != FrameHeader::current_version || !limit
      || header.size > *limit)
    return 0;
  // The payload is what follows, at most `size` bytes of it (the broker
  // waits for exactly that many; a shorter input stands for a cut connection).
  const std::size_t payload = std::min<std::size_t>(header.size, size - sizeof header);
  FrameBytes bytes{nullptr, reinterpret_cast<const std::byte*>(data + sizeof header), payload};
  try {
    switch (header.type) {
      case FrameType::announce: {
        auto announce = AnnouncePayload::decode(bytes);
        (void) announce.encode();
        break;
      }
      case FrameType::abort: (void) AbortPayload::decode(bytes).encode(); break;
      case FrameType::run_done: (void) RunDonePayload::decode(bytes).encode(); break;
      case FrameType::data:
      case FrameType::bye: break;
    }
  } catch (const Error&) {
  }
  return 0;
}
