#include <troupe/collectives/halving_doubling_all_reduce.hpp>

#include <cstring>
#include <string>

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/in_place_bytes.hpp>

namespace troupe::internal {

HalvingDoublingAllReduce::HalvingDoublingAllReduce(PeerLink& link, int rank, int size, Tensor buffer,
                                                   bool in_place)
  : link_(link), rank_(rank), size_(size), buffer_(std::move(buffer)) {
  data_ = in_place ? in_place_bytes(buffer_) : buffer_.mutable_raw_data();
  owner_ = std::make_shared<Tensor>(buffer_);
  elem_bytes_ = size_of(buffer_.dtype());
  plan();
}

// Rounds are numbered the same way on every rank (the frame tag is the round):
// 0 = fold, 1..L = halving, L+1..2L = doubling, 2L+1 = unfold.
void HalvingDoublingAllReduce::plan() {
  int p = 1;
  int levels = 0;
  while (p * 2 <= size_) {
    p *= 2;
    ++levels;
  }
  const int rem = size_ - p;
  const int64_t count = buffer_.num_elements();
  rounds_.assign(static_cast<size_t>(2 * levels + 2), Round{});
  // Step 0: fold the first 2·rem ranks pairwise.
  int v = -1; // rank among the p that do the halving and doubling
  if (rank_ < 2 * rem) {
    if (rank_ % 2 == 0) {
      rounds_[0] = {rank_ + 1, {0, count}, true, {0, 0}, false, false};
      rounds_.back() = {rank_ + 1, {0, 0}, false, {0, count}, true, false};
    } else {
      rounds_[0] = {rank_ - 1, {0, 0}, false, {0, count}, true, true};
      rounds_.back() = {rank_ - 1, {0, count}, true, {0, 0}, false, false};
      v = rank_ / 2;
    }
  } else {
    v = rank_ - rem;
  }
  if (v < 0)
    return;
  // The real rank of participant w.
  auto real = [rem](int w) { return w < rem ? 2 * w + 1 : w + rem; };
  Range range{0, count};
  std::vector<Range> kept;
  int k = 1;
  for (int mask = p / 2; mask >= 1; mask /= 2, ++k) {
    const int64_t mid = range.begin + (range.end - range.begin) / 2;
    const Range lower{range.begin, mid};
    const Range upper{mid, range.end};
    const bool low = (v & mask) == 0;
    const Range keep = low ? lower : upper;
    rounds_[static_cast<size_t>(k)] = {real(v ^ mask), low ? upper : lower, true, keep, true, true};
    kept.push_back(range);
    range = keep;
  }
  for (int mask = 1; mask <= p / 2; mask *= 2, ++k) {
    const Range parent = kept.back();
    kept.pop_back();
    const Range other = range.begin == parent.begin ? Range{range.end, parent.end} : Range{parent.begin, range.begin};
    rounds_[static_cast<size_t>(k)] = {real(v ^ mask), range, true, other, true, false};
    range = parent;
  }
}

void HalvingDoublingAllReduce::send_range(int peer, uint32_t tag, Range range) {
  link_.send(peer, tag,
             FrameBytes{owner_, data_ + range.begin * static_cast<int64_t>(elem_bytes_),
                        static_cast<size_t>(range.end - range.begin) * elem_bytes_});
}

void HalvingDoublingAllReduce::start() {
  advance();
}

// Runs rounds until one waits for a frame that has not arrived.
void HalvingDoublingAllReduce::advance() {
  while (current_ < rounds_.size()) {
    const auto& round = rounds_[current_];
    const auto tag = static_cast<uint32_t>(current_);
    if (round.peer >= 0 && round.sends && !sent_current_) {
      send_range(round.peer, tag, round.send);
      sent_current_ = true;
    }
    if (round.peer >= 0 && round.receives) {
      auto early = early_.find(tag);
      if (early == early_.end())
        return;
      auto [from, bytes] = std::move(early->second);
      early_.erase(early);
      if (from != round.peer)
        protocol_error(rank_, from, tag, "came in place of one from rank " + std::to_string(round.peer));
      consume(round, bytes);
    }
    ++current_;
    sent_current_ = false;
  }
  done_ = true;
}

void HalvingDoublingAllReduce::consume(const Round& round, const FrameBytes& bytes) {
  const size_t want = static_cast<size_t>(round.recv.end - round.recv.begin) * elem_bytes_;
  if (bytes.size != want)
    protocol_error(rank_, round.peer, static_cast<uint32_t>(current_),
                   "carries " + std::to_string(bytes.size) + " bytes where " + std::to_string(want) + " were expected");
  std::byte* dst = data_ + round.recv.begin * static_cast<int64_t>(elem_bytes_);
  if (round.reduce) {
    const std::byte* inputs[2] = {dst, bytes.data};
    reduce_elements(buffer_.dtype(), ReduceOp::SUM, inputs, 2, dst, 0, round.recv.end - round.recv.begin,
                    false);
  } else if (want > 0) {
    std::memcpy(dst, bytes.data, want);
  }
}

bool HalvingDoublingAllReduce::waits_for(int rank) const {
  for (size_t r = current_; r < rounds_.size(); ++r)
    if (rounds_[r].peer == rank && rounds_[r].receives && early_.count(static_cast<uint32_t>(r)) == 0)
      return true;
  return false;
}

void HalvingDoublingAllReduce::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  if (tag >= rounds_.size() || tag < current_ || early_.count(tag) != 0 || rounds_[tag].peer != from
      || !rounds_[tag].receives)
    protocol_error(rank_, from, tag, "is not expected (this rank is at round " + std::to_string(current_) + ")");
  early_.emplace(tag, std::make_pair(from, bytes));
  advance();
}

} // namespace troupe::internal
