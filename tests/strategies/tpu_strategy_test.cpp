#include <atomic>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include <support/capture_stderr.hpp>
#include <support/error_code_of.hpp>

#include <troupe/troupe.hpp>

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

// A runtime of `cores` emulated TPU cores with its TPU system initialized.
struct TpuHost {
  explicit TpuHost(int cores) : rt({.logical_tpu_cores = cores}), resolver("local") {
    topology = initialize_tpu_system(rt, resolver);
  }
  Runtime rt;
  TPUClusterResolver resolver;
  std::optional<Topology> topology;
};

std::vector<int64_t> values_of(const Tensor& t) {
  return t.to_vector<int64_t>();
}

} // namespace

TEST_CASE("TPUStrategy before initialize_tpu_system is an error saying so", "[strategies][tpu]") {
  Runtime rt({.logical_tpu_cores = 8});
  TPUClusterResolver resolver("local");
  CHECK(error_code_of([&] { TPUStrategy tpu(rt, resolver); }) == Errc::failed_precondition);
  CHECK_THAT(error_message_of([&] { TPUStrategy tpu(rt, resolver, 10); }),
             Contains("TPU system is not initialized") && Contains("initialize_tpu_system(rt, resolver)"));
}

TEST_CASE("the seed's TPUStrategy with steps_per_run has its properties", "[strategies][tpu]") {
  TpuHost host(8);
  // Braced lists as in the docs; {} is TensorFlow's None.
  auto assignment = DeviceAssignment::build(*host.topology, /*computation_shape=*/{1, 1, 1, 1},
                                            /*computation_stride=*/{}, /*num_replicas=*/8);
  CHECK(assignment.core_assignment()
        == DeviceAssignment::build(*host.topology, std::vector<int>{1, 1, 1, 1}, std::nullopt, 8).core_assignment());
  TPUStrategy tpu(host.rt, host.resolver, /*steps_per_run=*/10, assignment);
  CHECK(tpu.extended().steps_per_run() == 10);
  CHECK(tpu.steps_per_run() == 10);
  CHECK(tpu.num_replicas_in_sync() == 8);
  REQUIRE(tpu.cluster_resolver() != nullptr);
  CHECK(tpu.cluster_resolver()->num_accelerators() == std::map<std::string, int>{{"TPU", 8}});
  CHECK(tpu.extended().num_cores_per_replica() == 1);
  CHECK(tpu.extended().worker_devices().size() == 8);
  // The v2 form: steps_per_run 1, one replica per core in ordinal order.
  TPUStrategy v2(host.rt, host.resolver);
  CHECK(v2.extended().steps_per_run() == 1);
  CHECK(v2.num_replicas_in_sync() == 8);
  CHECK_FALSE(v2.extended().experimental_device_assignment().has_value());
  for (int i = 0; i < 8; ++i)
    CHECK(v2.extended().worker_devices()[static_cast<size_t>(i)].short_name() == "TPU:" + std::to_string(i));
  CHECK(error_code_of([&] { TPUStrategy bad(host.rt, host.resolver, 0); }) == Errc::invalid_argument);
}

