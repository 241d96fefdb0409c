#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <troupe/datasets/auto_shard.hpp>
#include <troupe/datasets/text_line_dataset.hpp>

#include "int64_values.hpp"

using namespace troupe;
using troupe::test::int64_values_of;
using Catch::Matchers::Contains;

namespace {

std::vector<std::string> lines(const Dataset& dataset) {
  std::vector<std::string> out;
  for (const auto& e : dataset)
    out.push_back(bytes_to_string(e.tensor()));
  return out;
}

Dataset with_policy(const Dataset& dataset, AutoShardPolicy policy) {
  DatasetOptions options;
  options.auto_shard_policy = policy;
  return dataset.with_options(options);
}

/// Text files "f0".."f{n-1}" with lines "f<i>:0", "f<i>:1" in a fresh directory.
struct TextFiles {
  std::filesystem::path dir;
  std::vector<std::string> paths;

  explicit TextFiles(int n) {
    dir = std::filesystem::temp_directory_path()
          / ("troupe_auto_shard_" + std::to_string(::getpid()) + "_" + std::to_string(n));
    std::filesystem::create_directories(dir);
    for (int i = 0; i < n; ++i) {
      auto path = (dir / ("f" + std::to_string(i))).string();
      std::ofstream(path) << "f" << i << ":0\nf" << i << ":1\n";
      paths.push_back(path);
    }
  }
  ~TextFiles() { std::filesystem::remove_all(dir); }
};

} // namespace

TEST_CASE("one worker reads the whole dataset and logs nothing", "[datasets][auto_shard]") {
  auto decision = auto_shard(Dataset::range(5), 1, 0);
  CHECK(int64_values_of(decision.dataset) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(decision.summary.empty());
}

TEST_CASE("AUTO shards a pipeline that does not read files by data", "[datasets][auto_shard]") {
  auto dataset = Dataset::range(10).batch(2);
  auto w0 = auto_shard(dataset, 2, 0);
  auto w1 = auto_shard(dataset, 2, 1);
  CHECK(w0.applied == AutoShardPolicy::DATA);
  CHECK(int64_values_of(w0.dataset) == std::vector<int64_t>{0, 1, 4, 5, 8, 9});
  CHECK(int64_values_of(w1.dataset) == std::vector<int64_t>{2, 3, 6, 7});
  CHECK_THAT(w1.summary, Contains("policy AUTO -> DATA"));
  CHECK_THAT(w1.summary, Contains("the dataset does not read files"));
}

TEST_CASE("AUTO shards a file reader by files and keeps the transformations after it", "[datasets][auto_shard]") {
  TextFiles files(4);
  auto dataset = TextLineDataset(files.paths).batch(1).take(10);
  auto w1 = auto_shard(dataset, 2, 1);
  CHECK(w1.applied == AutoShardPolicy::FILE);
  std::vector<std::string> got;
  for (const auto& e : w1.dataset)
    got.push_back(bytes_to_string(e.tensor().reshape({e.tensor().num_elements()})));
  CHECK(got == std::vector<std::string>{"f1:0", "f1:1", "f3:0", "f3:1"});
  CHECK_THAT(w1.summary, Contains("policy AUTO -> FILE, 4 files over 2 workers (the dataset reads files)"));
}

TEST_CASE("FILE with fewer files than workers is an error naming both counts", "[datasets][auto_shard]") {
  TextFiles files(1);
  CHECK_THROWS_WITH(auto_shard(with_policy(TextLineDataset(files.paths), AutoShardPolicy::FILE), 2, 0),
                    Contains("fewer input files (1) than workers (2)"));
  // AUTO falls back to DATA instead.
  auto decision = auto_shard(TextLineDataset(files.paths), 2, 1);
  CHECK(decision.applied == AutoShardPolicy::DATA);
  CHECK(lines(decision.dataset) == std::vector<std::string>{"f0:1"});
}

TEST_CASE("FILE on a pipeline that reads no files names the alternatives", "[datasets][auto_shard]") {
  CHECK_THROWS_WITH(auto_shard(with_policy(Dataset::range(4), AutoShardPolicy::FILE), 2, 0),
                    Contains("use AutoShardPolicy::DATA, or OFF"));
}

TEST_CASE("OFF and HINT leave the dataset whole on every worker", "[datasets][auto_shard]") {
  for (auto policy : {AutoShardPolicy::OFF, AutoShardPolicy::HINT}) {
    auto decision = auto_shard(with_policy(Dataset::range(3), policy), 3, 2);
    CHECK(int64_values_of(decision.dataset) == std::vector<int64_t>{0, 1, 2});
    CHECK(decision.applied == AutoShardPolicy::OFF);
  }
}

TEST_CASE("an invalid worker index is an error", "[datasets][auto_shard]") {
  CHECK_THROWS_WITH(auto_shard(Dataset::range(3), 2, 2), Contains("worker 2 of 2 is not a valid worker index"));
}
