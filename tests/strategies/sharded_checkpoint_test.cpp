// Checkpoints of ShardedVariables (ParameterServerStrategy): values and the
// servers' optimizer slots survive a save and a restore into another number
// of parameter servers and shards, bad files change nothing, checkpoints
// belong to the coordinator, and a job that lost a parameter server resumes
// from its last save. Threaded (LocalCluster) and in the simulation.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/troupe.hpp>

#include "support/error_code_of.hpp"
#include "support/temp_files.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace fs = std::filesystem;
using troupe::testing::TempDir;
using troupe::testing::read_bytes;
using troupe::testing::write_bytes;

namespace {


/// Threaded, and the simulation under a few seeds (each case builds several clusters).
struct ClusterMode {
  bool simulate = false;
  uint64_t seed = 0;
  [[nodiscard]] std::string name() const {
    return simulate ? "simulation seed " + std::to_string(seed) : "threaded";
  }
};

std::vector<ClusterMode> cluster_modes() {
  return {{false, 0}, {true, 1}, {true, 7}, {true, 42}};
}

std::unique_ptr<Runtime> make_cluster(const ClusterMode& mode, int ps) {
  if (mode.simulate)
    return std::make_unique<Runtime>(Simulation{.seed = mode.seed, .workers = 1, .ps = ps});
  return std::make_unique<Runtime>(LocalCluster{.workers = 1, .ps = ps});
}

/// The tensor's dtype, shape and bytes: equal strings are bitwise equal tensors.
std::string bits(const Tensor& t) {
  return std::string(name(t.dtype())) + t.shape().to_string()
         + std::string(reinterpret_cast<const char*>(t.raw_data()), t.nbytes());
}

Tensor ramp(Shape shape, float scale) {
  std::vector<float> values(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = scale * (static_cast<float>(i) - 3.5f);
  return Tensor::from_vector<float>(values, std::move(shape));
}

/// A small model on a ParameterServerStrategy: w (7, 3) trained with Adam,
/// b (4) with momentum, a step counter that never gets an optimizer step.
struct PsModel {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<ParameterServerStrategy> strategy;
  ShardedVariable w{nullptr}, b{nullptr}, step{nullptr};

  PsModel(const ClusterMode& mode, int ps, std::optional<Partitioner> partitioner)
    : runtime(make_cluster(mode, ps)),
      strategy(std::make_unique<ParameterServerStrategy>(*runtime, std::move(partitioner))) {
    auto scope = strategy->scope();
    w = strategy->create_variable(Tensor::zeros({7, 3}, DType::float32), {.name = "w"});
    b = strategy->create_variable(Tensor::zeros({4}, DType::float32), {.name = "b"});
    step = strategy->create_variable(Tensor(int64_t{0}), {.name = "step"});
  }

  [[nodiscard]] Checkpoint checkpoint() const { return Checkpoint({}, {w, b, step}); }

  /// One optimizer step of each trained variable, the gradients scaled by `k`.
  void train(float k) {
    w.apply_adam(ramp({7, 3}, 0.1f * k), {.learning_rate = 0.01});
    b.apply_momentum(ramp({4}, 0.2f * k), {.learning_rate = 0.1, .momentum = 0.9});
    step.assign_add(Tensor(int64_t{1}));
  }

  /// Every value and slot, bitwise.
  [[nodiscard]] std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> out;
    for (const auto* v : {&w, &b, &step}) {
      out[v->name()] = bits(v->read_value());
      for (const auto& [slot, value] : v->read_slots())
        out[v->name() + "/" + slot] = bits(value);
    }
    return out;
  }
};

} // namespace

