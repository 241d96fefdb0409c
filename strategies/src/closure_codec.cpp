#include <troupe/strategies/closure_codec.hpp>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe {

void ClosureWriter::raw(const void* data, std::size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  out_.insert(out_.end(), p, p + size);
}

void ClosureWriter::count(std::size_t n) {
  const auto value = static_cast<uint64_t>(n);
  raw(&value, sizeof value);
}

void ClosureWriter::tensor(const Tensor& t) {
  // Tensor's own wire form (dtype, dims, device, bytes), which its loader bounds.
  std::vector<char> bytes;
  caf::binary_serializer sink(nullptr, bytes);
  if (auto err = detail::save_tensor(sink, t))
    fail(Errc::invalid_argument, "cannot serialize a tensor argument or result: " + caf::to_string(err));
  count(bytes.size());
  raw(bytes.data(), bytes.size());
}

ClosureReader::ClosureReader(const std::vector<uint8_t>& bytes, std::string what)
  : bytes_(bytes), what_(std::move(what)) {
}

void ClosureReader::raw(void* data, std::size_t size) {
  if (size > bytes_.size() - pos_)
    fail(Errc::data_loss, "cannot read " + what_ + ": " + std::to_string(size) + " more bytes were expected but "
                            + std::to_string(bytes_.size() - pos_) + " remain");
  if (size > 0)
    std::memcpy(data, bytes_.data() + pos_, size);
  pos_ += size;
}

std::size_t ClosureReader::count(std::size_t min_element_bytes) {
  uint64_t n = 0;
  raw(&n, sizeof n);
  // Bounded by what remains before the caller allocates for it.
  const std::size_t left = bytes_.size() - pos_;
  if (min_element_bytes > 0 && n > left / min_element_bytes)
    fail(Errc::data_loss, "cannot read " + what_ + ": a count of " + std::to_string(n) + " elements needs more than the "
                            + std::to_string(left) + " bytes that remain");
  return static_cast<std::size_t>(n);
}

Tensor ClosureReader::tensor() {
  const std::size_t size = count(1);
  std::vector<char> bytes(size);
  raw(bytes.data(), size);
  caf::binary_deserializer source(nullptr, bytes);
  Tensor t;
  if (auto err = detail::load_tensor(source, t))
    fail(Errc::data_loss, "cannot read a tensor of " + what_ + ": " + caf::to_string(err));
  return t;
}

void ClosureReader::expect_end() const {
  if (pos_ != bytes_.size())
    fail(Errc::data_loss, "cannot read " + what_ + ": " + std::to_string(bytes_.size() - pos_)
                            + " bytes are left over; the sender and this process disagree on the types");
}

} // namespace troupe
