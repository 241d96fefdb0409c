#include <troupe/collectives/ring_all_reduce.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/in_place_bytes.hpp>

namespace troupe::internal {

RingAllReduce::RingAllReduce(PeerLink& link, int rank, int size, Tensor input, RingOptions options)
  : link_(link), rank_(rank), size_(size), input_(std::move(input)), options_(options) {
  in_ = input_.raw_data();
  if (options_.in_place) {
    output_ = input_;
    out_ = in_place_bytes(input_);
  } else {
    output_ = Tensor::empty(input_.shape(), input_.dtype(), input_.device());
    // Written through this pointer while frames share the result.
    out_ = output_.mutable_raw_data();
  }
  input_owner_ = std::make_shared<Tensor>(input_);
  output_owner_ = std::make_shared<Tensor>(output_);
  elem_bytes_ = size_of(input_.dtype());
  count_ = input_.num_elements();
  chunk_elems_ = std::max<int64_t>(1, static_cast<int64_t>(options_.chunk_bytes / elem_bytes_));
  const auto [b0, e0] = segment(count_, size_, 0);
  max_chunks_ = std::max<int64_t>(1, (e0 - b0 + chunk_elems_ - 1) / chunk_elems_);
  steps_ = options_.reduce_scatter_only ? size_ - 1 : 2 * (size_ - 1);
  for (int t = 0; t < steps_; ++t)
    expected_ += chunks_of(recv_segment(t));
  received_tags_.assign(static_cast<size_t>(steps_) * static_cast<size_t>(max_chunks_), false);
}

std::pair<int64_t, int64_t> RingAllReduce::segment(int64_t count, int n, int s) noexcept {
  const int64_t base = count / n;
  const int64_t extra = count % n;
  const int64_t begin = s * base + std::min<int64_t>(s, extra);
  return {begin, begin + base + (s < extra ? 1 : 0)};
}

int RingAllReduce::mod(int64_t x) const noexcept {
  return static_cast<int>(((x % size_) + size_) % size_);
}

int RingAllReduce::send_segment(int step) const noexcept {
  return step < size_ - 1 ? mod(rank_ - step - 1) : mod(rank_ - (step - size_ + 1));
}

int RingAllReduce::recv_segment(int step) const noexcept {
  return step < size_ - 1 ? mod(rank_ - step - 2) : mod(rank_ - (step - size_ + 1) - 1);
}

int64_t RingAllReduce::chunks_of(int seg) const noexcept {
  const auto [begin, end] = segment(count_, size_, seg);
  return (end - begin + chunk_elems_ - 1) / chunk_elems_;
}

void RingAllReduce::send_chunk(int step, int64_t chunk) {
  const auto [begin, end] = segment(count_, size_, send_segment(step));
  const int64_t first = begin + chunk * chunk_elems_;
  const int64_t last = std::min(end, first + chunk_elems_);
  const auto tag = static_cast<uint32_t>(step * max_chunks_ + chunk);
  // The first step sends this rank's own values; every later one what it
  // reduced or received into the result.
  const auto offset = first * static_cast<int64_t>(elem_bytes_);
  const auto bytes = static_cast<size_t>(last - first) * elem_bytes_;
  link_.send(mod(rank_ + 1), tag,
             step == 0 ? FrameBytes{input_owner_, in_ + offset, bytes}
                       : FrameBytes{output_owner_, out_ + offset, bytes});
}

void RingAllReduce::start() {
  if (size_ == 1 || expected_ == 0) {
    if (count_ > 0 && out_ != in_)
      std::memcpy(out_, in_, static_cast<size_t>(count_) * elem_bytes_);
    done_ = true;
    return;
  }
  for (int64_t c = 0; c < chunks_of(send_segment(0)); ++c)
    send_chunk(0, c);
}

void RingAllReduce::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  const int step = static_cast<int>(tag / static_cast<uint64_t>(max_chunks_));
  const int64_t chunk = static_cast<int64_t>(tag % static_cast<uint64_t>(max_chunks_));
  const int seg = step < steps_ ? recv_segment(step) : 0;
  if (from != mod(rank_ - 1))
    protocol_error(rank_, from, tag, "came from a rank that is not the left neighbour " + std::to_string(mod(rank_ - 1)));
  if (done_ || step >= steps_ || chunk >= chunks_of(seg))
    protocol_error(rank_, from, tag, "names step " + std::to_string(step) + ", chunk " + std::to_string(chunk)
                   + ", which this ring does not have or already received");
  // A chunk that came twice would be added twice: the link's duplicate is an error, not a sum.
  if (received_tags_[tag])
    protocol_error(rank_, from, tag, "repeats step " + std::to_string(step) + ", chunk " + std::to_string(chunk)
                   + ", which this ring already received");
  received_tags_[tag] = true;
  const auto [begin, end] = segment(count_, size_, seg);
  const int64_t first = begin + chunk * chunk_elems_;
  const int64_t last = std::min(end, first + chunk_elems_);
  const size_t want = static_cast<size_t>(last - first) * elem_bytes_;
  if (bytes.size != want)
    protocol_error(rank_, from, tag, "carries " + std::to_string(bytes.size) + " bytes where " + std::to_string(want)
                   + " were expected");
  const auto offset = first * static_cast<int64_t>(elem_bytes_);
  std::byte* dst = out_ + offset;
  if (step < size_ - 1) {
    // Each chunk is received once in the reduce-scatter: this rank's own
    // values come from the input.
    const std::byte* inputs[2] = {in_ + offset, bytes.data};
    reduce_elements(input_.dtype(), ReduceOp::SUM, inputs, 2, dst, 0, last - first, false);
  } else {
    std::memcpy(dst, bytes.data, want);
  }
  if (step + 1 < steps_)
    send_chunk(step + 1, chunk);
  if (++received_ == expected_)
    done_ = true;
}

} // namespace troupe::internal
