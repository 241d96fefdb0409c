#include <troupe/collectives/cross_worker_collectives.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>

#include <troupe/collectives/algorithm_selector.hpp>
#include <troupe/collectives/frames_in_flight.hpp>
#include <troupe/collectives/local_all_gather.hpp>
#include <troupe/collectives/peer_all_gather.hpp>
#include <troupe/collectives/peer_broadcast.hpp>
#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/collectives/tensor_packing.hpp>
#include <troupe/collectives/wire_payloads.hpp>
#include <troupe/core/in_place_bytes.hpp>
#include <troupe/core/log.hpp>
#include <troupe/ops/tensor_ops.hpp>

namespace troupe::internal {


/// One pack of tensors reduced by one algorithm instance.
struct Pack {
  TensorPack tensors;
  /// In place: the frames sent out of the caller's memory (a tensor alone in its pack).
  std::shared_ptr<FramesInFlight> in_flight;
  std::unique_ptr<PeerLink> link;
  std::unique_ptr<PeerCollective> algorithm;
  const Tensor* reduced = nullptr; ///< all_reduce: the algorithm's buffer
};

struct CrossWorkerCollectives::Key {
  bool started = false;
  CollectiveKind kind = CollectiveKind::all_reduce;
  ReduceOp op = ReduceOp::SUM;
  int axis = 0;
  bool in_place = false; ///< all_reduce into `local`'s own memory
  CollectiveFingerprint mine;
  std::vector<Tensor> local;
  std::vector<std::optional<CollectiveFingerprint>> announced;
  std::vector<bool> verified;
  bool agreement_only = false;          ///< agree(): no algorithm, NCCL runs it
  std::vector<std::string> communicators; ///< [rank]: the NCCL details of its announce
  int verified_count = 0;
  std::vector<Pack> packs;
  bool algorithms_started = false;
  /// Data frames per sender that wait for its announce or for the algorithms.
  std::vector<std::deque<std::pair<FrameHeader, FrameBytes>>> waiting;

