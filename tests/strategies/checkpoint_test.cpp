#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include <support/runtime_modes.hpp>
#include <support/test_process.hpp>
#include <support/temp_files.hpp>

#include <troupe/core/crc32c.hpp>
#include <troupe/strategies/checkpoint_format.hpp>

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::cpu_devices;

namespace fs = std::filesystem;
using troupe::testing::TempDir;
using troupe::testing::read_bytes;
using troupe::testing::write_bytes;

namespace {


Tensor floats(std::vector<float> values, Shape shape) {
  return Tensor::from_vector<float>(values, std::move(shape));
}

Variable make(Strategy& strategy, Tensor initial, VariableOptions options) {
  auto scope = strategy.scope();
  return strategy.create_variable(initial, std::move(options));
}

Errc code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::internal;
}

/// A small model: weights (2, 3) float32 and a step counter int64.
struct Model {
  Variable w;
  Variable step;

  explicit Model(Strategy& strategy)
    : w(make(strategy, Tensor::zeros({2, 3}, DType::float32), {.name = "w", .aggregation = VariableAggregation::MEAN})),
      step(make(strategy, Tensor(int64_t{0}), {.name = "step", .aggregation = VariableAggregation::ONLY_FIRST_REPLICA})) {}

  [[nodiscard]] Checkpoint checkpoint() const { return Checkpoint({w, step}); }
};

} // namespace