TEST_CASE("sharded variables and their optimizer slots restore bitwise into 3 parameter servers and into 1",
          "[strategies][checkpoint][parameter_server]") {
  const auto mode = GENERATE(from_range(cluster_modes()));
  CAPTURE(mode.name());
  TempDir dir;
  const auto path = dir.file("ckpt");
  std::map<std::string, std::string> saved;
  std::map<std::string, Tensor> saved_w_slots;
  std::vector<float> w_after_next_step;
  {
    PsModel source(mode, 2, Partitioner{FixedShardsPartitioner(2)});
    REQUIRE(source.w.num_shards() == 2);
    REQUIRE(source.b.num_shards() == 2);
    for (float k : {1.0f, -2.0f, 0.5f})
      source.train(k);
    source.checkpoint().save(path);
    saved = source.snapshot();
    saved_w_slots = source.w.read_slots();
    // Where the job would go from here: one more step of the saved state.
    source.train(3.0f);
    w_after_next_step = source.w.read_value().to_vector<float>();
  }
  // The slots really are there, and Adam's count is one per shard.
  REQUIRE(saved.count("w/m") == 1);
  REQUIRE(saved.count("b/momentum") == 1);
  CHECK(saved.count("step/m") == 0);
  CHECK(saved_w_slots.at("iterations").to_vector<int64_t>() == std::vector<int64_t>{3, 3});

  for (int ps : {3, 1}) {
    INFO(ps << " parameter servers, no partitioner");
    PsModel target(mode, ps, std::nullopt);
    REQUIRE(target.w.num_shards() == 1);
    target.checkpoint().restore(path);
    auto restored = target.snapshot();
    // One shard now: its count is the one every saved shard had.
    CHECK(restored.at("w/iterations") == bits(Tensor::from_vector<int64_t>({3})));
    restored.erase("w/iterations");
    auto expected = saved;
    expected.erase("w/iterations");
    CHECK(restored == expected);
    // The next Adam step continues from the saved m, v and count (a fresh
    // Adam's first step would move every weight by about the learning rate).
    target.train(3.0f);
    const auto next = target.w.read_value().to_vector<float>();
    REQUIRE(next.size() == w_after_next_step.size());
    for (std::size_t i = 0; i < next.size(); ++i)
      CHECK(next[i] == Approx(w_after_next_step[i]).epsilon(1e-6).margin(1e-7));
  }
}

TEST_CASE("per-shard Adam counts that differ restore per shard into the same sharding and as the largest otherwise",
          "[strategies][checkpoint][parameter_server]") {
  TempDir dir;
  const auto path = dir.file("ckpt");
  const ClusterMode threaded;
  {
    PsModel source(threaded, 2, Partitioner{FixedShardsPartitioner(2)});
    source.train(1.0f);
    auto slots = source.w.read_slots();
    slots["iterations"] = Tensor::from_vector<int64_t>({3, 5}); // as if shard 0 missed two steps
    source.w.assign_slots(slots);
    source.checkpoint().save(path);
  }
  {
    PsModel same(threaded, 2, Partitioner{FixedShardsPartitioner(2)});
    same.checkpoint().restore(path);
    CHECK(same.w.read_slots().at("iterations").to_vector<int64_t>() == std::vector<int64_t>{3, 5});
  }
  {
    PsModel other(threaded, 3, Partitioner{FixedShardsPartitioner(3)});
    REQUIRE(other.w.num_shards() == 3);
    other.checkpoint().restore(path);
    CHECK(other.w.read_slots().at("iterations").to_vector<int64_t>() == std::vector<int64_t>{5, 5, 5});
  }
}

TEST_CASE("restoring a checkpoint without optimizer slots resets the servers' slots to never updated",
          "[strategies][checkpoint][parameter_server]") {
  const auto mode = GENERATE(from_range(cluster_modes()));
  CAPTURE(mode.name());
  TempDir dir;
  const auto path = dir.file("ckpt");
  PsModel model(mode, 2, Partitioner{FixedShardsPartitioner(2)});
  model.w.assign(ramp({7, 3}, 1.0f));
  model.checkpoint().save(path); // before any optimizer step: no slots
  const auto before = model.snapshot();
  CHECK(before.count("w/m") == 0);
  model.train(1.0f);
  model.train(2.0f);
  model.checkpoint().restore(path);
  CHECK(bits(model.w.read_value()) == before.at("w"));
  const auto w_slots = model.w.read_slots();
  REQUIRE(w_slots.count("m") == 1);
  CHECK(bits(w_slots.at("m")) == bits(Tensor::zeros({7, 3}, DType::float32)));
  CHECK(bits(w_slots.at("v")) == bits(Tensor::zeros({7, 3}, DType::float32)));
  CHECK(w_slots.at("iterations").to_vector<int64_t>() == std::vector<int64_t>{0, 0});
  CHECK(bits(model.b.read_slots().at("momentum")) == bits(Tensor::zeros({4}, DType::float32)));
}

