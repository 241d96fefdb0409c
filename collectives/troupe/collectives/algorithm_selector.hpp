#pragma once

#include <cstddef>
#include <memory>

#include <troupe/collectives/communication_options.hpp>
#include <troupe/collectives/peer_link.hpp>
#include <troupe/collectives/ring_all_reduce.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The cross-worker all-reduce algorithms.
enum class AllReduceAlgorithm : unsigned char { ring, halving_doubling, direct_exchange };

[[nodiscard]] const char* name(AllReduceAlgorithm algorithm) noexcept;

/// Which algorithm reduces one pack, and why (TensorFlow's CollectiveAllReduce
/// makes the same choice per pack).
struct AllReduceChoice {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::ring;
  const char* reason = "";
};

/// Where AUTO switches algorithms (TROUPE_DIRECT_EXCHANGE_MAX_KIB,
/// TROUPE_HALVING_DOUBLING_MAX_KIB).
struct AllReduceLimits {
  /// A direct exchange while each rank sends at most this: (ranks - 1) x pack.
  std::size_t direct_exchange_max_bytes = 0;
  /// Halving-doubling for packs up to this.
  std::size_t halving_doubling_max_bytes = 0;
};

/// AUTO: a direct exchange (one round) while (ranks - 1) x `bytes` is within
/// its limit, recursive halving-doubling for packs up to its limit
/// (latency-bound: 2 log2(n) rounds), the ring above (bandwidth-optimal).
/// RING, and NCCL on the CPU data plane: the ring.
[[nodiscard]] AllReduceChoice choose_all_reduce(CommunicationImplementation implementation, std::size_t bytes,
                                                int ranks, const AllReduceLimits& limits);

/// Whose memory one pack's all-reduce works on.
struct PackMemory {
  /// The pack is a caller's tensor (alone in its pack, the worker's only
  /// replica's or an in-place collective's), not a buffer troupe made:
  /// memory a framework may write again once the collective returns.
  /// The direct exchange then sends a snapshot of it, since nothing it
  /// receives says when the peers read its frame (the ring and
  /// halving-doubling send from it only what peers read before they finish).
  bool callers = false;
  /// Write the result into it (all_reduce_in_place, whose caller handed
  /// troupe the only handle).
  bool in_place = false;
};

/// An all-reduce of the chosen algorithm over `flat`, which it owns from now
/// on; `reduced` points at its buffer, which holds the sum once it is done.
/// With `memory.in_place` that buffer is `flat`'s own memory, whichever
/// algorithm it is.
/// Logs each algorithm the first time this process picks it, with the
/// pack's size and why (TROUPE_LOG=info, component "coll").
[[nodiscard]] std::unique_ptr<PeerCollective> make_all_reduce(const AllReduceChoice& choice, PeerLink& link, int rank,
                                                              int size, Tensor flat, const RingOptions& ring,
                                                              PackMemory memory, const Tensor*& reduced);

} // namespace troupe::internal
