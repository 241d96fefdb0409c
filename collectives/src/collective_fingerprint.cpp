#include <troupe/collectives/collective_fingerprint.hpp>

#include <cstring>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe {

std::string_view name(CollectiveKind kind) noexcept {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::merge_call: return "merge_call";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::reduce_scatter: break;
  }
  return "reduce_scatter";
}

CollectiveFingerprint CollectiveFingerprint::of(CollectiveKind kind, ReduceOp op, int axis,
                                                const std::vector<Tensor>& tensors) {
  CollectiveFingerprint fp;
  fp.kind = kind;
  fp.op = op;
  fp.axis = axis;
  fp.dtypes.reserve(tensors.size());
  fp.shapes.reserve(tensors.size());
  for (const auto& t : tensors) {
    fp.dtypes.push_back(t.dtype());
    fp.shapes.push_back(t.shape());
  }
  return fp;
}

std::string CollectiveFingerprint::describe() const {
  std::string out(name(kind));
  if (kind == CollectiveKind::all_reduce)
    out += "(" + std::string(name(op)) + ")";
  else if (kind == CollectiveKind::all_gather)
    out += "(axis=" + std::to_string(axis) + ")";
  else if (kind == CollectiveKind::broadcast)
    out += "(from replica 0)";
  else if (kind == CollectiveKind::reduce_scatter)
    out += "(" + std::string(name(op)) + ", axis=" + std::to_string(axis) + ")";
  if (kind == CollectiveKind::merge_call)
    return out;
  out += " of ";
  if (dtypes.size() != 1)
    out += "[";
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += std::string(name(dtypes[i])) + " " + shapes[i].to_string();
  }
  if (dtypes.size() != 1)
    out += "]";
  return out;
}

namespace {

void put(std::vector<std::byte>& out, int64_t value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

int64_t take(std::span<const std::byte>& in) {
  int64_t value = 0;
  if (in.size() < sizeof value)
    fail(Errc::data_loss, "a collective fingerprint on the wire is truncated");
  std::memcpy(&value, in.data(), sizeof value);
  in = in.subspan(sizeof value);
  return value;
}

} // namespace

std::vector<std::byte> CollectiveFingerprint::to_bytes() const {
  std::vector<std::byte> out;
  put(out, static_cast<int64_t>(kind));
  put(out, static_cast<int64_t>(op));
  put(out, axis);
  put(out, static_cast<int64_t>(dtypes.size()));
  for (size_t i = 0; i < dtypes.size(); ++i) {
    put(out, static_cast<int64_t>(dtypes[i]));
    put(out, shapes[i].rank());
    for (auto d : shapes[i].dims())
      put(out, d);
  }
  return out;
}

CollectiveFingerprint CollectiveFingerprint::from_bytes(std::span<const std::byte> in) {
  CollectiveFingerprint fp;
  const auto kind = take(in);
  const auto op = take(in);
  fp.axis = static_cast<int>(take(in));
  const auto n = take(in);
  if (kind < 0 || kind > static_cast<int64_t>(CollectiveKind::reduce_scatter) || op < 0
      || op > static_cast<int64_t>(ReduceOp::MEAN) || n < 0 || n > (int64_t{1} << 20))
    fail(Errc::data_loss, "a collective fingerprint on the wire is corrupted");
  fp.kind = static_cast<CollectiveKind>(kind);
  fp.op = static_cast<ReduceOp>(op);
  for (int64_t i = 0; i < n; ++i) {
    const auto dtype = take(in);
    if (dtype < 0 || dtype > static_cast<int64_t>(last_dtype))
      fail(Errc::data_loss, "a collective fingerprint on the wire names an unknown dtype");
    fp.dtypes.push_back(static_cast<DType>(dtype));
    const auto rank = take(in);
    if (rank < 0 || rank > 64)
      fail(Errc::data_loss, "a collective fingerprint on the wire has a corrupted shape");
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(take(in));
    fp.shapes.emplace_back(std::move(dims));
  }
  return fp;
}

namespace {

// all_gather inputs may differ only along the gather axis.
bool gather_compatible(const CollectiveFingerprint& a, const CollectiveFingerprint& b) {
  if (a.kind != b.kind || a.axis != b.axis || a.dtypes != b.dtypes
      || a.shapes.size() != b.shapes.size())
    return false;
  for (size_t i = 0; i < a.shapes.size(); ++i) {
    const auto& x = a.shapes[i].dims();
    const auto& y = b.shapes[i].dims();
    if (x.size() != y.size())
      return false;
    for (size_t d = 0; d < x.size(); ++d)
      if (static_cast<int>(d) != a.axis && x[d] != y[d])
        return false;
  }
  return true;
}

bool compatible(const CollectiveFingerprint& a, const CollectiveFingerprint& b) {
  if (a.kind == CollectiveKind::all_gather)
    return gather_compatible(a, b);
  if (a.kind == CollectiveKind::merge_call)
    return b.kind == CollectiveKind::merge_call;
  return a == b;
}

} // namespace

std::optional<std::string>
check_fingerprints(const std::vector<CollectiveFingerprint>& fingerprints) {
  std::vector<std::string> names;
  for (size_t i = 0; i < fingerprints.size(); ++i)
    names.push_back("replica " + std::to_string(i));
  return check_fingerprints(fingerprints, names);
}

std::optional<std::string>
check_fingerprints(const std::vector<CollectiveFingerprint>& fingerprints, const std::vector<std::string>& names) {
  bool ok = true;
  for (size_t i = 1; i < fingerprints.size() && ok; ++i)
    ok = compatible(fingerprints.front(), fingerprints[i]);
  if (ok)
    return std::nullopt;
  std::string out;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += names.at(i) + " sent " + fingerprints[i].describe();
  }
  return out;
}

} // namespace troupe
