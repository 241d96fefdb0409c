#pragma once

// How troupe configures the CAF actor system of each runtime mode: the thread
// hook, the scheduler's threads and polling, and a cluster's peer timeouts.
// Internal to actors/ (includes CAF).

#include <memory>

#include <caf/actor_system_config.hpp>

#include <troupe/actors/runtime.hpp>

namespace troupe {
class ClusterResolver;
} // namespace troupe

namespace troupe::internal {

/// A config with troupe's thread hook (denormals flushed on every CAF
/// thread) and the cluster message types registered.
[[nodiscard]] std::unique_ptr<caf::actor_system_config> make_config();

/// Threads and idle polling of the threaded modes (RuntimeOptions.threads, TROUPE_IDLE_POLLS).
void configure_scheduler(caf::actor_system_config& cfg, const RuntimeOptions& options);

/// A cluster task's scheduler: sharing, its host's cores split among the tasks
/// there, and remote messages deserialized on CAF's I/O thread (no BASP workers).
void configure_cluster_scheduler(caf::actor_system_config& cfg, const RuntimeOptions& options,
                                 const ClusterResolver& resolver);

/// CAF's heartbeat and connection timeout, so that a dead or frozen peer is
/// lost within TROUPE_PEER_TIMEOUT_SECONDS.
void configure_peer_timeouts(caf::actor_system_config& cfg);

} // namespace troupe::internal