TEST_CASE("TPUStrategy runs replicas on the assigned cores with collectives", "[strategies][tpu]") {
  TpuHost host(8);
  TPUStrategy tpu(host.rt, host.resolver);
  auto sums = tpu.run([] {
    auto& ctx = get_replica_context();
    return ctx.all_reduce(ReduceOp::SUM, Tensor(static_cast<int64_t>(ctx.replica_id_in_sync_group())));
  });
  for (int r = 0; r < 8; ++r)
    CHECK(sums[r].item<int64_t>() == 28);
  auto ids = tpu.run([] { return Tensor::from_vector<int64_t>({get_replica_context().replica_id_in_sync_group()}); });
  CHECK(values_of(tpu.gather(ids, 0)) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(tpu.reduce(ReduceOp::SUM, ids, 0).item<int64_t>() == 28);
  CHECK(tpu.extended().host_round_trips() == 2);
}

TEST_CASE("a model-parallel device assignment gives each replica its block of cores", "[strategies][tpu]") {
  TpuHost host(8);
  auto assignment = DeviceAssignment::build(*host.topology, std::vector<int>{1, 1, 1, 2}, std::nullopt, 4);
  TPUStrategy tpu(host.rt, host.resolver, assignment);
  CHECK(tpu.num_replicas_in_sync() == 4);
  CHECK(tpu.extended().num_cores_per_replica() == 2);
  for (int r = 0; r < 4; ++r) {
    const auto& cores = tpu.extended().logical_devices(r);
    REQUIRE(cores.size() == 2);
    CHECK(cores[0].short_name() == "TPU:" + std::to_string(assignment.tpu_ordinal(r, 0)));
    CHECK(cores[1].short_name() == "TPU:" + std::to_string(assignment.tpu_ordinal(r, 1)));
    CHECK(tpu.extended().worker_devices()[static_cast<size_t>(r)] == cores[0]);
  }
  auto devices = tpu.run([] { return Tensor(static_cast<int64_t>(get_replica_context().replica_id_in_sync_group())); });
  CHECK(devices.size() == 4);
}

TEST_CASE("TPUStrategy's all_gather and gather need identical shapes", "[strategies][tpu]") {
  TpuHost host(2);
  TPUStrategy tpu(host.rt, host.resolver);
  // Equal shapes gather as on any strategy.
  auto same = tpu.run([] {
    auto& ctx = get_replica_context();
    return ctx.all_gather(Tensor::from_vector<int64_t>({ctx.replica_id_in_sync_group()}), 0);
  });
  CHECK(values_of(same[1]) == std::vector<int64_t>{0, 1});
  // Shapes that differ along the axis (fine under MirroredStrategy) are refused, naming them.
  const auto message = error_message_of([&] {
    (void)tpu.run([] {
      auto& ctx = get_replica_context();
      const int64_t rows = ctx.replica_id_in_sync_group() + 1;
      return ctx.all_gather(Tensor::zeros(Shape{rows}, DType::int64), 0);
    });
  });
  CHECK_THAT(message, Contains("same shape on every replica") && Contains("replica 0 sent (1,)")
                        && Contains("replica 1 sent (2,)"));
  auto uneven = tpu.run([] {
    const int64_t rows = get_replica_context().replica_id_in_sync_group() + 1;
    return Tensor::zeros(Shape{rows}, DType::int64);
  });
  CHECK_THAT(error_message_of([&] { (void)tpu.gather(uneven, 0); }),
             Contains("same shape on every replica") && Contains("replica 1 has (2,)"));
  // The same values under MirroredStrategy gather fine.
  Runtime cpu({.logical_cpu_devices = 2});
  MirroredStrategy mirrored(cpu, {"CPU:0", "CPU:1"});
  auto mirrored_uneven = mirrored.run([] {
    const int64_t rows = get_replica_context().replica_id_in_sync_group() + 1;
    return Tensor::zeros(Shape{rows}, DType::int64);
  });
  CHECK(mirrored.gather(mirrored_uneven, 0).shape() == Shape{3});
}

TEST_CASE("a partial last batch under TPUStrategy names drop_remainder=True unless dynamic batches pad it",
          "[strategies][tpu]") {
  TpuHost host(2);
  TPUStrategy tpu(host.rt, host.resolver);
  // 10 examples in global batches of 4: the third batch has 2, one per replica.
  auto dist = tpu.experimental_distribute_dataset(Dataset::range(10).batch(4));
  DistributedIterator it(dist);
  CHECK(values_of(it.get_next()[1][0]) == std::vector<int64_t>{2, 3});
  CHECK(values_of(it.get_next()[0][0]) == std::vector<int64_t>{4, 5});
  const auto message = error_message_of([&] { (void)it.get_next(); });
  CHECK_THAT(message, Contains("drop_remainder=True") && Contains("static shapes")
                        && Contains("experimental_enable_dynamic_batch_size"));
  // drop_remainder=True: two full steps, then the end.
  auto dropped = tpu.experimental_distribute_dataset(Dataset::range(10).batch(4, true));
  int steps = 0;
  for (const auto& step : dropped) {
    (void)step;
    ++steps;
  }
  CHECK(steps == 2);
  // With dynamic batch sizes the partial batch is padded with zeros, and a log line says which rows.
  auto padded = tpu.experimental_distribute_dataset(Dataset::range(10).batch(4),
                                                    RunOptions{.experimental_enable_dynamic_batch_size = true});
  std::optional<PerReplica<Element>> last;
  // The input actor prepares steps ahead, so the log line is captured over the whole pass.
  const auto log = troupe::testing::capture_stderr([&] {
    DistributedIterator pit(padded);
    (void)pit.get_next();
    (void)pit.get_next();
    last = pit.get_next();
  });
  REQUIRE(last);
  CHECK(values_of((*last)[0][0]) == std::vector<int64_t>{8, 0});
  CHECK(values_of((*last)[1][0]) == std::vector<int64_t>{9, 0});
  CHECK_THAT(log, Contains("replica 0 rows 1..1") && Contains("replica 1 rows 1..1"));
}

TEST_CASE("steps_per_run hands the cores n steps per host round trip", "[strategies][tpu]") {
  TpuHost host(4);
  TPUStrategy tpu(host.rt, host.resolver, /*steps_per_run=*/4);
  // 10 steps of global batch 4 (one example per replica).
  auto dist = tpu.experimental_distribute_dataset(Dataset::range(40).batch(4, true));
  DistributedIterator it(dist);
  std::atomic<int> calls{0};
  std::vector<int> steps_run;
  std::vector<int64_t> last_sums;
  const auto trips_before = tpu.extended().host_round_trips();
  for (;;) {
    auto ctx = tpu.extended().experimental_run_steps_on_iterator(
      [&](MultiStepContext& step_ctx, const Tensor& x) {
        ++calls;
        step_ctx.set_last_step_output("sum", x, ReduceOp::SUM);
        step_ctx.set_last_step_output("x", x);
      },
      it);
    if (ctx.steps_run() == 0)
      break;
    steps_run.push_back(ctx.steps_run());
    last_sums.push_back(values_of(ctx.last_step_output("sum"))[0]);
    CHECK(ctx.last_step_per_replica_output("x").size() == 4);
  }
  CHECK(steps_run == std::vector<int>{4, 4, 2});
  CHECK(calls == 40);
  // The last step of each run: steps 3, 7 and 9 hold examples 12..15, 28..31, 36..39.
  CHECK(last_sums == std::vector<int64_t>{54, 118, 150});
  // One round trip per run that had steps, and the final one that found none made none.
  CHECK(tpu.extended().host_round_trips() - trips_before == 3);
  CHECK(tpu.extended().steps_run() == 10);
}

TEST_CASE("a multi-step loop with collectives keeps the replicas in step", "[strategies][tpu]") {
  Runtime rt(Simulation{.seed = 11, .logical_tpu_cores = 8});
  TPUClusterResolver resolver("local");
  auto topology = initialize_tpu_system(rt, resolver);
  TPUStrategy tpu(rt, resolver, 5);
  auto dist = tpu.experimental_distribute_dataset(Dataset::range(80).batch(8, true));
  DistributedIterator it(dist);
  auto ctx = tpu.extended().experimental_run_steps_on_iterator(
    [](MultiStepContext& step_ctx, const Tensor& x) {
      step_ctx.set_last_step_output("total", get_replica_context().all_reduce(ReduceOp::SUM, x), ReduceOp::MEAN);
    },
    it);
  CHECK(ctx.steps_run() == 5);
  // Step 5 holds examples 32..39: every replica's all-reduce is 284, and their mean too.
  CHECK(values_of(ctx.last_step_output("total")) == std::vector<int64_t>{284});
  CHECK_THAT(error_message_of([&] { (void)ctx.last_step_output("nope"); }), Contains("total"));
}

TEST_CASE("TPUStrategy's variables have a copy on every replica's core and stay in sync", "[strategies][tpu]") {
  TpuHost host(4);
  TPUStrategy tpu(host.rt, host.resolver);
  auto w = [&] {
    auto scope = tpu.scope();
    return tpu.create_variable(Tensor(0.0f), {.name = "w"});
  }();
  const auto copies = tpu.experimental_local_results(w);
  REQUIRE(copies.size() == 4);
  for (int r = 0; r < 4; ++r)
    CHECK(copies[static_cast<size_t>(r)].device() == DeviceSpec::local("TPU", r));
  tpu.run([&] {
    auto& ctx = get_replica_context();
    const auto total = ctx.all_reduce(ReduceOp::SUM, Tensor(static_cast<float>(ctx.replica_id_in_sync_group())));
    w.assign_add(total);
  });
  for (const auto& copy : tpu.experimental_local_results(w))
    CHECK(copy.item<float>() == 6.0f);
}
