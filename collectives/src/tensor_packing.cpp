#include <troupe/collectives/tensor_packing.hpp>

#include <cstring>

#include <troupe/core/in_place_bytes.hpp>

namespace troupe::internal {

std::vector<TensorPack> plan_packs(const std::vector<Tensor>& tensors, int64_t bytes_per_pack) {
  std::vector<TensorPack> packs;
  std::size_t pack_bytes = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    const bool fresh = packs.empty() || tensors[packs.back().tensors.front()].dtype() != t.dtype()
                       || (bytes_per_pack > 0 && pack_bytes > 0
                           && pack_bytes + t.nbytes() > static_cast<std::size_t>(bytes_per_pack));
    if (fresh) {
      packs.emplace_back();
      pack_bytes = 0;
    }
    packs.back().tensors.push_back(i);
    pack_bytes += t.nbytes();
  }
  return packs;
}

Tensor flatten(std::vector<Tensor>& tensors, const TensorPack& pack) {
  if (pack.tensors.size() == 1) {
    auto& t = tensors[pack.tensors.front()];
    auto flat = t.reshape({t.num_elements()});
    t = Tensor();
    return flat;
  }
  int64_t count = 0;
  for (auto i : pack.tensors)
    count += tensors[i].num_elements();
  auto flat = Tensor::empty({count}, tensors[pack.tensors.front()].dtype());
  auto* out = flat.mutable_raw_data();
  for (auto i : pack.tensors) {
    std::memcpy(out, tensors[i].raw_data(), tensors[i].nbytes());
    out += tensors[i].nbytes();
  }
  return flat;
}

void unflatten(const Tensor& flat, const TensorPack& pack, const std::vector<Shape>& shapes,
               std::vector<Tensor>& out) {
  int64_t offset = 0;
  for (auto i : pack.tensors) {
    const auto n = shapes[i].num_elements();
    out[i] = pack.tensors.size() == 1 ? flat.reshape(shapes[i]) : flat.slice(offset, offset + n).reshape(shapes[i]);
    offset += n;
  }
}

void unflatten_into(const Tensor& flat, const TensorPack& pack, const std::vector<Tensor>& targets,
                    std::vector<Tensor>& out) {
  const std::byte* in = flat.raw_data();
  for (auto i : pack.tensors) {
    const auto& target = targets[i];
    std::memcpy(in_place_bytes(target), in, target.nbytes());
    in += target.nbytes();
    out[i] = target;
  }
}

std::size_t block_bytes(const CollectiveFingerprint& fp) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < fp.dtypes.size(); ++i)
    total += static_cast<std::size_t>(fp.shapes[i].num_elements()) * size_of(fp.dtypes[i]);
  return total;
}

std::shared_ptr<std::vector<std::byte>> to_block(const std::vector<Tensor>& tensors) {
  auto block = std::make_shared<std::vector<std::byte>>();
  for (const auto& t : tensors)
    block->insert(block->end(), t.raw_data(), t.raw_data() + t.nbytes());
  return block;
}

std::vector<Tensor> from_block(const CollectiveFingerprint& fp, const std::byte* data) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < fp.dtypes.size(); ++i) {
    auto t = Tensor::empty(fp.shapes[i], fp.dtypes[i]);
    if (t.nbytes() > 0)
      std::memcpy(t.mutable_raw_data(), data, t.nbytes());
    data += t.nbytes();
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace troupe::internal
