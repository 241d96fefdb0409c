#include <troupe/actors/replicas/collective_group_actor.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <memory>

#include <caf/all.hpp>

#include <troupe/actors/gpu/gpu_all_reduce.hpp>
#include <troupe/collectives/local_all_gather.hpp>
#include <troupe/collectives/tensor_packing.hpp>
#include <troupe/collectives/wire_payloads.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/hop_trace.hpp>
#include <troupe/core/in_place_bytes.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/timeline.hpp>

namespace troupe::internal {

namespace {

// Parts of a split all-reduce are at least this large, so that splitting pays
// for the extra message round.
constexpr std::size_t min_part_bytes = 64 << 10;

// Readable C++ type names for merge_call mismatches.
std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && name ? name.get() : type.name();
}

// Every replica's merge_call must pass the same argument types and expect the
// same result, or replica 0's function would read the others' arguments as
// the wrong types.
std::optional<std::string> check_merge_signatures(const auto& pending) {
  const auto* first = pending.contributions.front()->request->merge_signature;
  bool same = true;
  for (const auto& c : pending.contributions)
    same = same && c->request->merge_signature && *c->request->merge_signature == *first;
  if (same)
    return std::nullopt;
  std::string out = "the replicas called merge_call with different argument or result types: ";
  for (size_t i = 0; i < pending.contributions.size(); ++i) {
    const auto* sig = pending.contributions[i]->request->merge_signature;
    out += (i > 0 ? ", " : "") + std::string("replica ") + std::to_string(i) + " passed "
           + (sig ? type_name(*sig) : std::string("unknown types"));
  }
  return out + ". Every replica must call merge_call with the same argument types.";
}

// TPUStrategy's all_gather: each replica's shapes, when they are not all the same.
std::optional<std::string> differing_shapes(const auto& pending) {
  const auto& first = pending.contributions.front()->request->tensors;
  bool same = true;
  for (const auto& c : pending.contributions) {
    const auto& tensors = c->request->tensors;
    same = same && tensors.size() == first.size();
    for (size_t t = 0; same && t < tensors.size(); ++t)
      same = tensors[t].shape() == first[t].shape();
  }
  if (same)
    return std::nullopt;
  std::string out;
  for (const auto& c : pending.contributions) {
    std::string shapes;
    for (const auto& t : c->request->tensors)
      shapes += (shapes.empty() ? "" : ", ") + t.shape().to_string();
    out += (out.empty() ? "" : ", ") + ("replica " + std::to_string(c->replica) + " sent " + shapes);
  }
  return out;
}

// An all_reduce that some replicas asked in place and others not: which asked what.
std::optional<std::string> differing_in_place(const auto& pending) {
  const bool first = pending.contributions.front()->request->in_place;
  bool same = true;
  for (const auto& c : pending.contributions)
    same = same && c->request->in_place == first;
  if (same)
    return std::nullopt;
  std::string out;
  for (const auto& c : pending.contributions)
    out += (out.empty() ? "" : ", ") + ("replica " + std::to_string(c->replica) + " called "
                                        + (c->request->in_place ? "all_reduce_in_place" : "all_reduce"));
  return out;
}

// The text of the exception being handled.
std::string describe_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

} // namespace

CollectiveGroupActor::CollectiveGroupActor(caf::actor_config& cfg, GroupSetup setup)
  : CollectiveGroupActorHandle::base(cfg), setup_(std::move(setup)), progress_(setup_.devices.size()),
    recorder_(knobs().flight_recorder_entries) {
}

