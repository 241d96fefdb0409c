#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <troupe/collectives/peer_link.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The all-reduce (SUM) for the smallest packs: every rank sends its whole
/// buffer to every other rank in one frame, then adds all n buffers, in rank
/// order, into a result of its own. One round instead of halving-doubling's
/// 2·log2(p): on a machine where each hand-off between threads costs a
/// wake-up, rounds and not bytes bound small packs. Each rank sends (n-1)
/// times the buffer, so AUTO picks it only while that is small
/// (TROUPE_DIRECT_EXCHANGE_MAX_KIB, algorithm_selector.hpp).
///
/// Every rank adds the same inputs in the same order (rank 0 first), so all
/// ranks hold the same bits. The link may still read the bytes this rank
/// sent after it is done: no frame this rank receives says that the others
/// read them. So the result is a separate buffer, and `snapshot` sends a
/// copy of `buffer` (a caller's memory, which its framework may write again
/// once the collective returns): one copy of a pack small enough for this
/// algorithm. `in_place` (an in-place collective, whose caller handed troupe
/// the only handle of `buffer`, with `snapshot`) writes the sum into the
/// buffer's own memory instead.
class DirectExchangeAllReduce final : public PeerCollective {
public:
  DirectExchangeAllReduce(PeerLink& link, int rank, int size, Tensor buffer, bool snapshot = false,
                          bool in_place = false);

  [[nodiscard]] const char* name() const noexcept override { return "direct-exchange"; }
  void start() override;
  void on_frame(int from, uint32_t tag, const FrameBytes& bytes) override;
  [[nodiscard]] bool waits_for(int rank) const override;

  /// The sum once done() (until then, unspecified).
  [[nodiscard]] const Tensor& buffer() const noexcept { return result_; }

private:
  void finish();

  PeerLink& link_;
  int rank_;
  int size_;
  Tensor input_;
  std::shared_ptr<const void> owner_; ///< what the frames this rank sent read from
  const std::byte* sent_ = nullptr;
  Tensor result_;
  std::byte* out_ = nullptr; ///< result_'s bytes
  std::vector<FrameBytes> received_; ///< per rank; this rank's own is input_
  std::vector<bool> arrived_;
  int missing_ = 0;
};

} // namespace troupe::internal
