// Which tasks of a cluster spec join the cluster, and in which order.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <troupe/net/bootstrap/cluster_members.hpp>
#include <troupe/net/tf_config_cluster_resolver.hpp>

using namespace troupe;
using namespace troupe::internal;

using Names = std::vector<std::string>;

TEST_CASE("cluster members of a TF_CONFIG with ps tasks are the chief, the workers, then the ps tasks",
          "[net][members]") {
  // Jobs in the spec are sorted (chief, evaluator, ps, worker); the members are not.
  const auto resolver = TFConfigClusterResolver::from_json(
    R"({"cluster": {"ps": ["h:5", "h:6"], "worker": ["h:2", "h:3"], "chief": ["h:1"], "evaluator": ["h:9"]},
        "task": {"type": "ps", "index": 1}})");
  const ClusterMembers members(resolver.cluster_spec());
  CHECK(members.names() == Names{"chief:0", "worker:0", "worker:1", "ps:0", "ps:1"});
  CHECK(members.addresses() == Names{"h:1", "h:2", "h:3", "h:5", "h:6"});
  // Only the chief and the workers take part in collectives: their member index is their rank.
  CHECK(members.participants() == 3);
  CHECK(members.index_of(resolver.task_type(), resolver.task_id()) == 4);
  CHECK(members.index_of("worker:1") == 2);
  CHECK(members.tasks_of("ps") == Names{"ps:0", "ps:1"});
  CHECK(members.tasks_of("worker") == Names{"worker:0", "worker:1"});
  // The evaluator runs outside the cluster, as in TensorFlow: no member.
  CHECK(members.index_of("evaluator", 0) == -1);
  CHECK(members.tasks_of("evaluator").empty());
  CHECK(members.index_of("ps:2") == -1);
}

TEST_CASE("cluster members without ps tasks are the chief and the workers, all of them in collectives",
          "[net][members]") {
  const ClusterMembers workers_only(ClusterSpec({{"worker", {"h:2", "h:3"}}}));
  CHECK(workers_only.names() == Names{"worker:0", "worker:1"});
  CHECK(workers_only.participants() == 2);
  const ClusterMembers with_chief(ClusterSpec({{"worker", {"h:2"}}, {"chief", {"h:1"}}}));
  CHECK(with_chief.names() == Names{"chief:0", "worker:0"});
  CHECK(with_chief.participants() == 2);
  CHECK(ClusterMembers(ClusterSpec{}).size() == 0);
}