CollectiveGroupActor::behavior_type CollectiveGroupActor::make_behavior() {
  if (setup_.cluster) {
    cross_ = std::make_unique<CrossWorkerCollectives>(
      setup_.group_id, *setup_.cluster,
      [this](int to, const FrameHeader& header, FrameBytes bytes) {
        trace_hop(Hop::group_send, header.run, static_cast<uint8_t>(header.type));
        if (setup_.direct_link)
          setup_.direct_link->send(to, header, std::move(bytes));
        else
          send(setup_.link, LinkSendMsg{to, header, std::move(bytes)});
      },
      [this](const CollectiveKey& key, std::vector<Tensor> result) {
        if (auto i = pending_.find(key); i != pending_.end())
          deliver(key, i->second, std::move(result), nullptr);
      },
      [this](const CollectiveKey& key, Errc code, const std::string& why) {
        if (auto i = pending_.find(key); i != pending_.end())
          fail(key, i->second, code, why);
      });
    cross_->on_agreed([this](const CollectiveKey& key, const std::vector<std::string>& details,
                             const std::vector<CollectiveFingerprint>& fingerprints) {
      on_agreed(key, details, fingerprints);
    });
    cross_->on_algorithm([this](const CollectiveKey& key, const char* algorithm) {
      recorder_.set_algorithm(key, algorithm);
      if (auto i = pending_.find(key); i != pending_.end())
        i->second.algorithm = algorithm;
    });
    // From a link's thread, possibly after this actor is gone: a weak handle.
    cross_->on_frames_released([self = caf::actor_cast<caf::actor_addr>(this)](const CollectiveKey& key) {
      if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(self))
        caf::anon_send(caf::actor_cast<CollectiveGroupActorHandle>(strong), FramesReleasedMsg{key});
    });
    cross_->on_agreed_failed([this](const CollectiveKey& key, const std::string& why) {
      // Another worker's NCCL group of it failed: this worker's ranks of its
      // communicator would wait for that one's.
      if (auto i = agreed_on_.find(key); i != agreed_on_.end() && gpu_)
        gpu_->failed(i->second, why);
    });
    send(setup_.link, LinkRegisterMsg{setup_.group_id, LinkReceiverHandle{this}});
  }
  return {
    [this](const LinkFrameMsg& msg) {
      trace_hop(Hop::group_frame, msg.header.run, static_cast<uint8_t>(msg.header.type));
      if (cross_)
        cross_->on_frame(msg.from, msg.header, msg.bytes);
    },
    [this](const PeerLostMsg& msg) {
      if (cross_ && !msg.left)
        dump_flight_record("task " + cross_->task_name(msg.rank) + " was lost: " + msg.why);
      if (cross_)
        cross_->on_peer_lost(msg.rank, msg.why, msg.left);
      // NCCL ranks waiting for that worker would wait out their timeout.
      if (gpu_ && cross_ && !msg.left)
        gpu_->abandon("task " + cross_->task_name(msg.rank) + " was lost: " + msg.why);
    },
    [this](ContributionMsg& msg) { on_contribution(msg); },
    [this](ReplicaFinishedMsg& msg) { on_finished(msg); },
    [this](const PartDoneMsg& msg) { on_part_done(msg); },
    [this](const DeadlineTickMsg&) { on_tick(); },
    [this](const FramesReleasedMsg& msg) {
      if (cross_)
        cross_->frames_released(msg.key);
    },
    [this](const NcclCommunicatorFailedMsg& msg) {
      if (gpu_)
        gpu_->failed(msg.name, msg.why);
      // The other workers' ranks of it would wait for this one's.
      if (cross_)
        cross_->abort(msg.key, msg.why);
    },
  };
}

void CollectiveGroupActor::on_exit() {
  if (cross_) {
    // A step that failed here is the cause the other workers need, not
    // only that this strategy is gone.
    std::string cause;
    uint64_t failed_run = 0;
    for (size_t j = 0; j < progress_.participants(); ++j)
      if (const auto& p = progress_.progress(j); p.finished && !p.failure.empty() && p.run >= failed_run) {
        failed_run = p.run;
        cause = ", after its strategy.run #" + std::to_string(p.run) + " failed on replica " + std::to_string(j)
                + ": " + p.failure;
      }
    // The other workers must not wait out their timeout for this group.
    cross_->abort_pending("its strategy was destroyed before this collective ended" + cause);
    // Nor for collectives it never started: the link answers their announces with this.
    const AbortPayload gone{Errc::cancelled, "its strategy was destroyed before it reached this collective" + cause};
    send(setup_.link, LinkRegisterMsg{setup_.group_id, LinkReceiverHandle{}, gone.encode()});
  }
  cross_.reset();
  if (gpu_)
    gpu_->close();  // the device actors free its ranks once their collectives finished
  gpu_.reset();  // its callback holds this actor
  setup_.link = nullptr; // the link holds this actor until it reads the unregistration
  setup_.direct_link = nullptr; // after the aborts above left through it
}