TEST_CASE("a bad or truncated checkpoint of sharded variables changes nothing", "[strategies][checkpoint][parameter_server]") {
  const auto mode = GENERATE(from_range(cluster_modes()));
  CAPTURE(mode.name());
  TempDir dir;
  const auto path = dir.file("ckpt");
  PsModel model(mode, 2, Partitioner{FixedShardsPartitioner(2)});
  model.train(1.0f);
  model.checkpoint().save(path);
  model.train(-1.0f);
  model.train(2.0f);
  const auto current = model.snapshot();
  const auto good = read_bytes(path);

  write_bytes(path, good.substr(0, good.size() - 9));
  CHECK(error_code_of([&] { model.checkpoint().restore(path); }) == Errc::data_loss);
  CHECK(model.snapshot() == current);

  auto flipped = good;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x40);
  write_bytes(path, flipped);
  CHECK(error_code_of([&] { model.checkpoint().restore(path); }) == Errc::data_loss);
  CHECK(model.snapshot() == current);

  // A well-formed file whose slot does not fit the variable: "w/m" of (2, 2).
  {
    Runtime local({.logical_cpu_devices = 1});
    OneDeviceStrategy strategy(local, "CPU:0");
    auto scope = strategy.scope();
    std::map<std::string, Variable> variables;
    variables.emplace("w", strategy.create_variable(Tensor::zeros({7, 3}, DType::float32)));
    variables.emplace("w/m", strategy.create_variable(Tensor::zeros({2, 2}, DType::float32)));
    variables.emplace("b", strategy.create_variable(Tensor::zeros({4}, DType::float32)));
    variables.emplace("step", strategy.create_variable(Tensor(int64_t{0})));
    Checkpoint(variables).save(path);
  }
  CHECK_THAT(error_message_of([&] { model.checkpoint().restore(path); }),
             Contains("checkpoint from a different model") && Contains("optimizer slot 'w/m' is float32 (2, 2)"));
  CHECK(model.snapshot() == current);
}

TEST_CASE("checkpoints of sharded variables are refused inside a scheduled function",
          "[strategies][checkpoint][parameter_server]") {
  const auto mode = GENERATE(from_range(cluster_modes()));
  CAPTURE(mode.name());
  TempDir dir;
  const auto path = dir.file("ckpt");
  PsModel model(mode, 2, Partitioner{FixedShardsPartitioner(2)});
  model.train(1.0f);
  model.checkpoint().save(path);
  model.train(2.0f);
  const auto current = model.snapshot();
  const auto inside = dir.file("inside");
  ClusterCoordinator coordinator(*model.strategy);
  auto attempt = remote_function("sharded_checkpoint_test_inside", [&]() -> std::vector<std::string> {
    std::vector<std::string> errors;
    for (const auto& call : std::vector<std::function<void()>>{
           [&] { model.checkpoint().save(inside); }, [&] { model.checkpoint().restore(path); },
           [&] { (void)model.w.read_slots(); }, [&] { model.w.assign_slots({}); }}) {
      try {
        call();
        errors.emplace_back("no error");
      } catch (const Error& e) {
        errors.emplace_back(std::string(name(e.code())) + ": " + e.what());
      }
    }
    return errors;
  });
  auto result = coordinator.schedule(attempt);
  coordinator.join();
  const auto errors = result.fetch();
  REQUIRE(errors.size() == 4);
  CHECK_THAT(errors[0], Contains("failed_precondition") && Contains("Checkpoint::save was called inside a scheduled function"));
  CHECK_THAT(errors[1], Contains("failed_precondition") && Contains("Checkpoint::restore was called inside a scheduled function"));
  CHECK_THAT(errors[2], Contains("failed_precondition") && Contains("read_slots inside a scheduled function"));
  CHECK_THAT(errors[3], Contains("failed_precondition") && Contains("assign_slots inside a scheduled function"));
  CHECK_FALSE(fs::exists(inside));
  CHECK(model.snapshot() == current);
}