TEST_CASE("a checkpoint round trip restores every variable on every replica", "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  model.w.assign(floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  model.step.assign(Tensor(int64_t{42}));
  const auto path = dir.file("ckpt");
  model.checkpoint().save(path);
  CHECK(read_bytes(path).substr(0, 8) == "TROUPECK");
  CHECK_FALSE(fs::exists(path + ".tmp"));

  model.w.assign(Tensor::zeros({2, 3}, DType::float32));
  model.step.assign(Tensor(int64_t{0}));
  auto checkpoint = model.checkpoint();
  checkpoint.restore(path);
  for (int r = 0; r < 2; ++r) {
    CHECK(model.w.value(r).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(model.w.value(r).shape() == Shape{2, 3});
    CHECK(model.step.value(r).item<int64_t>() == 42);
  }
  // A map names variables by key.
  Checkpoint renamed(std::map<std::string, Variable>{{"layer/kernel", model.w}});
  renamed.save(dir.file("renamed"));
  model.w.assign(Tensor::ones({2, 3}, DType::float32));
  renamed.restore(dir.file("renamed"));
  CHECK(model.w.value(1).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  // Saving again over an existing checkpoint replaces it.
  model.w.assign(Tensor::ones({2, 3}, DType::float32));
  renamed.save(dir.file("renamed"));
  model.w.assign(Tensor::zeros({2, 3}, DType::float32));
  renamed.restore(dir.file("renamed"));
  CHECK(model.w.value(0).to_vector<float>() == std::vector<float>(6, 1.0f));
}

TEST_CASE("a checkpoint saved from 4 replicas restores into 2 and into 1", "[strategies][checkpoint]") {
  TempDir dir;
  const auto path = dir.file("ckpt");
  Runtime rt({.logical_cpu_devices = 4});
  auto metric_options = [](const char* name, VariableAggregation aggregation) {
    return VariableOptions{.name = name, .synchronization = VariableSynchronization::ON_READ, .aggregation = aggregation};
  };
  {
    MirroredStrategy four(rt, cpu_devices(4));
    auto w = make(four, floats({1, 2}, {2}), {.name = "w", .aggregation = VariableAggregation::SUM});
    auto total = make(four, Tensor(0.0f), metric_options("total", VariableAggregation::SUM));
    auto count = make(four, Tensor(int64_t{0}), metric_options("count", VariableAggregation::SUM));
    auto mean = make(four, Tensor(0.0f), metric_options("mean", VariableAggregation::MEAN));
    four.run([&] {
      const auto r = get_replica_context().replica_id_in_sync_group();
      w.assign_add(floats({1, 1}, {2}));                   // + 4 over 4 replicas
      total.assign_add(Tensor(static_cast<float>(r + 1))); // 1 + 2 + 3 + 4
      count.assign_add(Tensor(int64_t{r + 2}));            // 2 + 3 + 4 + 5
      mean.assign_add(Tensor(static_cast<float>(2 * r)));  // mean of 0, 2, 4, 6
    });
    CHECK(total.read_value().item<float>() == 10.0f);
    CHECK(count.read_value().item<int64_t>() == 14);
    CHECK(mean.read_value().item<float>() == 3.0f);
    Checkpoint({w, total, count, mean}).save(path);
  }
  for (int replicas : {2, 1}) {
    CAPTURE(replicas);
    MirroredStrategy strategy(rt, cpu_devices(replicas));
    auto w = make(strategy, floats({0, 0}, {2}), {.name = "w", .aggregation = VariableAggregation::SUM});
    auto total = make(strategy, Tensor(0.0f), metric_options("total", VariableAggregation::SUM));
    auto count = make(strategy, Tensor(int64_t{0}), metric_options("count", VariableAggregation::SUM));
    auto mean = make(strategy, Tensor(0.0f), metric_options("mean", VariableAggregation::MEAN));
    Checkpoint({w, total, count, mean}).restore(path);
    for (int r = 0; r < replicas; ++r) {
      CHECK(w.value(r).to_vector<float>() == std::vector<float>{5, 6});
      CHECK(mean.value(r).item<float>() == 3.0f);
    }
    // Sums are kept whatever the replica count: split over the copies.
    CHECK(total.read_value().item<float>() == 10.0f);
    CHECK(total.value(0).item<float>() == 10.0f / static_cast<float>(replicas));
    CHECK(count.read_value().item<int64_t>() == 14);
    CHECK(mean.read_value().item<float>() == 3.0f);
  }
}

TEST_CASE("restoring a missing checkpoint names it", "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  const auto path = dir.file("nothing_here");
  try {
    model.checkpoint().restore(path);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::not_found);
    CHECK_THAT(e.what(), Contains("checkpoint \"" + path + "\" does not exist"));
  }
}

TEST_CASE("a corrupted checkpoint is data loss and changes nothing", "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  model.w.assign(floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  model.step.assign(Tensor(int64_t{7}));
  const auto good = dir.file("good");
  model.checkpoint().save(good);
  const auto bytes = read_bytes(good);
  model.w.assign(Tensor::full({2, 3}, 9, DType::float32));
  const auto bad = dir.file("bad");
  auto unchanged = [&] {
    for (int r = 0; r < 2; ++r) {
      CHECK(model.w.value(r).to_vector<float>() == std::vector<float>(6, 9.0f));
      CHECK(model.step.value(r).item<int64_t>() == 7);
    }
  };
  auto restore_message = [&](const std::string& contents) {
    write_bytes(bad, contents);
    try {
      model.checkpoint().restore(bad);
    } catch (const Error& e) {
      CHECK(e.code() == Errc::data_loss);
      CHECK_THAT(e.what(), Contains("\"" + bad + "\" is not a valid troupe checkpoint"));
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };

  SECTION("a flipped byte in a variable's data names the variable") {
    // "step" sorts before "w"; w's 24 bytes are the last record, before its CRC and the trailer.
    auto corrupt = bytes;
    corrupt[corrupt.size() - 8 - 10] ^= 0x01;
    CHECK_THAT(restore_message(corrupt), Contains("the data of variable 2 of 2 ('w') fails its checksum"));
  }
  SECTION("bad magic, another version, a flipped trailer") {
    auto corrupt = bytes;
    corrupt[0] = 'X';
    CHECK_THAT(restore_message(corrupt), Contains("bad magic"));
    corrupt = bytes;
    corrupt[8] = 2;
    CHECK_THAT(restore_message(corrupt), Contains("it has format version 2 but this troupe reads version 1"));
    corrupt = bytes;
    corrupt.back() ^= 0x80;
    CHECK_THAT(restore_message(corrupt), Contains("the file fails its checksum"));
    CHECK_THAT(restore_message(bytes + "x"), Contains("1 unexpected bytes follow the file checksum"));
  }
  SECTION("every single flipped bit anywhere is caught") {
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int bit : {0, 7}) {
        auto corrupt = bytes;
        corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << bit));
        write_bytes(bad, corrupt);
        CAPTURE(i, bit);
        CHECK(code_of([&] { model.checkpoint().restore(bad); }) == Errc::data_loss);
      }
    }
  }
  SECTION("every truncation is caught") {
    CHECK_THAT(restore_message(bytes.substr(0, bytes.size() - 3)), Contains("truncated"));
    CHECK_THAT(restore_message(bytes.substr(0, 5)), Contains("the file is truncated: it ends inside the header"));
    for (size_t n = 0; n < bytes.size(); ++n) {
      write_bytes(bad, bytes.substr(0, n));
      CAPTURE(n);
      CHECK(code_of([&] { model.checkpoint().restore(bad); }) == Errc::data_loss);
    }
  }
  unchanged();
  // The good checkpoint still restores.
  model.checkpoint().restore(good);
  CHECK(model.w.value(1).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("a checkpoint whose shape overflows the element count is data loss", "[strategies][checkpoint]") {
  // Found by fuzz/checkpoint_fuzz (fuzz/corpus/checkpoint/regression-shape-overflow):
  // float32 of shape (2^33, 2^33) with 0 bytes. The element count 2^66 wrapped
  // to 0, matched the byte count, and the file parsed into a tensor whose
  // shape claims 2^66 elements over no memory.
  std::string bytes = "TROUPECK";
  auto put = [&bytes](uint64_t value, int n) {
    for (int i = 0; i < n; ++i)
      bytes.push_back(static_cast<char>(value >> (8 * i)));
  };
  put(1, 4); // format version
  put(1, 4); // one variable
  put(1, 4); // name length
  bytes += "v";
  put(static_cast<uint8_t>(DType::float32), 1);
  put(2, 4); // rank
  put(uint64_t{1} << 33, 8);
  put(uint64_t{1} << 33, 8);
  put(0, 8); // byte count
  put(internal::crc32c(bytes.data(), 0), 4);
  put(internal::crc32c(bytes.data(), bytes.size()), 4);
  try {
    (void)internal::parse_checkpoint(bytes, "overflow.ckpt");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::data_loss);
    CHECK_THAT(e.what(), Contains("variable 1 of 1 ('v') of float32 (8589934592, 8589934592) says it has 0 bytes"));
  }
}

