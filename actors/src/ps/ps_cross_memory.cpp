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
  if (remote.lease == 0 || remote.slot_address == 0)
    return "its tensor comes without the sender's loan";
  try {
    out = Tensor::empty(Shape{remote.dims}, dtype);
  } catch (const std::bad_alloc&) {
    return "no memory for its " + std::to_string(remote.bytes) + "-byte tensor";
  }
  if (auto why = read_lent_memory(pid, remote.address, out.mutable_raw_data(), remote.bytes, remote.slot_address,
                                  remote.lease);
      !why.empty()) {
    out = Tensor{};
    return why;
  }
  return {};
}

CrossMemoryLoan ReadLeases::hold(Tensor value) {
  if (held_.size() >= max_held)
    return {};
  const auto loan = CrossMemoryLoan::open();
  if (loan.token != 0)
    held_.emplace(loan.token, std::move(value));
  return loan;
}

void ReadLeases::release(uint64_t lease) {
  // The loan closes before the value may be freed (see CrossMemoryLoan).
  if (auto i = held_.find(lease); i != held_.end()) {
    CrossMemoryLoan::close(lease);
    held_.erase(i);
  }
}

ReadLeases::~ReadLeases() {
  for (const auto& [lease, value] : held_)
    CrossMemoryLoan::close(lease);
}

std::shared_ptr<const void> lend(const Tensor& value, CrossMemoryTensor& remote) {
  remote = cross_memory_of(value);
  if (remote.bytes == 0)
    return nullptr;
  const auto loan = CrossMemoryLoan::open();
  if (loan.token == 0) {
    remote = {};
    return nullptr;
  }
  remote.lease = loan.token;
  remote.slot_address = loan.slot_address;
  struct Lent {
    Lent(Tensor v, uint64_t t) : value(std::move(v)), token(t) {}
    Lent(const Lent&) = delete; // one owner closes the loan, once
    Lent& operator=(const Lent&) = delete;
    ~Lent() { CrossMemoryLoan::close(token); } // before `value` goes
    Tensor value;
    uint64_t token;
  };
  return std::make_shared<Lent>(value, loan.token);
}

} // namespace troupe::internal
