#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <troupe/collectives/peer_link.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// Latency-optimal all-reduce (SUM) for small tensors: recursive halving
/// (reduce-scatter) then recursive doubling (all-gather), Rabenseifner's
/// algorithm as in MPICH, in 2·log2(p) rounds instead of the ring's 2(n-1).
///
/// With p the largest power of two <= n and rem = n - p:
///   0. fold: of the first 2·rem ranks, each even rank sends its whole buffer
///      to the odd rank after it and waits; the odd one adds it in. The p
///      ranks left are renumbered v = 0..p-1.
///   1. halving, mask = p/2 .. 1: exchange halves of the current range with
///      v ^ mask; the lower v keeps (and adds into) the lower half.
///   2. doubling, mask = 1 .. p/2: send the range this rank completed to
///      v ^ mask and copy in the partner's, so ranges grow back to the whole.
///   3. unfold: each odd rank of step 0 sends the result to its even partner.
/// Rounds use different partners, so a frame of a later round may arrive
/// before the current one: it waits in `early_` until its round comes.
/// In-place writes follow the same invariant as RingAllReduce: bytes this
/// rank sent are rewritten only with values that depend on them.
class HalvingDoublingAllReduce final : public PeerCollective {
public:
  /// Reduces `buffer` in place: in its own memory when this algorithm holds
  /// the only handle, or with `in_place` (an in-place collective, whose caller
  /// handed troupe the only handle); else in a copy-on-write copy.
  HalvingDoublingAllReduce(PeerLink& link, int rank, int size, Tensor buffer, bool in_place = false);

  [[nodiscard]] const char* name() const noexcept override { return "halving-doubling"; }
  void start() override;
  void on_frame(int from, uint32_t tag, const FrameBytes& bytes) override;
  [[nodiscard]] bool waits_for(int rank) const override;

  [[nodiscard]] const Tensor& buffer() const noexcept { return buffer_; }

private:
  struct Range {
    int64_t begin;
    int64_t end;
  };
  /// One round: whom it talks to, what it sends and what it receives.
  struct Round {
    int peer = -1;     ///< -1: this rank has nothing to do in this round
    Range send{0, 0};
    bool sends = false;
    Range recv{0, 0};
    bool receives = false;
    bool reduce = false; ///< add the received bytes (else copy them)
  };

  void plan();
  void advance();
  void send_range(int peer, uint32_t tag, Range range);
  void consume(const Round& round, const FrameBytes& bytes);

  PeerLink& link_;
  int rank_;
  int size_;
  Tensor buffer_;
  std::shared_ptr<const void> owner_;
  std::byte* data_ = nullptr;
  std::size_t elem_bytes_ = 0;
  std::vector<Round> rounds_;
  size_t current_ = 0;
  bool sent_current_ = false;
  std::map<uint32_t, std::pair<int, FrameBytes>> early_;
};

} // namespace troupe::internal
