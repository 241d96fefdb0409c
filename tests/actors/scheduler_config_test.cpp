#include <catch2/catch.hpp>

#include <cstddef>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>

#include <troupe/actors/modes/scheduler_config.hpp>
#include <troupe/net/simple_cluster_resolver.hpp>

using troupe::ClusterSpec;
using troupe::SimpleClusterResolver;

// A BASP worker deserializes a remote message only after the I/O thread has
// copied the whole payload for it: a second pass over every byte of a
// parameter-server tensor. Cluster tasks deserialize on the I/O thread instead.
TEST_CASE("cluster tasks deserialize remote messages on the I/O thread, without BASP workers",
          "[actors][scheduler_config]") {
  SimpleClusterResolver resolver(ClusterSpec({{"chief", {"127.0.0.1:2222"}}, {"ps", {"127.0.0.1:2223"}}}),
                                 {.task_type = "ps", .task_id = 0});
  auto cfg = troupe::internal::make_config();
  troupe::internal::configure_scheduler(*cfg, {});
  troupe::internal::configure_cluster_scheduler(*cfg, {}, resolver);
  // The runtime's order (actors/src/modes/runtime_impl.cpp): the middleman is loaded after.
  cfg->load<caf::io::middleman>();
  caf::actor_system system{*cfg};
  // What CAF's BASP broker reads when it creates its workers.
  CHECK(caf::get_or(system.config(), "middleman.workers", std::size_t{99}) == 0);
}
