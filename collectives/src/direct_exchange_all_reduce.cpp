#include <troupe/collectives/direct_exchange_all_reduce.hpp>

#include <cstring>
#include <string>

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/core/in_place_bytes.hpp>

namespace troupe::internal {

DirectExchangeAllReduce::DirectExchangeAllReduce(PeerLink& link, int rank, int size, Tensor buffer, bool snapshot,
                                                 bool in_place)
  : link_(link), rank_(rank), size_(size), input_(std::move(buffer)) {
  if (snapshot || in_place) {
    auto copy = std::make_shared<std::vector<std::byte>>(input_.raw_data(), input_.raw_data() + input_.nbytes());
    sent_ = copy->data();
    owner_ = std::move(copy);
  } else {
    sent_ = input_.raw_data();
    owner_ = std::make_shared<Tensor>(input_);
  }
  if (in_place) {
    result_ = input_;
    out_ = in_place_bytes(result_);
  } else {
    result_ = Tensor::empty(input_.shape(), input_.dtype(), input_.device());
    out_ = result_.mutable_raw_data();
  }
  received_.resize(static_cast<std::size_t>(size_));
  arrived_.assign(static_cast<std::size_t>(size_), false);
  missing_ = size_ - 1;
}

void DirectExchangeAllReduce::start() {
  const FrameBytes mine{owner_, sent_, input_.nbytes()};
  for (int peer = 0; peer < size_; ++peer)
    if (peer != rank_)
      link_.send(peer, 0, mine);
  if (missing_ == 0)
    finish();
}

void DirectExchangeAllReduce::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  if (tag != 0 || from < 0 || from >= size_ || from == rank_ || arrived_[static_cast<std::size_t>(from)])
    protocol_error(rank_, from, tag, "is not expected (each rank sends one frame, tag 0)");
  if (bytes.size != input_.nbytes())
    protocol_error(rank_, from, tag,
                   "carries " + std::to_string(bytes.size) + " bytes where " + std::to_string(input_.nbytes())
                     + " were expected");
  arrived_[static_cast<std::size_t>(from)] = true;
  received_[static_cast<std::size_t>(from)] = bytes;
  if (--missing_ == 0)
    finish();
}

bool DirectExchangeAllReduce::waits_for(int rank) const {
  return !done_ && rank >= 0 && rank < size_ && rank != rank_ && !arrived_[static_cast<std::size_t>(rank)];
}

void DirectExchangeAllReduce::finish() {
  std::vector<const std::byte*> inputs;
  inputs.reserve(static_cast<std::size_t>(size_));
  // Its own term is what it sent, so every rank adds the same bytes.
  for (int r = 0; r < size_; ++r)
    inputs.push_back(r == rank_ ? sent_ : received_[static_cast<std::size_t>(r)].data);
  const auto count = input_.num_elements();
  // In place, the result is the input's memory.
  if (count > 0)
    reduce_elements(input_.dtype(), ReduceOp::SUM, inputs.data(), size_, out_, 0, count, false);
  received_.clear();
  done_ = true;
}

} // namespace troupe::internal