std::string CollectiveGroupActor::replica_list(const std::vector<int>& ids) {
  std::string out = ids.size() == 1 ? "replica " : "replicas ";
  for (size_t i = 0; i < ids.size(); ++i)
    out += (i > 0 ? ", " : "") + std::to_string(ids[i]);
  return out;
}

std::string CollectiveGroupActor::who_sent_what(const Pending& pending) const {
  std::string out;
  for (size_t i = 0; i < pending.contributions.size(); ++i) {
    if (!pending.contributions[i])
      continue;
    if (!out.empty())
      out += ", ";
    out += "replica " + std::to_string(i) + " sent " + pending.contributions[i]->fingerprint.describe();
  }
  return out;
}

void CollectiveGroupActor::on_contribution(ContributionMsg& msg) {
  const auto key = msg.key;
  trace_hop(Hop::group_contribution, key.run);
  const auto replica = static_cast<size_t>(msg.replica);
  auto sender = caf::actor_cast<ReplicaActorHandle>(current_sender());
  // Every replica finished the previous runs before this one started.
  progress_.forget_runs_before(key.group, key.run);
  progress_.working_on(replica, key.run);
  if (const auto* failure = progress_.failure(key)) {
    send(sender, CollectiveDoneMsg{key, nullptr, failure->first, failure->second, nullptr});
    return;
  }
  auto [it, fresh] = pending_.try_emplace(key);
  auto& pending = it->second;
  if (fresh) {
    const auto n = setup_.devices.size();
    pending.contributions.resize(n);
    pending.senders.resize(n);
    pending.contributed_at.resize(n);
    const auto now = clock().now();
    pending.deadline = now + setup_.timeout;
    pending.stall_at = now + std::min(setup_.stall_warning, setup_.timeout);
    recorder_.begin(key, msg.fingerprint, now_ns());
  }
  pending.contributed_at[replica] = clock().now();
  pending.contributions[replica] = std::move(msg);
  pending.senders[replica] = std::move(sender);
  ++pending.arrived;
  if (fail_if_skipped(key, pending))
    return;
  if (pending.arrived == pending.contributions.size())
    complete(key, pending);
  else if (!timer_armed_)
    arm_timer();
}

bool CollectiveGroupActor::fail_if_skipped(const CollectiveKey& key, Pending& pending) {
  std::vector<int> skipped;
  std::string failures;
  for (auto j : progress_.skipped(key)) {
    skipped.push_back(static_cast<int>(j));
    if (const auto& failure = progress_.progress(j).failure; !failure.empty())
      failures += "; replica " + std::to_string(j) + " failed with: " + failure;
  }
  if (skipped.empty())
    return false;
  fail(key, pending, Errc::key_mismatch,
       describe(key) + " cannot complete: " + replica_list(skipped)
         + (failures.empty() ? " returned from the function without issuing it" : " stopped before issuing it")
         + ", while " + who_sent_what(pending) + failures
         + ". Every replica must issue the same collectives in the same order.");
  return true;
}

void CollectiveGroupActor::on_finished(ReplicaFinishedMsg& msg) {
  progress_.finished(static_cast<size_t>(msg.replica), msg.run, msg.issued, std::move(msg.failure));
  if (cross_)
    on_run_finished_everywhere(msg.run);
  // Collectives of this run that the replica never issued can no longer complete.
  std::vector<CollectiveKey> keys;
  for (auto& [key, pending] : pending_)
    if (key.run == msg.run && !pending.plan)
      keys.push_back(key);
  for (const auto& key : keys)
    if (auto i = pending_.find(key); i != pending_.end())
      fail_if_skipped(key, i->second);
}

