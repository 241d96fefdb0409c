#include <troupe/collectives/wire_payloads.hpp>

#include <cstring>

namespace troupe::internal {

namespace {

/// A fixed-size field followed by text: the layout of abort and run_done.
template <class Field>
FrameBytes field_and_text(Field field, const std::string& text) {
  auto bytes = std::make_shared<std::vector<std::byte>>(sizeof field + text.size());
  std::memcpy(bytes->data(), &field, sizeof field);
  if (!text.empty())
    std::memcpy(bytes->data() + sizeof field, text.data(), text.size());
  return frame_of(std::move(bytes));
}

template <class Field>
std::pair<Field, std::string> read_field_and_text(const FrameBytes& bytes, const char* frame) {
  if (bytes.size < sizeof(Field))
    fail(Errc::data_loss, std::string("a truncated ") + frame + " frame of " + std::to_string(bytes.size) + " bytes");
  Field field{};
  std::memcpy(&field, bytes.data, sizeof field);
  return {field, std::string(reinterpret_cast<const char*>(bytes.data) + sizeof field, bytes.size - sizeof field)};
}

} // namespace

FrameBytes frame_of(std::shared_ptr<std::vector<std::byte>> bytes) {
  const auto* data = bytes->data();
  const auto size = bytes->size();
  return FrameBytes{std::move(bytes), data, size};
}

FrameBytes AnnouncePayload::encode() const {
  // [fingerprint][communicator][u32 communicator bytes][i64 local replicas]:
  // the fixed fields last, so the fingerprint is what is left.
  auto bytes = std::make_shared<std::vector<std::byte>>(fingerprint.to_bytes());
  const auto* c = reinterpret_cast<const std::byte*>(communicator.data());
  bytes->insert(bytes->end(), c, c + communicator.size());
  const auto size = static_cast<uint32_t>(communicator.size());
  const auto* s = reinterpret_cast<const std::byte*>(&size);
  bytes->insert(bytes->end(), s, s + sizeof size);
  const auto* p = reinterpret_cast<const std::byte*>(&local_replicas);
  bytes->insert(bytes->end(), p, p + sizeof local_replicas);
  return frame_of(std::move(bytes));
}

AnnouncePayload AnnouncePayload::decode(const FrameBytes& bytes) {
  auto payload = bytes.span();
  constexpr std::size_t fixed = sizeof(int64_t) + sizeof(uint32_t);
  if (payload.size() < fixed)
    fail(Errc::data_loss, "a truncated announce frame of " + std::to_string(payload.size()) + " bytes");
  AnnouncePayload out;
  std::memcpy(&out.local_replicas, payload.data() + payload.size() - sizeof out.local_replicas,
              sizeof out.local_replicas);
  uint32_t size = 0;
  std::memcpy(&size, payload.data() + payload.size() - fixed, sizeof size);
  if (size > max_communicator_bytes || size > payload.size() - fixed)
    fail(Errc::data_loss, "an announce frame names a communicator of " + std::to_string(size)
                            + " bytes, more than the frame's " + std::to_string(payload.size() - fixed)
                            + " or the limit of " + std::to_string(max_communicator_bytes));
  const std::size_t fingerprint_bytes = payload.size() - fixed - size;
  out.communicator.assign(reinterpret_cast<const char*>(payload.data() + fingerprint_bytes), size);
  out.fingerprint = CollectiveFingerprint::from_bytes(payload.first(fingerprint_bytes));
  return out;
}

FrameBytes AbortPayload::encode() const {
  return field_and_text(static_cast<uint32_t>(code), reason);
}

AbortPayload AbortPayload::decode(const FrameBytes& bytes) {
  auto [code, reason] = read_field_and_text<uint32_t>(bytes, "abort");
  const bool known = code > 0 && code <= static_cast<uint32_t>(Errc::unknown);
  return {known ? static_cast<Errc>(code) : Errc::cancelled, std::move(reason)};
}

FrameBytes RunDonePayload::encode() const {
  return field_and_text(issued, failure);
}

RunDonePayload RunDonePayload::decode(const FrameBytes& bytes) {
  auto [issued, failure] = read_field_and_text<uint32_t>(bytes, "run_done");
  return {issued, std::move(failure)};
}

} // namespace troupe::internal