TEST_CASE("restoring a checkpoint of a different model is an error naming the variable", "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  model.w.assign(Tensor::ones({2, 3}, DType::float32));
  const auto path = dir.file("ckpt");
  model.checkpoint().save(path);

  auto w_other_shape = make(strategy, Tensor::zeros({3, 2}, DType::float32), {.name = "w"});
  auto w_other_dtype = make(strategy, Tensor::zeros({2, 3}, DType::float64), {.name = "w"});
  auto step = model.step;
  auto message = [&](std::map<std::string, Variable> variables, CheckpointRestoreOptions options = {}) {
    try {
      Checkpoint(std::move(variables)).restore(path, options);
    } catch (const Error& e) {
      CHECK(e.code() == Errc::invalid_argument);
      return std::string(e.what());
    }
    return std::string("(no exception)");
  };
  CHECK_THAT(message({{"w", w_other_shape}, {"step", step}}),
             Contains("checkpoint from a different model: variable 'w' is float32 (3, 2) here but float32 (2, 3) in \""
                      + path + "\""));
  CHECK_THAT(message({{"w", w_other_dtype}, {"step", step}}),
             Contains("variable 'w' is float64 (2, 3) here but float32 (2, 3)"));
  CHECK_THAT(message({{"w", model.w}, {"step", step}, {"bias", w_other_shape}}),
             Contains("checkpoint from a different model: \"" + path + "\" has no variable 'bias' (it holds 'step', 'w')"));
  // Variables of the file that the Checkpoint lacks: an error unless expect_partial.
  CHECK_THAT(message({{"w", model.w}}),
             Contains("\"" + path + "\" also holds 'step', which this Checkpoint does not have"));
  model.w.assign(Tensor::zeros({2, 3}, DType::float32));
  Checkpoint(std::map<std::string, Variable>{{"w", model.w}}).restore(path, {.expect_partial = true});
  CHECK(model.w.value(1).to_vector<float>() == std::vector<float>(6, 1.0f));
  // Nothing was changed by the failed restores.
  CHECK(w_other_shape.value(0).to_vector<float>() == std::vector<float>(6, 0.0f));
}

