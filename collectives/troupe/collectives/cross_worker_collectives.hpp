#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/communication_options.hpp>
#include <troupe/collectives/peer_link.hpp>
#include <troupe/collectives/progress_tracker.hpp>
#include <troupe/collectives/ring_all_reduce.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/net/link/frame_header.hpp>

namespace troupe::internal {

/// Where a group's worker stands in the cluster and how it talks to the others.
struct CrossWorkerSetup {
  int rank = 0;                        ///< this worker's rank among the collective's workers
  std::vector<std::string> task_names; ///< per rank, for messages: "worker:1 (127.0.0.1:4001)"
  int local_replicas = 1;              ///< replicas of this group in each worker
  CommunicationImplementation implementation = CommunicationImplementation::AUTO;
  int64_t bytes_per_pack = 0;              ///< 0: one pack per dtype
  /// AUTO: (workers - 1) x pack up to this uses a direct exchange
  std::size_t direct_exchange_max_bytes = 256 << 10;
  std::size_t halving_doubling_max_bytes = 64 << 10; ///< AUTO: packs up to this use halving-doubling
  RingOptions ring;
  /// Most payload of one data frame (TROUPE_MAX_FRAME_MIB): all-gather and
  /// broadcast send larger blocks in pieces of this size.
  std::size_t max_frame_bytes = std::size_t{64} << 20;
  /// GPU tensors cross workers through the host and this protocol, not
  /// NCCL: agreed at the strategy's creation, when some worker cannot run
  /// NCCL (each replica then copies its GPU tensors to the host and back).
  bool gpu_tensors_through_host = false;
};

/// The cross-worker half of a group's collectives (the hierarchical scheme:
/// local reduce, then this between one group actor per worker, then local
/// share). Owned and driven by the worker's CollectiveGroupActor; talks to the
/// other workers only through frames it hands to `send`.
///
/// Per collective key, on every worker:
///   1. start(): the local result is ready. Send an announce frame (this
///      worker's fingerprint) to every other worker, then start the algorithm
///      of each pack at once (all_reduce: ring or halving-doubling; all_gather
///      waits for every announce, since it needs the others' sizes).
///   2. Each announce is checked against this worker's fingerprint: a mismatch
///      fails the key on this worker, and, since every worker receives every
///      announce, on every worker, each naming what each task sent. Data
///      frames from a worker are consumed only after its announce matched
///      (they wait until then: frames of one sender arrive in order).
///   3. When every pack's algorithm is done, `done` gets the result (MEAN
///      divided by the number of replicas across all workers). An in-place
///      all_reduce waits until the links dropped the frames it sent out of
///      its caller's memory first (FramesInFlight).
/// Failures never hang: a worker that fails a key (locally, a mismatch, a
/// timeout) sends an abort frame to every other worker, which fail it with
/// that reason; a worker whose replicas returned from a run sends run_done
/// with how many collectives it issued, failing the keys it skipped on the
/// others; a lost peer (PeerLostMsg) fails every unfinished key and every
/// later one.
class CrossWorkerCollectives {
public:
  using Send = std::function<void(int to, const FrameHeader& header, FrameBytes bytes)>;
  using Done = std::function<void(const CollectiveKey& key, std::vector<Tensor> result)>;
  using Failed = std::function<void(const CollectiveKey& key, Errc code, const std::string& why)>;

  CrossWorkerCollectives(uint64_t group, CrossWorkerSetup setup, Send send, Done done, Failed failed);
  ~CrossWorkerCollectives();

  [[nodiscard]] int size() const noexcept { return static_cast<int>(setup_.task_names.size()); }
  [[nodiscard]] int rank() const noexcept { return setup_.rank; }
  [[nodiscard]] const std::string& task_name(int rank) const { return setup_.task_names.at(static_cast<size_t>(rank)); }

  /// Step 1 for all_reduce (`op`), all_gather (`axis`) or broadcast (from
  /// rank 0): `local` is this worker's result over its replicas (all_reduce:
  /// their SUM; broadcast: its first replica's tensors). `in_place` (an
  /// all_reduce whose caller handed troupe the only handles of `local`):
  /// the result is written into `local`'s own memory, and the tensors done()
  /// hands back are handles of it.
  void start(const CollectiveKey& key, CollectiveKind kind, ReduceOp op, int axis, std::vector<Tensor> local,
             bool in_place = false);

