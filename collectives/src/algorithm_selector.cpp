#include <troupe/collectives/algorithm_selector.hpp>

#include <atomic>

#include <troupe/collectives/direct_exchange_all_reduce.hpp>
#include <troupe/collectives/halving_doubling_all_reduce.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

const char* name(AllReduceAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case AllReduceAlgorithm::ring:
      return "ring";
    case AllReduceAlgorithm::halving_doubling:
      return "halving-doubling";
    case AllReduceAlgorithm::direct_exchange:
      return "direct-exchange";
  }
  return "?";
}

AllReduceChoice choose_all_reduce(CommunicationImplementation implementation, std::size_t bytes, int ranks,
                                  const AllReduceLimits& limits) {
  switch (implementation) {
    case CommunicationImplementation::RING:
      return {AllReduceAlgorithm::ring, "RING requested"};
    case CommunicationImplementation::NCCL:
      return {AllReduceAlgorithm::ring, "NCCL requested; the CPU data plane runs the ring"};
    case CommunicationImplementation::AUTO:
      break;
  }
  const auto peers = static_cast<std::size_t>(ranks > 1 ? ranks - 1 : 1);
  if (bytes <= limits.direct_exchange_max_bytes / peers)
    return {AllReduceAlgorithm::direct_exchange, "AUTO, (workers - 1) x pack within the direct-exchange limit"};
  if (bytes > limits.halving_doubling_max_bytes)
    return {AllReduceAlgorithm::ring, "AUTO, pack above the halving-doubling limit"};
  return {AllReduceAlgorithm::halving_doubling, "AUTO, pack within the halving-doubling limit"};
}

std::unique_ptr<PeerCollective> make_all_reduce(const AllReduceChoice& choice, PeerLink& link, int rank, int size,
                                                Tensor flat, const RingOptions& ring, PackMemory memory,
                                                const Tensor*& reduced) {
  // Once per algorithm and process: a line per collective would flood a
  // training loop's log.
  static std::atomic<bool> logged[3] = {false, false, false};
  if (!logged[static_cast<int>(choice.algorithm)].exchange(true))
    TROUPE_LOG(info, "coll") << "all_reduce of " << flat.nbytes() << " bytes over " << size
                             << " workers: " << name(choice.algorithm) << " (" << choice.reason
                             << "; logged once per algorithm)";
  switch (choice.algorithm) {
    case AllReduceAlgorithm::ring: {
      RingOptions options = ring;
      options.in_place = memory.in_place;
      auto algorithm = std::make_unique<RingAllReduce>(link, rank, size, std::move(flat), options);
      reduced = &algorithm->buffer();
      return algorithm;
    }
    case AllReduceAlgorithm::halving_doubling: {
      auto algorithm = std::make_unique<HalvingDoublingAllReduce>(link, rank, size, std::move(flat), memory.in_place);
      reduced = &algorithm->buffer();
      return algorithm;
    }
    case AllReduceAlgorithm::direct_exchange:
      break;
  }
  auto algorithm = std::make_unique<DirectExchangeAllReduce>(link, rank, size, std::move(flat),
                                                             memory.callers || memory.in_place, memory.in_place);
  reduced = &algorithm->buffer();
  return algorithm;
}

} // namespace troupe::internal