TEST_CASE("a job restarted after losing a parameter server resumes from its last checkpoint",
          "[strategies][checkpoint][parameter_server]") {
  const auto mode = GENERATE(from_range(cluster_modes()));
  CAPTURE(mode.name());
  TempDir dir;
  const auto path = dir.file("ckpt");
  std::map<std::string, std::string> saved;
  {
    PsModel job(mode, 2, Partitioner{FixedShardsPartitioner(2)});
    ClusterCoordinator coordinator(*job.strategy);
    auto step = remote_function("sharded_checkpoint_test_step", [&](float k) { job.train(k); });
    for (float k : {1.0f, 2.0f, -1.0f})
      (void)coordinator.schedule(step, k);
    coordinator.join();
    CHECK(job.step.read_value().item<int64_t>() == 3);
    job.checkpoint().save(path);
    saved = job.snapshot();
    job.runtime->impl().ps_cluster()->kill_parameter_server(1, "test: parameter server 1 lost");
    // The coordinator fails naming the lost server, and so does a save.
    CHECK_THAT(error_message_of([&] {
                 (void)coordinator.schedule(step, 1.0f);
                 coordinator.join();
               }),
               Contains("/job:ps/replica:0/task:1"));
    const auto before = read_bytes(path);
    CHECK(error_code_of([&] { job.checkpoint().save(path); }) == Errc::peer_lost);
    CHECK(read_bytes(path) == before);
  }
  // The whole job again, with fresh servers: it resumes where it saved.
  PsModel restarted(mode, 2, Partitioner{FixedShardsPartitioner(2)});
  CHECK(restarted.checkpoint().restore_if_exists(path));
  CHECK(restarted.snapshot() == saved);
  CHECK(restarted.step.read_value().item<int64_t>() == 3);
}

TEST_CASE("a checkpoint's keys name one variable each, slots included", "[strategies][checkpoint][parameter_server]") {
  PsModel model(ClusterMode{}, 1, std::nullopt);
  CHECK_THAT(error_message_of([&] { Checkpoint({}, {model.w, model.w}); }), Contains("two variables are named 'w'"));
  CHECK(error_code_of([&] { Checkpoint({}, {model.w, ShardedVariable{nullptr}}); }) == Errc::invalid_argument);
  CHECK_THAT(error_message_of([&] {
               Checkpoint(std::map<std::string, Variable>{},
                          std::map<std::string, ShardedVariable>{{"w", model.w}, {"w/m", model.b}});
             }),
             Contains("the key 'w/m' would hold the optimizer slot 'm' of sharded variable 'w'"));
  // Braced lists of two pick the sharded forms, not the map's iterator pair.
  const Checkpoint both({model.w, model.b});
  CHECK(both.sharded_variables().size() == 2);
  CHECK(both.variables().empty());
  CHECK(Checkpoint({}, {model.w, model.b}).sharded_variables().size() == 2);
}

TEST_CASE("assign_slots refuses unknown names, other shapes and bad counts and changes nothing",
          "[strategies][checkpoint][parameter_server]") {
  PsModel model(ClusterMode{}, 2, Partitioner{FixedShardsPartitioner(2)});
  model.train(1.0f);
  const auto current = model.snapshot();
  const auto m = Tensor::zeros({7, 3}, DType::float32);
  CHECK_THAT(error_message_of([&] { model.w.assign_slots({{"velocity", m}}); }),
             Contains("\"velocity\" is not an optimizer slot"));
  CHECK(error_code_of([&] { model.w.assign_slots({{"m", Tensor::zeros({3, 7}, DType::float32)}}); })
        == Errc::shape_mismatch);
  CHECK(error_code_of([&] { model.w.assign_slots({{"m", Tensor::zeros({7, 3}, DType::float64)}}); })
        == Errc::dtype_mismatch);
  CHECK_THAT(error_message_of([&] { model.w.assign_slots({{"m", m}, {"iterations", Tensor(int64_t{-1})}}); }),
             Contains("negative count -1"));
  CHECK_THAT(error_message_of([&] { model.w.assign_slots({{"iterations", Tensor::from_vector<int64_t>({1, 2, 3})}}); }),
             Contains("one count per shard (2)"));
  CHECK_THAT(error_message_of([&] { model.w.assign_slots({{"momentum", m}, {"v", m}}); }),
             Contains("\"momentum\" (SGD with momentum) comes alone"));
  CHECK(model.snapshot() == current);
}
