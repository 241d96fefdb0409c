#include <troupe/datasets/auto_shard.hpp>

#include <vector>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

using NodePtr = std::shared_ptr<const detail::DatasetNode>;

/// The pipeline from its source to `last`.
std::vector<NodePtr> chain_of(const NodePtr& last) {
  std::vector<NodePtr> chain;
  for (auto node = last; node; node = node->input())
    chain.insert(chain.begin(), node);
  return chain;
}

/// Replays the transformations of `chain` (all but its source) over `source`.
NodePtr rebuild(const std::vector<NodePtr>& chain, NodePtr source) {
  auto node = std::move(source);
  for (size_t i = 1; i < chain.size(); ++i)
    node = chain[i]->with_input(node);
  return node;
}

std::string count(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

} // namespace

AutoShardDecision auto_shard(const Dataset& dataset, int num_workers, int worker_index) {
  if (num_workers < 1 || worker_index < 0 || worker_index >= num_workers)
    fail(Errc::invalid_argument, "auto_shard: worker " + std::to_string(worker_index) + " of "
                                   + std::to_string(num_workers) + " is not a valid worker index");
  if (num_workers == 1)
    return {dataset, AutoShardPolicy::OFF, ""};
  const auto policy = dataset.options().auto_shard_policy;
  const auto chain = chain_of(dataset.node());
  const auto files = chain.front()->source_files();
  const auto workers = count(static_cast<size_t>(num_workers), "worker");
  const std::string head = "auto-shard: policy " + std::string(name(policy));

  auto shard_files = [&](const std::string& why) -> AutoShardDecision {
    std::vector<std::string> mine;
    for (size_t i = static_cast<size_t>(worker_index); i < files.size(); i += static_cast<size_t>(num_workers))
      mine.push_back(files[i]);
    auto source = chain.front()->with_source_files(std::move(mine));
    return {Dataset(rebuild(chain, source)), AutoShardPolicy::FILE,
            head + " -> FILE, " + count(files.size(), "file") + " over " + workers + " (" + why + ")"};
  };
  auto shard_data = [&](const std::string& why) -> AutoShardDecision {
    return {dataset.shard(num_workers, worker_index), AutoShardPolicy::DATA,
            head + " -> DATA, every " + std::to_string(num_workers) + "th element for worker "
              + std::to_string(worker_index) + " (" + why + ")"};
  };

  switch (policy) {
    case AutoShardPolicy::OFF:
      return {dataset, AutoShardPolicy::OFF, head + ": not sharded; every worker reads all of \""
                                               + dataset.describe() + "\""};
    case AutoShardPolicy::HINT:
      return {dataset, AutoShardPolicy::OFF,
              head + ": not sharded (troupe has no SHARD_HINT placeholder; use FILE or DATA)"};
    case AutoShardPolicy::FILE:
      if (files.empty())
        fail(Errc::invalid_argument,
             "AutoShardPolicy::FILE needs a pipeline that starts by reading files (TFRecordDataset, "
             "TextLineDataset), but it starts with " + chain.front()->describe()
               + ": use AutoShardPolicy::DATA, or OFF to read everything on every worker");
      if (files.size() < static_cast<size_t>(num_workers))
        fail(Errc::invalid_argument,
             "AutoShardPolicy::FILE: there are fewer input files (" + std::to_string(files.size())
               + ") than workers (" + std::to_string(num_workers)
               + "); split the data into at least as many files, or use AutoShardPolicy::DATA or OFF");
      return shard_files("set by the dataset's options");
    case AutoShardPolicy::DATA:
      return shard_data("set by the dataset's options");
    case AutoShardPolicy::AUTO:
      break;
  }
  if (files.size() >= static_cast<size_t>(num_workers))
    return shard_files("the dataset reads files");
  if (!files.empty())
    return shard_data("only " + count(files.size(), "file") + " for " + workers);
  return shard_data("the dataset does not read files");
}

} // namespace troupe
