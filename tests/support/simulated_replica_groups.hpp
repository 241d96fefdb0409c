#pragma once

// Several workers of a multi-worker group in one process: each worker is a
// ReplicaGroup with its own simulated data-plane link, all on one Runtime, so
// the cross-worker protocols run under the seeded simulation scheduler (or
// threaded). Bodies get (worker, replica, handle).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/actors/replicas/replica_group.hpp>
#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/actors/replicas/run_job.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/net/link/sim_link_actor.hpp>
#include <troupe/troupe.hpp>

namespace troupe::testing {

class SimulatedReplicaGroups {
public:
  using Body = std::function<void(int worker, int replica, internal::ReplicaHandle& handle)>;

  /// Replica r of every worker runs on the runtime's device r, unless
  /// `device_of(worker, replica)` names another (workers on GPUs of their own).
  using DeviceOf = std::function<DeviceSpec(int worker, int replica)>;

  SimulatedReplicaGroups(Runtime& rt, int workers, int replicas_per_worker, internal::GroupOptions options = {},
                   const DeviceOf& device_of = nullptr)
    : rt_(rt), workers_(workers) {
    auto& sys = rt.impl().system();
    std::vector<internal::SimLinkActorHandle> links;
    for (int w = 0; w < workers; ++w)
      links.push_back(sys.spawn<internal::SimLinkActor>(w));
    for (auto& link : links)
      caf::anon_send(link, internal::SimPeersMsg{links});
    links_ = links;
    std::vector<std::string> names;
    for (int w = 0; w < workers; ++w)
      names.push_back("worker:" + std::to_string(w));
    const auto group_id = rt.impl().next_group_id();
    for (int w = 0; w < workers; ++w) {
      std::vector<DeviceSpec> devices;
      std::vector<void*> frames;
      for (int r = 0; r < replicas_per_worker; ++r) {
        devices.push_back(device_of ? device_of(w, r) : rt.devices().at(static_cast<size_t>(r)));
        frames.push_back(nullptr);
      }
      auto opts = options;
      internal::CrossWorkerSetup setup;
      setup.rank = w;
      setup.task_names = names;
      setup.local_replicas = replicas_per_worker;
      if (options.cluster) {
        setup.ring = options.cluster->ring;
        setup.direct_exchange_max_bytes = options.cluster->direct_exchange_max_bytes;
        setup.halving_doubling_max_bytes = options.cluster->halving_doubling_max_bytes;
        setup.implementation = options.cluster->implementation;
        setup.bytes_per_pack = options.cluster->bytes_per_pack;
        setup.gpu_tensors_through_host = options.cluster->gpu_tensors_through_host;
      }
      opts.cluster = setup;
      opts.group_id = group_id;
      groups_.push_back(std::make_unique<internal::ReplicaGroup>(rt, devices, frames, opts, links_[static_cast<size_t>(w)]));
    }
  }

  ~SimulatedReplicaGroups() {
    groups_.clear();
    for (auto& link : links_)
      caf::anon_send_exit(link, caf::exit_reason::user_shutdown);
    rt_.impl().drain();
  }

  /// Runs `body` on every replica of every worker; returns each worker's
  /// per-replica exceptions.
  std::vector<std::vector<std::exception_ptr>> run(const Body& body) {
    std::vector<std::function<void(int)>> bodies;
    for (int w = 0; w < workers_; ++w)
      bodies.push_back([this, w, &body](int replica) { body(w, replica, groups_[static_cast<size_t>(w)]->handle(replica)); });
    std::vector<std::shared_ptr<internal::RunJob>> jobs;
    for (int w = 0; w < workers_; ++w)
      jobs.push_back(groups_[static_cast<size_t>(w)]->start(bodies[static_cast<size_t>(w)]));
    std::vector<std::vector<std::exception_ptr>> out;
    for (int w = 0; w < workers_; ++w)
      out.push_back(groups_[static_cast<size_t>(w)]->finish(jobs[static_cast<size_t>(w)]));
    return out;
  }

  /// Partitions worker `worker` from the others: their links report it lost,
  /// and its link reports them lost.
  void cut(int worker, const std::string& why) {
    for (int w = 0; w < workers_; ++w)
      if (w != worker) {
        caf::anon_send(links_[static_cast<size_t>(w)], internal::SimCutMsg{worker, why});
        caf::anon_send(links_[static_cast<size_t>(worker)], internal::SimCutMsg{w, why});
      }
  }

private:
  Runtime& rt_;
  int workers_;
  std::vector<internal::SimLinkActorHandle> links_;
  std::vector<std::unique_ptr<internal::ReplicaGroup>> groups_;
};

} // namespace troupe::testing