void CollectiveGroupActor::on_run_finished_everywhere(uint64_t run) {
  uint32_t issued = UINT32_MAX;
  std::string failure;
  for (size_t j = 0; j < progress_.participants(); ++j) {
    const auto& p = progress_.progress(j);
    if (p.run != run || !p.finished)
      return;
    issued = std::min(issued, p.issued);
    if (failure.empty() && !p.failure.empty())
      failure = "replica " + std::to_string(j) + " failed with: " + p.failure;
  }
  // Every local replica returned: the other workers learn how far this one got.
  cross_->run_finished(run, issued, failure);
}

void CollectiveGroupActor::finish_local(const CollectiveKey& key, Pending& pending, std::vector<Tensor> tensors) {
  const auto& first = *pending.contributions.front()->request;
  if (!cross_ || first.kind == CollectiveKind::merge_call) {
    deliver(key, pending, std::move(tensors), nullptr);
    return;
  }
  pending.cross = true;
  const auto kind = first.kind;
  const auto op = first.op;
  const auto axis = first.axis;
  const bool in_place = first.in_place;
  // May complete (or fail) at once, which erases `pending`.
  cross_->start(key, kind, op, axis, std::move(tensors), in_place);
  if (!timer_armed_ && pending_.count(key))
    arm_timer();
}

void CollectiveGroupActor::complete(const CollectiveKey& key, Pending& pending) {
  std::vector<CollectiveFingerprint> fingerprints;
  for (const auto& c : pending.contributions)
    fingerprints.push_back(c->fingerprint);
  if (auto mismatch = check_fingerprints(fingerprints)) {
    fail(key, pending, Errc::key_mismatch,
         describe(key) + " failed: the replicas issued mismatched collectives: " + *mismatch
           + ". Every replica must issue the same collectives in the same order, with the same "
             "dtypes and shapes (all_gather: shapes may differ only along the axis).");
    return;
  }
  const auto& first = *pending.contributions.front()->request;
  if (auto differing = differing_in_place(pending)) {
    fail(key, pending, Errc::key_mismatch,
         describe(key) + " failed: " + *differing + "; every replica must call the same one");
    return;
  }
  try {
    switch (first.kind) {
      case CollectiveKind::all_reduce:
      case CollectiveKind::reduce_scatter:  // NCCL scatters; elsewhere each replica takes its block
        reduce(key, pending);
        return;
      case CollectiveKind::all_gather: {
        if (first.identical_shapes)
          if (auto differing = differing_shapes(pending)) {
            fail(key, pending, Errc::invalid_argument,
                 describe(key) + " failed: TPUStrategy's all_gather needs the same shape on every replica "
                   "(TPUs need static shapes), but " + *differing
                   + ": pad the values to one shape, or gather them with MirroredStrategy");
            return;
          }
        std::vector<std::vector<Tensor>> inputs;
        for (const auto& c : pending.contributions)
          inputs.push_back(c->request->tensors);
        if (GpuCollectives::wanted(inputs)) {
          gpu_collective(key, pending);
          return;
        }
        finish_local(key, pending, local_all_gather(inputs, first.axis));
        return;
      }
      case CollectiveKind::broadcast:
        if (GpuCollectives::wanted({first.tensors})) {
          gpu_collective(key, pending);
          return;
        }
        finish_local(key, pending, pending.contributions.front()->request->tensors);
        return;
      case CollectiveKind::merge_call: {
        if (auto mismatch = check_merge_signatures(pending)) {
          fail(key, pending, Errc::key_mismatch, describe(key) + " failed: " + *mismatch);
          return;
        }
        std::vector<MergeValue> args;
        for (const auto& c : pending.contributions)
          args.push_back(c->request->merge_args);
        MergeValue result;
        try {
          result = first.merge_fn(args);
        } catch (...) {
          // The user's function failed: every replica rethrows its exception as it was.
          fail(key, pending, Errc::cancelled, describe(key) + " (merge_call) failed: " + describe_exception(),
               std::current_exception());
          return;
        }
        deliver(key, pending, {}, std::move(result));
        return;
      }
    }
  } catch (const Error& e) {
    fail(key, pending, e.code(), describe(key) + " failed: " + e.what());
  } catch (...) {
    fail(key, pending, Errc::internal, describe(key) + " failed: " + describe_exception());
  }
}

