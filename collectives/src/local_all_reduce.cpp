#include <troupe/collectives/local_all_reduce.hpp>

#include <algorithm>

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/core/in_place_bytes.hpp>

namespace troupe::internal {

namespace {

// Outputs larger than this bypass the cache: they cannot stay cached anyway,
// and streaming stores save the read-for-ownership of every output line.
constexpr size_t streaming_threshold_bytes = size_t{8} << 20;

constexpr int64_t cache_line = 64;

} // namespace

LocalAllReduce::LocalAllReduce(ReduceOp op, std::vector<std::vector<Tensor>> inputs,
                               size_t max_parts, size_t min_part_bytes, bool into_first)
  : op_(op), inputs_(std::move(inputs)) {
  const auto& first = inputs_.front();
  size_t total_bytes = 0;
  for (const auto& t : first) {
    // reduce_elements reads a block of every input before it writes that
    // block, so the output may be an input.
    outputs_.push_back(into_first ? t : Tensor::empty(t.shape(), t.dtype(), t.device()));
    output_data_.push_back(into_first ? in_place_bytes(t) : outputs_.back().mutable_raw_data());
    total_bytes += t.nbytes();
  }
  streaming_ = total_bytes >= streaming_threshold_bytes;
  size_t num_parts = std::clamp<size_t>(total_bytes / std::max<size_t>(min_part_bytes, 1), 1,
                                        std::max<size_t>(max_parts, 1));
  // Cut the concatenated byte range of all tensors into num_parts pieces whose
  // boundaries fall on cache lines, so no two threads write the same line.
  const size_t per_part = (total_bytes + num_parts - 1) / num_parts;
  parts_.assign(num_parts, {});
  size_t part = 0;
  size_t part_filled = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    const auto elem = static_cast<int64_t>(size_of(first[i].dtype()));
    const int64_t count = first[i].num_elements();
    int64_t begin = 0;
    while (begin < count) {
      // The last part takes whatever is left.
      const bool last = part + 1 == num_parts;
      const int64_t room = (static_cast<int64_t>(per_part) - static_cast<int64_t>(part_filled)) / elem;
      int64_t end = last ? count : std::min(count, begin + std::max<int64_t>(room, 1));
      if (end < count) {
        // Round the split point up to a cache line of elements.
        const int64_t line = std::max<int64_t>(cache_line / elem, 1);
        end = std::min(count, (end + line - 1) / line * line);
      }
      parts_[part].push_back({i, begin, end});
      part_filled += static_cast<size_t>((end - begin) * elem);
      begin = end;
      if (part_filled >= per_part && part + 1 < num_parts) {
        ++part;
        part_filled = 0;
      }
    }
  }
  // A part may stay empty when tensors are tiny; drop empty tails.
  while (parts_.size() > 1 && parts_.back().empty())
    parts_.pop_back();
}

void LocalAllReduce::run_part(size_t part) const {
  std::vector<const std::byte*> ptrs(inputs_.size());
  for (const auto& span : parts_.at(part)) {
    for (size_t k = 0; k < inputs_.size(); ++k)
      ptrs[k] = inputs_[k][span.tensor].raw_data();
    reduce_elements(outputs_[span.tensor].dtype(), op_, ptrs.data(),
                    static_cast<int>(ptrs.size()), output_data_[span.tensor], span.begin, span.end,
                    streaming_);
  }
}

} // namespace troupe::internal
