#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

struct CollectiveMembership;

/// The group id of every worker's AgreementGroup (cluster strategies count from 1).
inline constexpr uint64_t agreement_group_id = 0;

/// One collective group per cluster process, with one replica on CPU:0, that
/// carries the workers' agreements: each exchange() is one all_gather of
/// every worker's bytes, matched with the other workers' exchanges in the
/// order each worker makes them. Its settings are fixed (never the
/// CommunicationOptions or knobs being agreed on), and a worker's replica
/// count does not enter it, so a configuration that differs between workers
/// cannot break the agreement that is meant to name it. Owned by RuntimeImpl;
/// see docs/protocol.md ("Agreeing at strategy creation").
class AgreementGroup {
public:
  /// Its one replica runs on `device` (the runtime's first CPU).
  AgreementGroup(Executor& runtime, const DeviceSpec& device, const CollectiveMembership& cluster);
  ~AgreementGroup();
  AgreementGroup(const AgreementGroup&) = delete;
  AgreementGroup& operator=(const AgreementGroup&) = delete;

  /// Every worker's `mine`, by rank (this worker's at its own rank). Blocks
  /// the calling (non-actor) thread until every worker made its exchange of
  /// the same number, or throws the collective's Error: timeout after
  /// TROUPE_COLLECTIVE_TIMEOUT_SECONDS naming the tasks that have not made
  /// it, peer_lost when one is gone. One exchange at a time per process.
  [[nodiscard]] std::vector<std::string> exchange(const std::string& mine);

private:
  std::mutex mutex_;
  int workers_;
  std::unique_ptr<ReplicaGroup> group_;
};

/// `bytes` as one block of a uint8 all_gather: its length (u64), then the bytes.
[[nodiscard]] Tensor pack_block(const std::string& bytes);

/// The `count` blocks pack_block made, gathered into one tensor in order.
/// Error(data_loss) unless it holds exactly `count` whole blocks.
[[nodiscard]] std::vector<std::string> unpack_blocks(const Tensor& gathered, std::size_t count);

} // namespace troupe::internal