void CollectiveGroupActor::reduce(const CollectiveKey& key, Pending& pending) {
  std::vector<std::vector<Tensor>> inputs;
  size_t bytes = 0;
  for (const auto& c : pending.contributions)
    inputs.push_back(c->request->tensors);
  for (const auto& t : inputs.front()) {
    if (t.dtype() == DType::bool_)
      throw Error(Errc::not_supported, std::string{troupe::name(pending.contributions.front()->request->kind)}
                                         + " of bool tensors is not supported: cast to int32 first");
    bytes += t.nbytes();
  }
  const auto n = inputs.size();
  // Across workers the local part sums, and the mean divides by every worker's replicas at the end.
  const auto op = cross_ ? ReduceOp::SUM : pending.contributions.front()->request->op;
  // In place (host tensors, ReplicaContext checks): reduced into the first
  // replica's memory, copied into the others' when it is done (deliver).
  const bool in_place = pending.contributions.front()->request->in_place;
  if (in_place)
    pending.in_place_targets = inputs;
  if (GpuCollectives::wanted(inputs)) {
    if (gpu_collectives().uses_nccl()) {
      gpu_collective(key, pending);
      return;
    }
    if (n == 1) {
      // One replica: the sum and the mean are its input, already on its GPU.
      finish_local(key, pending, std::move(inputs.front()));
      return;
    }
    // The replicas' fibers reduce on their GPUs' streams (GpuAllReduce::run).
    run_on_fibers(key, pending, std::make_shared<GpuAllReduce>(op, std::move(inputs), setup_.devices));
    return;
  }
  if (n == 1) {
    // One replica: the sum and the mean are its (immutable) input itself.
    finish_local(key, pending, std::move(inputs.front()));
    return;
  }
  const bool split = n > 1 && bytes > setup_.split_bytes;
  auto plan = std::make_shared<LocalAllReduce>(op, std::move(inputs), split ? n : 1, min_part_bytes, in_place);
  if (plan->num_parts() == 1) {
    plan->run_part(0);
    auto outputs = plan->outputs();
    plan.reset(); // the outputs' only owners now, so the cross-worker half reduces them in place
    finish_local(key, pending, std::move(outputs));
    return;
  }
  pending.plan = plan;
  pending.parts_left = plan->num_parts();
  for (size_t p = 0; p < plan->num_parts(); ++p)
    send(pending.senders[p], ReducePartMsg{key, plan, p});
}

void CollectiveGroupActor::on_part_done(const PartDoneMsg& msg) {
  auto i = pending_.find(msg.key);
  if (i == pending_.end() || !i->second.plan)
    return;
  if (!msg.failure.empty()) {
    fail(msg.key, i->second, Errc::internal, describe(msg.key) + " failed while reducing part "
                                               + std::to_string(msg.part) + ": " + msg.failure);
    return;
  }
  if (--i->second.parts_left == 0) {
    auto plan = std::move(i->second.plan);
    auto outputs = plan->outputs();
    plan.reset();
    finish_local(msg.key, i->second, std::move(outputs));
  }
}