TEST_CASE("a failed save leaves the previous checkpoint intact", "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  model.w.assign(Tensor::ones({2, 3}, DType::float32));
  const auto path = dir.file("ckpt");
  model.checkpoint().save(path);
  const auto before = read_bytes(path);
  model.w.assign(Tensor::full({2, 3}, 5, DType::float32));

  SECTION("the temporary file cannot be created") {
    fs::create_directory(path + ".tmp");
    try {
      model.checkpoint().save(path);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::failed_precondition);
      CHECK_THAT(e.what(), Contains("Checkpoint::save: cannot create \"" + path + ".tmp\""));
    }
    CHECK(read_bytes(path) == before);
  }
  SECTION("the directory is a file") {
    const auto not_a_dir = dir.file("plain_file");
    write_bytes(not_a_dir, "x");
    const auto inside = not_a_dir + "/ckpt";
    try {
      model.checkpoint().save(inside);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::not_found);
      CHECK_THAT(e.what(), Contains("cannot create \"" + inside + ".tmp\": Not a directory"));
    }
    CHECK(read_bytes(not_a_dir) == "x");
  }
  SECTION("a variable cannot be read") {
    auto none = make(strategy, Tensor(1.0f), {.name = "none", .synchronization = VariableSynchronization::ON_READ});
    CHECK_THROWS_WITH(Checkpoint({model.w, none}).save(path),
                      Contains("ON_READ variable 'none' has aggregation NONE"));
    CHECK_FALSE(fs::exists(path + ".tmp"));
  }
  CHECK(read_bytes(path) == before);
  model.checkpoint().restore(path);
  CHECK(model.w.value(0).to_vector<float>() == std::vector<float>(6, 1.0f));
}

