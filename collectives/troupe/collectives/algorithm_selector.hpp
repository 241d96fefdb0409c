#pragma once

#include <cstddef>
#include <memory>

#include <troupe/collectives/communication_options.hpp>
#include <troupe/collectives/peer_link.hpp>
#include <troupe/collectives/ring_all_reduce.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

/// The cross-worker all-reduce algorithms.
enum class AllReduceAlgorithm : unsigned char { ring, halving_doubling };

[[nodiscard]] const char* name(AllReduceAlgorithm algorithm) noexcept;

/// Which algorithm reduces one pack, and why (TensorFlow's CollectiveAllReduce
/// makes the same choice per pack).
struct AllReduceChoice {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::ring;
  const char* reason = "";
};

/// AUTO: recursive halving-doubling for packs up to `halving_doubling_max_bytes`
/// (latency-bound: log2(n) steps), the ring above (bandwidth-optimal).
/// RING, and NCCL on the CPU data plane: the ring.
[[nodiscard]] AllReduceChoice choose_all_reduce(CommunicationImplementation implementation, std::size_t bytes,
                                                std::size_t halving_doubling_max_bytes);

/// An all-reduce of the chosen algorithm over `flat`, which it owns from now
/// on; `reduced` points at its buffer, which holds the sum once it is done.
/// Logs the choice by name (TROUPE_LOG=debug, component "coll").
[[nodiscard]] std::unique_ptr<PeerCollective> make_all_reduce(const AllReduceChoice& choice, PeerLink& link, int rank,
                                                              int size, Tensor flat, const RingOptions& ring,
                                                              const Tensor*& reduced);

} // namespace troupe::internal
