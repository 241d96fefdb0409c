#include <troupe/actors/gpu/nccl_announcement.hpp>

#include <cstring>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

/// Reads announcement bytes front to back, checking each read against what is left.
class Reader {
public:
  Reader(const std::string& bytes, const std::string& from) : bytes_(bytes), from_(from) {}

  template <class T>
  T get() {
    T value{};
    std::memcpy(&value, take(sizeof value), sizeof value);
    return value;
  }
  const char* take(std::size_t n) {
    if (n > bytes_.size() - at_)
      fail(Errc::data_loss, "task " + from_ + " announced NCCL details of " + std::to_string(bytes_.size())
                              + " bytes, which end before what they say they hold");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  [[nodiscard]] bool done() const { return at_ == bytes_.size(); }

private:
  const std::string& bytes_;
  const std::string& from_;
  std::size_t at_ = 0;
};

} // namespace

std::string NcclAnnouncement::encode() const {
  std::string out;
  put(out, static_cast<uint32_t>(communicator.size()));
  out += communicator;
  put(out, static_cast<uint32_t>(dropped.size()));
  out += dropped;
  put(out, static_cast<uint32_t>(sizes.size()));
  put(out, static_cast<uint32_t>(sizes.empty() ? 0 : sizes.front().size()));
  for (const auto& replica : sizes)
    for (int64_t size : replica)
      put(out, size);
  return out;
}

NcclAnnouncement NcclAnnouncement::decode(const std::string& bytes, const std::string& from, std::size_t replicas,
                                          std::size_t tensors) {
  Reader in(bytes, from);
  NcclAnnouncement out;
  const auto communicator_bytes = in.get<uint32_t>();
  out.communicator.assign(in.take(communicator_bytes), communicator_bytes);
  const auto dropped_bytes = in.get<uint32_t>();
  out.dropped.assign(in.take(dropped_bytes), dropped_bytes);
  const auto replica_count = in.get<uint32_t>();
  const auto tensor_count = in.get<uint32_t>();
  if (replica_count != 0 && (replica_count != replicas || tensor_count != tensors))
    fail(Errc::data_loss, "task " + from + " announced the sizes of " + std::to_string(replica_count)
                            + " replicas x " + std::to_string(tensor_count) + " tensors, where every worker has "
                            + std::to_string(replicas) + " x " + std::to_string(tensors));
  for (uint32_t r = 0; r < replica_count; ++r) {
    auto& replica = out.sizes.emplace_back();
    for (uint32_t t = 0; t < tensor_count; ++t) {
      const auto size = in.get<int64_t>();
      if (size < 0)
        fail(Errc::data_loss, "task " + from + " announced a negative size (" + std::to_string(size) + ")");
      replica.push_back(size);
    }
  }
  if (!in.done())
    fail(Errc::data_loss, "task " + from + " announced NCCL details with bytes left over");
  return out;
}

} // namespace troupe::internal
