#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <troupe/actors/gpu/nccl_backend.hpp>

namespace troupe::testing {

/// NCCL emulated in host memory, for GPUs of an EmulatedGpuBackend: the
/// communicator protocol troupe drives (nonblocking creation, groups of
/// calls, abort) with NCCL's rules, so that tests on machines without GPUs
/// see what NCCL would do.
///
/// A communicator is `in_progress` until every rank called init_rank; two
/// ranks on one GPU fail it, as NCCL's "Duplicate GPU detected". A rank's
/// k-th group of calls leaves it `in_progress` until every rank issued its
/// k-th group; the last one to arrive runs the group for all of them (the
/// data moves then, in host memory) and they become `ready`. Groups that do
/// not match across ranks (kinds, counts, dtypes, roots) are what real NCCL
/// would hang or corrupt memory on: the emulation fails them and notes it in
/// misuse(), so that a test proves troupe never lets them through.
class EmulatedNcclBackend final : public internal::NcclBackend {
public:
  EmulatedNcclBackend();
  ~EmulatedNcclBackend() override;

  // -- internal::NcclBackend ----------------------------------------------------

  bool available() override { return true; }
  std::string unavailable_reason() override { return ""; }
  std::string version() override { return "emulated NCCL"; }
  internal::NcclUniqueId unique_id() override;
  internal::NcclComm init_rank(int gpu, const internal::NcclUniqueId& id, int ranks, int rank) override;
  internal::NcclState state(internal::NcclComm comm, std::string& error) override;
  internal::NcclState enqueue(int gpu, internal::NcclComm comm, internal::GpuStream stream,
                              const std::vector<internal::NcclCall>& calls, std::string& error) override;
  void abort(internal::NcclComm comm) noexcept override;

  // -- what tests look at and do ------------------------------------------------------

  /// Communicator ranks created so far / not yet aborted.
  [[nodiscard]] int ranks_created() const;
  [[nodiscard]] int ranks_alive() const;
  /// Ranks ended by abort().
  [[nodiscard]] int ranks_aborted() const;
  /// Groups of calls run, counted once per communicator (not per rank).
  [[nodiscard]] int groups_run() const;
  /// Calls of each kind run, counted once per communicator.
  [[nodiscard]] int calls_run(internal::NcclCall::Kind kind) const;
  /// Unique ids handed out.
  [[nodiscard]] int unique_ids() const;
  /// What real NCCL would not survive (mismatched groups, a call on an
  /// aborted or unknown communicator); empty when troupe used it right.
  [[nodiscard]] std::string misuse() const;
  /// Waits until `groups` groups were issued in all (counted per rank), or
  /// `timeout` passed; returns whether they were.
  [[nodiscard]] bool wait_for_issued(int groups, std::chrono::milliseconds timeout);
  /// Waits until `ranks` ranks were aborted in all, or `timeout` passed.
  [[nodiscard]] bool wait_for_aborted(int ranks, std::chrono::milliseconds timeout);
  /// From now on, the ranks on `gpu` report `error` (as NCCL's async error
  /// after a network failure): their groups fail, the others' wait for them.
  void fail_gpu(int gpu, std::string error);
  /// While stalled, groups that involve `gpu` never complete: the ranks stay
  /// in_progress, as ranks whose peer never arrives.
  void stall_gpu(int gpu, bool stalled = true);

private:
  struct Comm;
  struct Rank;

  Rank* rank_of(internal::NcclComm comm);
  void run_group_locked(Comm& comm, std::size_t index);
  void note(const std::string& problem);

  mutable std::mutex mutex_;
  uint64_t next_id_ = 1;
  std::map<std::array<unsigned char, internal::NcclUniqueId::size>, std::shared_ptr<Comm>> comms_;
  std::set<Rank*> ranks_;
  std::set<int> stalled_gpus_;
  std::map<int, std::string> failed_gpus_;
  int ranks_created_ = 0;
  int ranks_aborted_ = 0;
  int groups_run_ = 0;
  int groups_issued_ = 0;
  std::condition_variable changed_;  ///< a group issued, a rank aborted
  std::map<internal::NcclCall::Kind, int> calls_run_;
  std::string misuse_;
};

} // namespace troupe::testing
