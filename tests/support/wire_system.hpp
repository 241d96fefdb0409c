#pragma once

// An actor system that knows every troupe wire type, as a Runtime's config
// does: for tests of messages that cross processes and of the actors that
// receive them.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_settings_messages.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>

namespace troupe::testing {

struct WireSystem {
  caf::actor_system_config cfg;
  caf::actor_system sys;

  static caf::actor_system_config& registered(caf::actor_system_config& cfg) {
    internal::add_cluster_types(cfg);
    internal::add_parameter_server_types(cfg);
    internal::add_coordinator_types(cfg);
    internal::add_ps_settings_types(cfg);
    return cfg;
  }

  WireSystem() : sys(registered(cfg)) {}
};

} // namespace troupe::testing