  /// Called once every worker announced `key` with a matching fingerprint,
  /// after agree(): every worker's details and fingerprint, by rank.
  using Agreed = std::function<void(const CollectiveKey& key, const std::vector<std::string>& details,
                                    const std::vector<CollectiveFingerprint>& fingerprints)>;
  void on_agreed(Agreed agreed) { agreed_ = std::move(agreed); }
  /// Called when another worker aborts a key after it was agreed (its NCCL
  /// group failed), with the reason.
  using AgreedFailed = std::function<void(const CollectiveKey& key, const std::string& why)>;
  void on_agreed_failed(AgreedFailed failed) { agreed_failed_ = std::move(failed); }
  /// Called when `key`'s algorithm across workers is chosen ("ring",
  /// "halving-doubling", "direct-exchange" for an all-reduce's first pack;
  /// "broadcast", "all-gather"), for the flight recorder and the timeline.
  using AlgorithmChosen = std::function<void(const CollectiveKey& key, const char* algorithm)>;
  void on_algorithm(AlgorithmChosen chosen) { algorithm_chosen_ = std::move(chosen); }
  /// Called, from any thread, when the links dropped the last frame an
  /// in-place all_reduce of `key` sent out of its caller's memory, if it
  /// was done and waiting for that; the owner then calls frames_released(key).
  using FramesReleased = std::function<void(const CollectiveKey& key)>;
  void on_frames_released(FramesReleased released) { frames_released_ = std::move(released); }
  /// The links dropped `key`'s frames (see on_frames_released): finish it.
  void frames_released(const CollectiveKey& key);

  /// Steps 1 and 2 only, for collectives that NCCL runs once the workers
  /// agree on them: announces `key` with the fingerprint of `local` (this
  /// worker's tensors, as start() would take them) and its `details` (rank
  /// 0's name the communicator to run it on);
  /// the Agreed callback follows when every announce matched (a mismatch
  /// fails the key everywhere, as for start()). The key ends there: what
  /// happens in NCCL is no longer this protocol's.
  void agree(const CollectiveKey& key, CollectiveKind kind, ReduceOp op, int axis, const std::vector<Tensor>& local,
             std::string details);

  /// A frame from worker `from` for this group.
  void on_frame(int from, const FrameHeader& header, const FrameBytes& bytes);

  /// Worker `rank` is gone: fail everything that needs it, now and later.
  /// A worker that `left` (said bye) sent all its frames first: a collective
  /// it had finished its part of still completes.
  void on_peer_lost(int rank, const std::string& why, bool left);

  /// This worker's replicas returned from run `run` after `issued` collectives.
  void run_finished(uint64_t run, uint32_t issued, const std::string& failure);

  /// `key` failed on this worker (before or after start): tell the others.
  void abort(const CollectiveKey& key, const std::string& why);

  /// This worker's group goes away (its strategy was destroyed): every key it
  /// started or heard of is aborted, so the other workers fail it now instead
  /// of waiting out their collective timeout.
  void abort_pending(const std::string& why);

  /// Whether `key` is between start() and its end.
  [[nodiscard]] bool active(const CollectiveKey& key) const { return keys_.count(key) != 0; }

  /// Who `key` waits for: "task worker:1 has not announced it; ...".
  [[nodiscard]] std::string waiting_for(const CollectiveKey& key) const;

private:
  struct Key;
  class PackLink;

  void begin(const CollectiveKey& key, CollectiveKind kind, ReduceOp op, int axis, std::vector<Tensor> local,
             std::optional<std::string> communicator, bool in_place);
  /// Every announce is in: start the algorithms, or end an agreement.
  void all_announced(const CollectiveKey& key, Key& state);
  void check_announce(const CollectiveKey& key, Key& state, int from);
  void start_algorithms(const CollectiveKey& key, Key& state);
  void consume_waiting(const CollectiveKey& key, Key& state);
  void maybe_finish(const CollectiveKey& key, Key& state);
  void fail_key(const CollectiveKey& key, Errc code, const std::string& why, bool tell_peers);
  /// Forgets the failures of runs that this worker and every live peer are done with.
  void forget_finished_runs(uint64_t current_run);
  /// Fails `key` if it still needs a frame of a worker that is gone; true if it did.
  bool fail_if_needs_gone(const CollectiveKey& key, Key& state);
  [[nodiscard]] std::optional<std::string> skipped_by_peer(const CollectiveKey& key) const;
  void send_frame(int to, FrameType type, const CollectiveKey& key, uint32_t pack, uint32_t tag, FrameBytes bytes);
  void send_abort(const CollectiveKey& key, Errc code, const std::string& why);

  uint64_t group_;
  CrossWorkerSetup setup_;
  Send send_;
  Done done_;
  Failed failed_;
  Agreed agreed_;
  AgreedFailed agreed_failed_;
  AlgorithmChosen algorithm_chosen_;
  FramesReleased frames_released_;
  std::map<CollectiveKey, std::unique_ptr<Key>> keys_;
  /// Per rank: its latest finished run; and the keys that failed here, for
  /// frames and starts that come late.
  ProgressTracker progress_;
  std::map<int, std::string> lost_;
  std::set<int> left_; ///< lost ranks that said bye first
};

} // namespace troupe::internal