  explicit Key(int n)
    : announced(static_cast<size_t>(n)), verified(static_cast<size_t>(n), false),
      communicators(static_cast<size_t>(n)), waiting(static_cast<size_t>(n)) {}
};

/// The PeerLink one pack's algorithm sends through: frames tagged with the key and pack.
class CrossWorkerCollectives::PackLink final : public PeerLink {
public:
  PackLink(CrossWorkerCollectives& owner, CollectiveKey key, uint32_t pack,
           std::shared_ptr<FramesInFlight> in_flight = nullptr)
    : owner_(owner), key_(key), pack_(pack), in_flight_(std::move(in_flight)) {}
  void send(int rank, uint32_t tag, FrameBytes bytes) override {
    owner_.send_frame(rank, FrameType::data, key_, pack_, tag,
                      in_flight_ ? in_flight_->track(std::move(bytes)) : std::move(bytes));
  }

private:
  CrossWorkerCollectives& owner_;
  CollectiveKey key_;
  uint32_t pack_;
  std::shared_ptr<FramesInFlight> in_flight_;
};

CrossWorkerCollectives::CrossWorkerCollectives(uint64_t group, CrossWorkerSetup setup, Send send, Done done,
                                               Failed failed)
  : group_(group), setup_(std::move(setup)), send_(std::move(send)), done_(std::move(done)),
    failed_(std::move(failed)), progress_(setup_.task_names.size()) {
}

CrossWorkerCollectives::~CrossWorkerCollectives() = default;

void CrossWorkerCollectives::send_frame(int to, FrameType type, const CollectiveKey& key, uint32_t pack,
                                        uint32_t tag, FrameBytes bytes) {
  if (lost_.count(to) != 0)
    return;
  FrameHeader header;
  header.type = type;
  header.pack = pack;
  header.tag = tag;
  header.group = group_;
  header.run = key.run;
  header.seq = key.seq;
  if (bytes.size > UINT32_MAX)
    fail(Errc::not_supported, describe(key) + ": one frame of " + std::to_string(bytes.size)
                                + " bytes exceeds the data plane's 4 GiB frame limit; split the tensor");
  header.size = static_cast<uint32_t>(bytes.size);
  send_(to, header, std::move(bytes));
}

std::optional<std::string> CrossWorkerCollectives::skipped_by_peer(const CollectiveKey& key) const {
  const auto skipped = progress_.skipped(key);
  if (skipped.empty())
    return std::nullopt;
  const auto r = static_cast<int>(skipped.front());
  const auto& p = progress_.progress(skipped.front());
  return "task " + task_name(r) + " returned from strategy.run #" + std::to_string(key.run) + " after issuing "
         + std::to_string(p.issued) + " collectives, so it never issued " + describe(key)
         + (p.failure.empty() ? "" : " (it failed with: " + p.failure + ")")
         + ". Every worker must issue the same collectives in the same order.";
}

void CrossWorkerCollectives::start(const CollectiveKey& key, CollectiveKind kind, ReduceOp op, int axis,
                                   std::vector<Tensor> local, bool in_place) {
  begin(key, kind, op, axis, std::move(local), std::nullopt, in_place);
}

void CrossWorkerCollectives::agree(const CollectiveKey& key, CollectiveKind kind, ReduceOp op, int axis,
                                   const std::vector<Tensor>& local, std::string details) {
  begin(key, kind, op, axis, local, std::move(details), false);
}

void CrossWorkerCollectives::begin(const CollectiveKey& key, CollectiveKind kind, ReduceOp op, int axis,
                                   std::vector<Tensor> local, std::optional<std::string> communicator,
                                   bool in_place) {
  forget_finished_runs(key.run);
  if (const auto* failure = progress_.failure(key)) {
    failed_(key, failure->first, failure->second);
    return;
  }
  auto& slot = keys_[key];
  if (!slot)
    slot = std::make_unique<Key>(size());
  auto& state = *slot;
  state.started = true; // from here on, fail_key reports to the group
  // A peer that returned without issuing this collective explains more than
  // its later exit does.
  if (auto skipped = skipped_by_peer(key)) {
    fail_key(key, Errc::key_mismatch, describe(key) + " cannot complete: " + *skipped, true);
    return;
  }
  for (const auto& [rank, why] : lost_)
    if (left_.count(rank) == 0) {
      fail_key(key, Errc::peer_lost, describe(key) + " cannot run: task " + task_name(rank) + " was lost: " + why,
               false);
      return;
    }
  state.kind = kind;
  state.op = op;
  state.axis = axis;
  state.in_place = in_place && kind == CollectiveKind::all_reduce;
  state.mine = CollectiveFingerprint::of(kind, op, axis, local);
  state.agreement_only = communicator.has_value();
  if (state.agreement_only)
    state.communicators[static_cast<size_t>(rank())] = *communicator;
  else
    state.local = std::move(local);
  state.announced[static_cast<size_t>(rank())] = state.mine;
  state.verified[static_cast<size_t>(rank())] = true;
  ++state.verified_count;
  const auto announce = AnnouncePayload{state.mine, setup_.local_replicas, communicator.value_or("")}.encode();
  for (int r = 0; r < size(); ++r)
    if (r != rank())
      send_frame(r, FrameType::announce, key, 0, 0, announce);
  for (int r = 0; r < size(); ++r)
    if (r != rank() && state.announced[static_cast<size_t>(r)] && !state.verified[static_cast<size_t>(r)]) {
      check_announce(key, state, r);
      if (!keys_.count(key))
        return;
    }
  // all_reduce and broadcast start at once; all_gather needs every block's
  // size first, an agreement every announce.
  if (state.verified_count == size())
    all_announced(key, state);
  else if (kind != CollectiveKind::all_gather && !state.agreement_only)
    start_algorithms(key, state);
  // A worker that left may have sent all this worker needs of `key` before it went.
  if (auto i = keys_.find(key); i != keys_.end() && !lost_.empty())
    fail_if_needs_gone(key, *i->second);
}

void CrossWorkerCollectives::forget_finished_runs(uint64_t current_run) {
  // A failure must outlive every frame and start that can still name it:
  // this worker's own (it works on `current_run` now, so it is done with the
  // runs before) and each live peer's, which are done with a run once its
  // run_done arrived (frames of one sender arrive in order). A peer may be
  // several runs behind, e.g. after runs without collectives.
  if (current_run == 0)
    return;
  uint64_t done_everywhere = current_run - 1;
  for (int r = 0; r < size(); ++r) {
    if (r == rank() || lost_.count(r) != 0)
      continue;
    const auto& p = progress_.progress(static_cast<size_t>(r));
    done_everywhere = std::min(done_everywhere, p.finished ? p.run : uint64_t{0});
  }
  if (done_everywhere > 0)
    progress_.forget_runs_before(group_, done_everywhere + 1);
}

bool CrossWorkerCollectives::fail_if_needs_gone(const CollectiveKey& key, Key& state) {
  for (const auto& [rank, why] : lost_) {
    bool needs = !state.announced[static_cast<size_t>(rank)];
    if (!needs && state.algorithms_started)
      for (const auto& pack : state.packs)
        needs = needs || pack.algorithm->waits_for(rank);
    if (needs) {
      fail_key(key, Errc::peer_lost, describe(key) + " failed: task " + task_name(rank) + " was lost: " + why, false);
      return true;
    }
  }
  return false;
}

void CrossWorkerCollectives::check_announce(const CollectiveKey& key, Key& state, int from) {
  // Called once this worker started; `from`'s announce is there.
  const auto& theirs = *state.announced[static_cast<size_t>(from)];
  if (auto mismatch = check_fingerprints({state.mine, theirs}, {"task " + task_name(rank()), "task " + task_name(from)})) {
    fail_key(key, Errc::key_mismatch,
             describe(key) + " failed: the workers issued mismatched collectives: " + *mismatch
               + ". Every worker must issue the same collectives in the same order, with the same dtypes and "
                 "shapes (all_gather: shapes may differ only along the axis).",
             true);
    return;
  }
  state.verified[static_cast<size_t>(from)] = true;
  ++state.verified_count;
}

void CrossWorkerCollectives::all_announced(const CollectiveKey& key, Key& state) {
  if (!state.agreement_only) {
    if (!state.algorithms_started)
      start_algorithms(key, state);
    return;
  }
  std::vector<CollectiveFingerprint> fingerprints;
  for (const auto& fp : state.announced)
    fingerprints.push_back(*fp);
  const auto details = std::move(state.communicators);
  keys_.erase(key);
  if (agreed_)
    agreed_(key, details, fingerprints);
}

void CrossWorkerCollectives::start_algorithms(const CollectiveKey& key, Key& state) {
  state.algorithms_started = true;
  try {
    if (reduces(state.kind)) {  // a reduce_scatter's replicas take their blocks of the result
      for (auto& tensors : plan_packs(state.local, setup_.bytes_per_pack)) {
        auto& pack = state.packs.emplace_back();
        pack.tensors = std::move(tensors);
        auto flat = flatten(state.local, pack.tensors);
        const auto choice =
          choose_all_reduce(setup_.implementation, flat.nbytes(), size(),
                            {setup_.direct_exchange_max_bytes, setup_.halving_doubling_max_bytes});
        // In place, a tensor alone in its pack is reduced in the caller's
        // memory; a fused pack's buffer is troupe's, copied back at the end.
        // The direct exchange sends a snapshot: nothing of the caller's to wait for.
        const bool in_place = state.in_place && pack.tensors.tensors.size() == 1;
        if (in_place && choice.algorithm != AllReduceAlgorithm::direct_exchange)
          pack.in_flight = std::make_shared<FramesInFlight>([released = frames_released_, key] {
            if (released)
              released(key);
          });
        pack.link = std::make_unique<PackLink>(*this, key, static_cast<uint32_t>(state.packs.size() - 1),
                                               pack.in_flight);
        // A single tensor is the caller's own, unless it is the sum troupe
        // made of several local replicas' (in place, the first one's memory).
        const bool callers = pack.tensors.tensors.size() == 1 && (setup_.local_replicas == 1 || state.in_place);
        const PackMemory memory{.callers = callers, .in_place = in_place};
        pack.algorithm = make_all_reduce(choice, *pack.link, rank(), size(), std::move(flat), setup_.ring, memory,
                                         pack.reduced);
        if (state.packs.size() == 1 && algorithm_chosen_)
          algorithm_chosen_(key, name(choice.algorithm));
      }
    } else if (state.kind == CollectiveKind::broadcast) {
      // From rank 0 (the chief); the others expect their own fingerprint's
      // size, which the announces check against the root's.
      auto block = rank() == 0 ? to_block(state.local) : std::make_shared<std::vector<std::byte>>();
      state.packs.emplace_back();
      auto& pack = state.packs.back();
      pack.link = std::make_unique<PackLink>(*this, key, 0);
      pack.algorithm = std::make_unique<PeerBroadcast>(*pack.link, rank(), size(), 0, frame_of(block),
                                                       block_bytes(state.mine), setup_.max_frame_bytes);
      if (algorithm_chosen_)
        algorithm_chosen_(key, "broadcast");
    } else {
      // all_gather: this worker's tensors as one block, the others' sizes from their announces.
      auto block = to_block(state.local);
      std::vector<std::size_t> sizes;
      for (const auto& fp : state.announced)
        sizes.push_back(block_bytes(*fp));
      state.packs.emplace_back();
      auto& pack = state.packs.back();
      pack.link = std::make_unique<PackLink>(*this, key, 0);
      pack.algorithm =
        std::make_unique<PeerAllGather>(*pack.link, rank(), size(), frame_of(block), sizes, setup_.max_frame_bytes);
      if (algorithm_chosen_)
        algorithm_chosen_(key, "all-gather");
    }
    for (auto& pack : state.packs)
      pack.algorithm->start();
  } catch (const Error& e) {
    fail_key(key, e.code(), describe(key) + " failed: " + e.what(), true);
    return;
  }
  consume_waiting(key, state);
}

void CrossWorkerCollectives::consume_waiting(const CollectiveKey& key, Key& state) {
  if (!state.algorithms_started)
    return;
  for (int r = 0; r < size(); ++r) {
    auto& queue = state.waiting[static_cast<size_t>(r)];
    while (state.verified[static_cast<size_t>(r)] && !queue.empty()) {
      auto [header, bytes] = std::move(queue.front());
      queue.pop_front();
      try {
        if (header.pack >= state.packs.size())
          fail(Errc::internal, "task " + task_name(r) + " sent a frame of pack " + std::to_string(header.pack)
                                 + " where this worker has " + std::to_string(state.packs.size()) + " packs");
        state.packs[header.pack].algorithm->on_frame(r, header.tag, bytes);
      } catch (const Error& e) {
        fail_key(key, e.code(), describe(key) + " failed: " + e.what(), true);
        return;
      }
    }
  }
  maybe_finish(key, state);
}

void CrossWorkerCollectives::maybe_finish(const CollectiveKey& key, Key& state) {
  if (state.verified_count < size())
    return;
  for (const auto& pack : state.packs)
    if (!pack.algorithm->done())
      return;
  for (const auto& pack : state.packs)
    if (pack.in_flight && !pack.in_flight->settled())
      return; // frames_released() comes back here
  std::vector<Tensor> result;
  try {
    if (reduces(state.kind)) {
      result.resize(state.local.size());
      const auto replicas = setup_.local_replicas * size();
      for (auto& pack : state.packs) {
        // A tensor alone in its pack was reduced in its own memory; a fused
        // pack's buffer goes back into the caller's, as Horovod's fusion buffer.
        if (state.in_place && pack.tensors.tensors.size() > 1)
          unflatten_into(*pack.reduced, pack.tensors, state.local, result);
        else
          unflatten(*pack.reduced, pack.tensors, state.mine.shapes, result);
      }
      // One replica in all (a cluster of one worker): the mean is the sum,
      // whatever the dtype.
      if (state.op == ReduceOp::MEAN && replicas > 1)
        for (auto& t : result) {
          if (state.in_place)
            divide_elements(t.dtype(), in_place_bytes(t), t.num_elements(), static_cast<double>(replicas));
          else
            t = t / static_cast<double>(replicas);
        }
    } else if (state.kind == CollectiveKind::broadcast) {
      if (rank() == 0) {
        result = state.local;
      } else {
        result = from_block(state.mine, static_cast<PeerBroadcast&>(*state.packs.front().algorithm).bytes().data);
      }
    } else {
      const auto& blocks = static_cast<PeerAllGather&>(*state.packs.front().algorithm).blocks();
      std::vector<std::vector<Tensor>> inputs(static_cast<size_t>(size()));
      for (int r = 0; r < size(); ++r) {
        if (r == rank()) {
          inputs[static_cast<size_t>(r)] = state.local;
          continue;
        }
        inputs[static_cast<size_t>(r)] = from_block(*state.announced[static_cast<size_t>(r)],
                                                     blocks[static_cast<size_t>(r)].data);
      }
      result = local_all_gather(inputs, state.axis);
    }
  } catch (const Error& e) {
    fail_key(key, e.code(), describe(key) + " failed: " + e.what(), true);
    return;
  }
  keys_.erase(key);
  done_(key, std::move(result));
}

void CrossWorkerCollectives::frames_released(const CollectiveKey& key) {
  if (auto i = keys_.find(key); i != keys_.end())
    maybe_finish(key, *i->second);
}

void CrossWorkerCollectives::on_frame(int from, const FrameHeader& header, const FrameBytes& bytes) {
  const CollectiveKey key{group_, header.run, header.seq};
  if (header.type == FrameType::run_done) {
    RunDonePayload done;
    try {
      done = RunDonePayload::decode(bytes);
    } catch (const Error& e) {
      TROUPE_LOG(error, "coll") << "task " << task_name(from) << " sent an unreadable run_done frame: " << e.what();
      return;
    }
    progress_.finished(static_cast<size_t>(from), header.run, done.issued, std::move(done.failure));
    std::vector<CollectiveKey> skipped;
    for (const auto& [k, state] : keys_)
      if (k.run == header.run && k.seq >= done.issued)
        skipped.push_back(k);
    for (const auto& k : skipped)
      if (auto why = skipped_by_peer(k))
        fail_key(k, Errc::key_mismatch, describe(k) + " cannot complete: " + *why, true);
    return;
  }
  if (progress_.failure(key) != nullptr)
    return; // a late frame of a collective that already failed here
  if (header.type == FrameType::abort) {
    // The payload carries the sender's error code, so every worker fails with
    // the same code (key_mismatch, timeout, ...).
    AbortPayload abort;
    try {
      abort = AbortPayload::decode(bytes);
    } catch (const Error& e) {
      abort = AbortPayload{Errc::data_loss, e.what()};
    }
    const std::string why = describe(key) + " failed on task " + task_name(from) + ": " + abort.reason;
    if (agreed_failed_ && !keys_.count(key))
      agreed_failed_(key, why);  // agreed already, or not started here
    fail_key(key, abort.code, why, false);
    return;
  }
  if (header.type != FrameType::announce && header.type != FrameType::data) {
    fail_key(key, Errc::internal, describe(key) + " failed: task " + task_name(from) + " sent a frame of type "
                                    + std::to_string(static_cast<int>(header.type))
                                    + ", which the collective protocol does not have there",
             true);
    return;
  }
  auto& slot = keys_[key];
  if (!slot)
    slot = std::make_unique<Key>(size());
  auto& state = *slot;
  if (header.type == FrameType::announce) {
    // Counted once per worker: a second announce would count a worker twice
    // and let an all_gather start without another's block.
    if (state.announced[static_cast<size_t>(from)]) {
      fail_key(key, Errc::internal, describe(key) + " failed: task " + task_name(from) + " announced it twice", true);
      return;
    }
    try {
      auto announce = AnnouncePayload::decode(bytes);
      if (announce.local_replicas != setup_.local_replicas)
        fail(Errc::invalid_argument, "task " + task_name(from) + " runs " + std::to_string(announce.local_replicas)
                                       + " replicas of this strategy and task " + task_name(rank()) + " runs "
                                       + std::to_string(setup_.local_replicas)
                                       + "; every worker must run the same number of replicas");
      state.announced[static_cast<size_t>(from)] = std::move(announce.fingerprint);
      state.communicators[static_cast<size_t>(from)] = std::move(announce.communicator);
    } catch (const Error& e) {
      fail_key(key, e.code(), describe(key) + " failed: " + e.what(), true);
      return;
    }
    if (!state.started)
      return;
    check_announce(key, state, from);
    if (!keys_.count(key))
      return;
    if (state.verified_count == size())
      all_announced(key, state);
    if (keys_.count(key) != 0)
      consume_waiting(key, state);
    return;
  }
  state.waiting[static_cast<size_t>(from)].emplace_back(header, bytes);
  if (state.started)
    consume_waiting(key, state);
}

void CrossWorkerCollectives::fail_key(const CollectiveKey& key, Errc code, const std::string& why, bool tell_peers) {
  if (tell_peers)
    send_abort(key, code, why);
  progress_.record_failure(key, code, why);
  const bool started = keys_.count(key) != 0 && keys_[key]->started;
  keys_.erase(key);
  if (started)
    failed_(key, code, why);
}

void CrossWorkerCollectives::send_abort(const CollectiveKey& key, Errc code, const std::string& why) {
  const auto payload = AbortPayload{code, why}.encode();
  for (int r = 0; r < size(); ++r)
    if (r != rank())
      send_frame(r, FrameType::abort, key, 0, 0, payload);
}

void CrossWorkerCollectives::abort(const CollectiveKey& key, const std::string& why) {
  if (progress_.failure(key) != nullptr)
    return;
  send_abort(key, Errc::cancelled, why);
  progress_.record_failure(key, Errc::cancelled, why);
  keys_.erase(key);
}

void CrossWorkerCollectives::abort_pending(const std::string& why) {
  std::vector<CollectiveKey> pending;
  for (const auto& [key, state] : keys_)
    pending.push_back(key);
  for (const auto& key : pending)
    abort(key, why);
}

void CrossWorkerCollectives::on_peer_lost(int rank, const std::string& loss, bool left) {
  // A peer whose last step failed (its run_done said why) and that then
  // ended names that failure: it is the cause, its exit only the news.
  std::string why = loss;
  if (const auto& p = progress_.progress(static_cast<size_t>(rank)); p.finished && !p.failure.empty())
    why += ", after its strategy.run #" + std::to_string(p.run) + " failed: " + p.failure;
  if (!lost_.emplace(rank, why).second)
    return;
  TROUPE_LOG(info, "net") << "task " << task_name(rank) << (left ? " left: " : " was lost: ") << why;
  std::vector<CollectiveKey> pending;
  for (const auto& [key, state] : keys_)
    pending.push_back(key);
  if (left) {
    // Its frames all arrived before its bye: only what still needs it fails
    // (keys not started here are checked when they start).
    left_.insert(rank);
    for (const auto& key : pending)
      if (auto i = keys_.find(key); i != keys_.end() && i->second->started)
        fail_if_needs_gone(key, *i->second);
    return;
  }
  for (const auto& key : pending) {
    if (auto skipped = skipped_by_peer(key))
      fail_key(key, Errc::key_mismatch, describe(key) + " cannot complete: " + *skipped, false);
    else
      fail_key(key, Errc::peer_lost, describe(key) + " failed: task " + task_name(rank) + " was lost: " + why, false);
  }
}

void CrossWorkerCollectives::run_finished(uint64_t run, uint32_t issued, const std::string& failure) {
  const auto payload = RunDonePayload{issued, failure}.encode();
  for (int r = 0; r < size(); ++r)
    if (r != rank())
      send_frame(r, FrameType::run_done, CollectiveKey{group_, run, 0}, 0, 0, payload);
}

std::string CrossWorkerCollectives::waiting_for(const CollectiveKey& key) const {
  auto i = keys_.find(key);
  if (i == keys_.end())
    return "nothing (it already ended)";
  const auto& state = *i->second;
  std::string out;
  for (int r = 0; r < size(); ++r) {
    if (r == rank())
      continue;
    if (!state.announced[static_cast<size_t>(r)])
      out += (out.empty() ? "" : ", ") + std::string("task ") + task_name(r) + " has not issued it";
  }
  bool algorithms_done = state.algorithms_started;
  for (const auto& pack : state.packs)
    algorithms_done = algorithms_done && pack.algorithm->done();
  if (out.empty())
    out = algorithms_done && state.in_place
            ? "every task's data arrived; this worker's transport still holds frames it sent out of the caller's "
              "memory (all_reduce_in_place)"
            : "every task issued it; its data is still in flight between the workers";
  return out;
}

} // namespace troupe::internal
