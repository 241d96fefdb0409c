#include <troupe/actors/modes/scheduler_config.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

#include <caf/atom.hpp>
#include <caf/thread_hook.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_settings_messages.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/denormals.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/cluster_resolver.hpp>

namespace troupe::internal {

namespace {

/// Every thread of troupe's actor system computes with denormals flushed
/// (core/denormals.hpp), set once as the thread starts.
class FlushDenormalsHook final : public caf::thread_hook {
public:
  void init(caf::actor_system&) override {}
  void thread_started() override { flush_denormals_on_this_thread(); }
  void thread_terminates() override {}
};

caf::timespan to_timespan(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

/// The tasks of `resolver`'s cluster that run on this task's host.
int tasks_on_this_host(const ClusterResolver& resolver) {
  const auto spec = resolver.cluster_spec();
  const auto& me = resolver.task_type();
  if (me.empty() || resolver.task_id() < 0)
    return 1;
  const auto host = parse_task_address(spec.task_address(me, resolver.task_id())).host;
  int n = 0;
  for (const auto& job : spec.jobs())
    for (const auto& address : spec.job_tasks(job))
      n += parse_task_address(address).host == host ? 1 : 0;
  return std::max(n, 1);
}

} // namespace

std::unique_ptr<caf::actor_system_config> make_config() {
  auto cfg = std::make_unique<caf::actor_system_config>();
  cfg->add_thread_hook<FlushDenormalsHook>();
  add_cluster_types(*cfg);
  add_parameter_server_types(*cfg);
  add_coordinator_types(*cfg);
  add_ps_settings_types(*cfg);
  return cfg;
}

/// Cluster tasks hand work between threads at every frame: CAF's sharing
/// policy wakes a sleeping thread through a condition variable, where
/// work-stealing threads poll (burning the cores that several tasks of one
/// host share) or sleep in 50 us steps. Measured with bench/allreduce_cluster,
/// 2 workers on the 2-core CI machine type: 4 KiB all-reduce 510-690 us with
/// stealing, 217 us with sharing and one thread per task. Tasks that share a
/// host also share its cores, so each gets cores / tasks threads.
void configure_cluster_scheduler(caf::actor_system_config& cfg, const RuntimeOptions& options,
                                 const ClusterResolver& resolver) {
  // CAF's BASP workers deserialize a remote message on a scheduler thread, but
  // only after the I/O thread has copied its whole payload out of the read
  // buffer: one more pass over every byte (16 MiB per parameter-server read of
  // a 16 MiB shard). With none, the I/O thread deserializes straight from its
  // read buffer. Measured with bench/ps_throughput --cluster processes, 16 MiB
  // variable, 1-4 workers, 2 cores: about 0.55 -> 0.7 GB/s (docs/protocol.md, "Parameter servers").
  cfg.set("middleman.workers", size_t{0});
  const auto& policy = knobs().scheduler_policy;
  if (policy == "stealing")
    return;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  if (options.threads == 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    cfg.set("scheduler.max-threads", static_cast<size_t>(std::max(1, cores / tasks_on_this_host(resolver))));
  }
}

void configure_scheduler(caf::actor_system_config& cfg, const RuntimeOptions& options) {
  if (options.threads < 0)
    fail(Errc::invalid_argument,
         "RuntimeOptions.threads must be >= 0 (0 = one per core), got " + std::to_string(options.threads));
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  // CAF's default is max(4, cores), which oversubscribes small machines (CAF-NOTES §3).
  cfg.set("scheduler.max-threads", static_cast<size_t>(options.threads > 0 ? options.threads : cores));
  // CAF's idle workers sleep 50 us between polls after 100 polls and steal only
  // every 5th poll, which costs about 100 us per strategy step. Poll longer and
  // steal at once instead (TROUPE_IDLE_POLLS; measured in bench/allreduce_local:
  // strategy.run overhead on 8 replicas 143 us -> 12 us median).
  if (const auto polls = knobs().idle_polls; polls > 0) {
    cfg.set("work-stealing.aggressive-poll-attempts", polls);
    cfg.set("work-stealing.aggressive-steal-interval", size_t{1});
    cfg.set("work-stealing.moderate-steal-interval", size_t{1});
    cfg.set("work-stealing.moderate-sleep-duration", caf::timespan{std::chrono::microseconds(10)});
  }
}

void configure_peer_timeouts(caf::actor_system_config& cfg) {
  // CAF detects neither dead nor frozen peers by default (CAF-NOTES §2): a
  // peer silent for peer_timeout is lost. CAF notices silence up to one
  // heartbeat late and the data plane confirms a loss no sooner than one
  // heartbeat after CAF's news (docs/protocol.md, "When a peer is lost"), so
  // its timeout is shortened by both: a frozen peer is lost within peer_timeout.
  // Bulk bytes travel on the data plane, so control traffic stays small and
  // heartbeats are not starved.
  const auto& k = knobs();
  cfg.set("middleman.heartbeat-interval", to_timespan(k.peer_heartbeat_seconds));
  cfg.set("middleman.connection-timeout",
          to_timespan(std::max(k.peer_timeout_seconds - 2 * k.peer_heartbeat_seconds,
                               2 * k.peer_heartbeat_seconds)));
}

} // namespace troupe::internal
