#include <troupe/actors/ps/ps_cross_memory.hpp>

#include <limits>
#include <new>

#include <troupe/core/errors.hpp>
#include <troupe/net/link/cross_memory.hpp>

namespace troupe::internal {

namespace {

// The element count of `dims`, or nullopt for a negative dim or a count past int64_t.
std::optional<uint64_t> element_count(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (auto d : dims) {
    if (d < 0)
      return std::nullopt;
    if (d == 0)
      return 0;
  }
  for (auto d : dims) {
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / static_cast<uint64_t>(d))
      return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

} // namespace

std::optional<int32_t> cross_memory_peer(const caf::node_id& node) {
  return CrossMemoryPeers::pid_of(node);
}

CrossMemoryTensor cross_memory_of(const Tensor& value) {
  CrossMemoryTensor out;
  if (!value.valid() || !value.on_host() || value.nbytes() < cross_memory_min_bytes)
    return out;
  out.address = reinterpret_cast<uintptr_t>(value.raw_data());
  out.bytes = value.nbytes();
  out.dtype = static_cast<uint8_t>(value.dtype());
  out.dims = value.shape().dims();
  return out;
}

std::string take_cross_memory(int32_t pid, const CrossMemoryTensor& remote, const Tensor* like, Tensor& out) {
  if (remote.dtype > static_cast<uint8_t>(last_dtype))
    return "its tensor has the unknown dtype code " + std::to_string(remote.dtype);
  const auto dtype = static_cast<DType>(remote.dtype);
  const auto count = element_count(remote.dims);
  if (!count || *count > remote.bytes / size_of(dtype) || *count * size_of(dtype) != remote.bytes)
    return "its tensor's shape " + Shape{remote.dims}.to_string() + " of " + std::string{name(dtype)}
           + " does not hold " + std::to_string(remote.bytes) + " bytes";
  if (like != nullptr && (like->dtype() != dtype || like->shape().dims() != remote.dims))
    return "its tensor is " + std::string{name(dtype)} + " " + Shape{remote.dims}.to_string() + ", the shard "
           + std::string{name(like->dtype())} + " " + like->shape().to_string();
  try {
    out = Tensor::empty(Shape{remote.dims}, dtype);
  } catch (const std::bad_alloc&) {
    return "no memory for its " + std::to_string(remote.bytes) + "-byte tensor";
  }
  if (auto why = read_cross_memory(pid, remote.address, out.mutable_raw_data(), remote.bytes); !why.empty()) {
    out = Tensor{};
    return why;
  }
  return {};
}

uint64_t ReadLeases::hold(Tensor value) {
  if (held_.size() >= max_held)
    return 0;
  const uint64_t lease = ++next_;
  held_.emplace(lease, std::move(value));
  return lease;
}

} // namespace troupe::internal
