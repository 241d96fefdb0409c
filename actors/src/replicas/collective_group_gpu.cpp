// The collective group's GPU route (CollectiveGroupActor): collectives of
// GPU tensors run on the replicas' fibers, through NCCL across replicas and,
// once every worker announced the same collective, across workers.

#include <troupe/actors/replicas/collective_group_actor.hpp>

#include <memory>

#include <caf/all.hpp>

#include <troupe/actors/gpu/nccl_announcement.hpp>

namespace troupe::internal {

namespace {

// Collectives that went to NCCL across workers, remembered with their
// communicator so that another worker's failure of one aborts it here.
constexpr std::size_t max_agreed_remembered = 256;

} // namespace

void CollectiveGroupActor::run_on_fibers(const CollectiveKey& key, Pending& pending,
                                         std::shared_ptr<FiberCollective> plan) {
  for (const auto& sender : pending.senders) {
    auto result = std::make_shared<CollectiveResult>();
    result->on_fiber = plan;
    send(sender, CollectiveDoneMsg{key, std::move(result), Errc::internal, {}, nullptr});
  }
  pending_.erase(key);
}

void CollectiveGroupActor::gpu_collective(const CollectiveKey& key, Pending& pending) {
  const auto& first = *pending.contributions.front()->request;
  if (!cross_ && pending.contributions.size() == 1 && !gpu_collectives().uses_nccl()) {
    // One replica: its all_gather and its broadcast are its own values.
    finish_local(key, pending, first.tensors);
    return;
  }
  if (!gpu_collectives().uses_nccl())
    throw Error(Errc::not_supported, std::string{troupe::name(first.kind)}
                                       + " of GPU tensors runs through NCCL, which this group does not use (see "
                                         "the log); copy the values to the host first (t.to(\"CPU:0\"))");
  std::vector<std::vector<Tensor>> inputs;
  std::vector<std::vector<int64_t>> rows;  // all_gather: [replica][tensor]
  for (const auto& c : pending.contributions) {
    inputs.push_back(c->request->tensors);
    rows.emplace_back();
    for (const auto& t : c->request->tensors)
      rows.back().push_back(t.shape().rank() > 0 ? t.shape()[t.shape().normalize_axis(first.axis)] : 1);
  }
  if (first.kind != CollectiveKind::all_gather)
    rows.clear();
  if (!cross_) {
    run_on_fibers(key, pending,
                  gpu_->nccl_plan(key, first.kind, first.op, first.axis, std::move(inputs), std::move(rows),
                                  describe(key)));
    return;
  }
  // Across workers NCCL sees the calls only once every worker announced the
  // same collective (CrossWorkerCollectives::agree); rank 0's announce names
  // the communicator, and every worker's gives its replicas' all_gather
  // sizes (every rank must know every other's block).
  NcclAnnouncement announcement;
  if (cross_->rank() == 0)
    announcement.communicator = gpu_->announce();
  announcement.dropped = gpu_->last_dropped();
  announcement.sizes = std::move(rows);
  pending.cross = true;
  pending.gpu_inputs = std::move(inputs);
  // May fail at once, which erases `pending`.
  cross_->agree(key, first.kind, first.op, first.axis, pending.gpu_inputs.front(), announcement.encode());
  if (!timer_armed_ && pending_.count(key))
    arm_timer();
}

void CollectiveGroupActor::on_agreed(const CollectiveKey& key, const std::vector<std::string>& details,
                                     const std::vector<CollectiveFingerprint>& fingerprints) {
  auto i = pending_.find(key);
  if (i == pending_.end())
    return;
  auto& pending = i->second;
  const auto& first = *pending.contributions.front()->request;
  try {
    const auto replicas = pending.gpu_inputs.size();
    const auto tensors = fingerprints.front().shapes.size();
    std::vector<std::vector<int64_t>> rows;  // all_gather: [global rank][tensor]
    std::string communicator;                // rank 0's
    for (std::size_t w = 0; w < details.size(); ++w) {
      const auto& task = cross_->task_name(static_cast<int>(w));
      auto announcement = NcclAnnouncement::decode(details[w], task, replicas, tensors);
      if (w == 0)
        communicator = GpuCollectives::announced_name(announcement.communicator);
      if (!announcement.dropped.empty() && announcement.dropped == communicator) {
        // A worker gave up the communicator rank 0 still names (every worker
        // sees the same announces, so all drop it alike): the next one is new.
        gpu_->failed(communicator, "task " + task + " gave it up");
        throw Error(Errc::cancelled, "NCCL communicator " + communicator + " failed on task " + task
                                     + " before this collective; the next collective runs on a new one");
      }
      if (w == 0 && cross_->rank() != 0)
        gpu_->adopt(announcement.communicator);
      if (w == 0 && cross_->rank() == 0 && gpu_->current_name() != communicator)
        throw Error(Errc::cancelled, "NCCL communicator " + communicator
                                       + " was given up after this collective announced it; the next "
                                         "collective runs on a new one");
      if (first.kind == CollectiveKind::all_gather) {
        if (announcement.sizes.size() != replicas)
          throw Error(Errc::data_loss, "task " + cross_->task_name(static_cast<int>(w))
                                         + " announced an all_gather without its replicas' sizes");
        for (auto& replica : announcement.sizes)
          rows.push_back(std::move(replica));
      }
    }
    agreed_on_.emplace(key, communicator);
    if (agreed_on_.size() > max_agreed_remembered)
      agreed_on_.erase(agreed_on_.begin());  // the oldest key
    auto plan = gpu_->nccl_plan(key, first.kind, first.op, first.axis, std::move(pending.gpu_inputs), std::move(rows),
                                describe(key));
    run_on_fibers(key, pending, std::move(plan));
  } catch (const Error& e) {
    fail(key, pending, e.code(), describe(key) + " failed: " + e.what());
  }
}

GpuCollectives& CollectiveGroupActor::gpu_collectives() {
  if (!gpu_) {
    GpuCollectives::Setup setup;
    setup.group = setup_.group_id;
    setup.devices = setup_.devices;
    setup.implementation = setup_.implementation;
    setup.bytes_per_pack = setup_.bytes_per_pack;
    setup.timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(setup_.timeout);
    const int local = static_cast<int>(setup_.devices.size());
    if (setup_.cluster) {
      setup.first_rank = setup_.cluster->rank * local;
      setup.ranks = static_cast<int>(setup_.cluster->task_names.size()) * local;
      setup.across_workers = true;
    } else {
      setup.ranks = local;
    }
    gpu_ = std::make_unique<GpuCollectives>(
      std::move(setup), [self = caf::actor_cast<caf::actor>(this)](const CollectiveKey& key, const std::string& name,
                                                                  const std::string& why) {
        caf::anon_send(self, NcclCommunicatorFailedMsg{key, name, why});
      });
  }
  return *gpu_;
}

} // namespace troupe::internal
