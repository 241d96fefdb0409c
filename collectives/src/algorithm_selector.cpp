#include <troupe/collectives/algorithm_selector.hpp>

#include <troupe/collectives/halving_doubling_all_reduce.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

const char* name(AllReduceAlgorithm algorithm) noexcept {
  return algorithm == AllReduceAlgorithm::ring ? "ring" : "halving-doubling";
}

AllReduceChoice choose_all_reduce(CommunicationImplementation implementation, std::size_t bytes,
                                  std::size_t halving_doubling_max_bytes) {
  switch (implementation) {
    case CommunicationImplementation::RING:
      return {AllReduceAlgorithm::ring, "RING requested"};
    case CommunicationImplementation::NCCL:
      return {AllReduceAlgorithm::ring, "NCCL requested; the CPU data plane runs the ring"};
    case CommunicationImplementation::AUTO:
      break;
  }
  if (bytes > halving_doubling_max_bytes)
    return {AllReduceAlgorithm::ring, "AUTO, pack above the halving-doubling limit"};
  return {AllReduceAlgorithm::halving_doubling, "AUTO, pack within the halving-doubling limit"};
}

std::unique_ptr<PeerCollective> make_all_reduce(const AllReduceChoice& choice, PeerLink& link, int rank, int size,
                                                Tensor flat, const RingOptions& ring, const Tensor*& reduced) {
  TROUPE_LOG(debug, "coll") << "all_reduce of " << flat.nbytes() << " bytes over " << size << " workers: "
                            << name(choice.algorithm) << " (" << choice.reason << ")";
  if (choice.algorithm == AllReduceAlgorithm::ring) {
    auto algorithm = std::make_unique<RingAllReduce>(link, rank, size, std::move(flat), ring);
    reduced = &algorithm->buffer();
    return algorithm;
  }
  auto algorithm = std::make_unique<HalvingDoublingAllReduce>(link, rank, size, std::move(flat));
  reduced = &algorithm->buffer();
  return algorithm;
}

} // namespace troupe::internal