TEST_CASE("checkpoints are saved and restored in cross-replica context only", "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  const auto path = dir.file("ckpt");
  CHECK_THROWS_WITH(Checkpoint({model.w, model.w}), Contains("Checkpoint: two variables are named 'w'"));
  std::string error;
  strategy.run([&] {
    if (get_replica_context().replica_id_in_sync_group() != 0)
      return;
    try {
      model.checkpoint().save(path);
    } catch (const Error& e) {
      error = e.what();
    }
  });
  CHECK_THAT(error, Contains("Checkpoint::save was called in replica context"));
  CHECK_FALSE(fs::exists(path));
  // Inside the strategy's scope is fine, and so is another strategy's scope:
  // the values saved there come back after they were changed.
  model.w.assign(floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  model.step.assign(Tensor(int64_t{9}));
  {
    auto scope = strategy.scope();
    model.checkpoint().save(path);
  }
  model.w.assign(Tensor::zeros({2, 3}, DType::float32));
  model.step.assign(Tensor(int64_t{0}));
  OneDeviceStrategy other(rt, "CPU:0");
  auto scope = other.scope();
  model.checkpoint().restore(path);
  for (int replica = 0; replica < 2; ++replica)
    CHECK(model.w.value(replica).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(model.step.value(0).item<int64_t>() == 9);
}

TEST_CASE("restore_if_exists restores an existing checkpoint and reports a missing one without changes",
          "[strategies][checkpoint]") {
  TempDir dir;
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  Model model(strategy);
  const auto path = dir.file("ckpt");
  model.w.assign(floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  model.checkpoint().save(path);
  model.w.assign(Tensor::zeros({2, 3}, DType::float32));
  CHECK_FALSE(model.checkpoint().restore_if_exists(dir.file("missing")));
  CHECK(model.w.read_value().to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(model.checkpoint().restore_if_exists(path));
  CHECK(model.w.read_value().to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  write_bytes(path, "not a checkpoint");
  CHECK(code_of([&] { (void)model.checkpoint().restore_if_exists(path); }) == Errc::data_loss);
}

namespace {

// The "CHECKPOINT ..." lines of each worker, by task name ("worker:1").
std::map<std::string, std::vector<std::string>> worker_lines(const std::string& out) {
  std::map<std::string, std::vector<std::string>> lines;
  for (const auto& line : troupe::testing::split_lines(out)) {
    const auto close = line.find("] CHECKPOINT ");
    if (line.rfind("[worker:", 0) == 0 && close != std::string::npos)
      lines[line.substr(1, close - 1)].push_back(line.substr(close + 2));
  }
  return lines;
}

std::string line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& line : lines)
    if (line.rfind(prefix, 0) == 0)
      return line;
  return {};
}

} // namespace

TEST_CASE("under MultiWorkerMirroredStrategy the chief alone writes a checkpoint and every worker restores its state",
          "[strategies][checkpoint][cluster]") {
  // Two launches of 2 workers x 2 replicas: one saves, one resumes. Each
  // worker has its own folder (as on separate machines); worker 1's holds
  // only what the test puts there.
  TempDir dir;
  const auto chief = dir.file("0");
  const auto other = dir.file("1");
  fs::create_directories(chief);
  fs::create_directories(other);
  const auto root = fs::path(chief).parent_path().string();
  const std::string worker = TROUPE_CHECKPOINT_WORKER;
  const auto saved = troupe::testing::run_launcher(
    {"--workers", "2", "--timeout-seconds", "60", "--", worker, "save", root}, {}, std::chrono::seconds(70));
  INFO(saved.out << saved.err);
  REQUIRE(saved.exit_code == 0);
  CHECK(fs::exists(chief + "/ckpt"));
  CHECK(fs::is_empty(other)); // only the chief writes, and no "<path>.tmp" is left
  CHECK_FALSE(fs::exists(chief + "/ckpt.tmp"));

  // Worker 1 has a "stale" checkpoint the chief does not; the chief's "bad"
  // is corrupt while worker 1's is good.
  fs::copy_file(chief + "/ckpt", other + "/stale");
  fs::copy_file(chief + "/ckpt", other + "/bad");
  write_bytes(chief + "/bad", "TROUPECK and then garbage");
  const auto resumed = troupe::testing::run_launcher(
    {"--workers", "2", "--timeout-seconds", "60", "--", worker, "resume", root}, {}, std::chrono::seconds(70));
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  auto lines = worker_lines(resumed.out);
  REQUIRE(lines.size() == 2);
  for (const auto& task : {std::string("worker:0"), std::string("worker:1")}) {
    INFO(task);
    const auto& mine = lines[task];
    CHECK(line_starting(mine, "CHECKPOINT restored step 7") != "");
    CHECK(line_starting(mine, "CHECKPOINT stale not restored") != "");
    CHECK(line_starting(mine, "CHECKPOINT unchanged") != "");
    const auto missing = line_starting(mine, "CHECKPOINT missing not_found: ");
    const auto bad = line_starting(mine, "CHECKPOINT bad data_loss: ");
    CHECK_THAT(missing, Contains(chief + "/stale\" does not exist"));
    CHECK_THAT(bad, Contains(chief + "/bad\" is not a valid troupe checkpoint"));
  }
  // The other worker's errors name it and the chief, and a failed save on
  // the chief fails on every worker.
  CHECK_THAT(line_starting(lines["worker:1"], "CHECKPOINT bad"),
             Contains("Checkpoint::restore on worker 1: the chief (worker 0) failed"));
  CHECK_THAT(line_starting(lines["worker:0"], "CHECKPOINT unwritable not_found: "),
             Contains("cannot create \"" + chief + "/no_folder/ckpt.tmp\""));
  CHECK_THAT(line_starting(lines["worker:1"], "CHECKPOINT unwritable not_found: "),
             Contains("Checkpoint::save on worker 1: the chief (worker 0) failed")
               && Contains(chief + "/no_folder/ckpt.tmp"));
  CHECK_FALSE(fs::exists(other + "/no_folder"));
}