void CollectiveGroupActor::deliver(const CollectiveKey& key, Pending& pending,
                                   std::vector<Tensor> tensors, MergeValue merge_result) {
  // A GPU result can only be the one replica's own value (a collective of one replica).
  for (const auto& t : tensors)
    if (!t.on_host()
        && (pending.senders.size() != 1 || t.device().short_name() != setup_.devices.front().short_name())) {
      fail(key, pending, Errc::not_supported,
           describe(key) + " failed: this collective does not take GPU tensors; copy them to the host first "
                           "(t.to(\"CPU:0\"))");
      return;
    }
  // In place: the other replicas' memory gets the result before any
  // replica resumes (the first one's framework may then write into its own).
  const auto& targets = pending.in_place_targets;
  for (size_t i = 1; i < targets.size(); ++i)
    for (size_t t = 0; t < tensors.size(); ++t)
      if (targets[i][t].raw_data() != tensors[t].raw_data())
        std::memcpy(in_place_bytes(targets[i][t]), tensors[t].raw_data(), tensors[t].nbytes());
  trace_hop(Hop::group_deliver, key.run);
  recorder_.end(key, now_ns(), std::nullopt);
  trace_collective(key, pending, "ok");
  std::vector<std::shared_ptr<CollectiveResult>> results;
  for (size_t i = 0; i < pending.senders.size(); ++i) {
    auto& result = results.emplace_back(std::make_shared<CollectiveResult>());
    result->tensors.reserve(tensors.size());
    // Host results stay in host memory for a replica on a GPU (its ops copy
    // them over when they need to); other host devices share the buffer.
    for (size_t j = 0; j < tensors.size(); ++j) {
      const auto& t = i > 0 && !targets.empty() ? targets[i][j] : tensors[j];
      result->tensors.push_back(setup_.devices[i].is_gpu() || !t.on_host() ? t : t.on_device(setup_.devices[i]));
    }
    result->merge_result = merge_result;
  }
  // This group's handles go before any replica resumes: an in-place caller
  // may hand the ones it gets straight back, as the only handles.
  auto senders = std::move(pending.senders);
  tensors.clear();
  pending_.erase(key);
  for (size_t i = 0; i < senders.size(); ++i)
    send(senders[i], CollectiveDoneMsg{key, std::move(results[i]), Errc::internal, {}, nullptr});
}

void CollectiveGroupActor::fail(const CollectiveKey& key, Pending& pending, Errc code,
                                const std::string& why, std::exception_ptr exception) {
  TROUPE_LOG(info, "coll") << why;
  recorder_.end(key, now_ns(), code);
  trace_collective(key, pending, std::string(::troupe::name(code)).c_str());
  if (code == Errc::timeout || code == Errc::key_mismatch)
    dump_flight_record(why);
  if (cross_)
    cross_->abort(key, why); // the other workers must not wait for this one
  for (size_t i = 0; i < pending.senders.size(); ++i)
    if (pending.senders[i])
      send(pending.senders[i], CollectiveDoneMsg{key, nullptr, code, why, exception});
  progress_.record_failure(key, code, why);
  pending_.erase(key);
}

void CollectiveGroupActor::trace_collective(const CollectiveKey& key, const Pending& pending, const char* outcome) {
  auto& timeline = Timeline::process();
  if (!timeline.on())
    return;
  const auto now = clock().now();
  const auto* first = pending.contributions.empty() || !pending.contributions.front()
                        ? nullptr
                        : &pending.contributions.front()->fingerprint;
  const std::string kind = first ? std::string(::troupe::name(first->kind)) : "collective";
  std::string args = "\"key\": " + Timeline::quoted(describe(key)) + ", \"outcome\": " + Timeline::quoted(outcome);
  if (first)
    args += ", \"what\": " + Timeline::quoted(first->describe()) + ", \"bytes\": " + std::to_string(block_bytes(*first));
  if (pending.algorithm)
    args += ", \"algorithm\": " + Timeline::quoted(pending.algorithm);
  for (size_t r = 0; r < pending.contributed_at.size(); ++r)
    if (pending.contributions[r])
      timeline.span(setup_.trace_pid, Timeline::replica_track(setup_.group_id, static_cast<int>(r)), kind,
                    "collective", pending.contributed_at[r], now, args);
}

} // namespace troupe::internal
