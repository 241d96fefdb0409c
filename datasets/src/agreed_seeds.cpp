#include <troupe/datasets/agreed_seeds.hpp>

#include <memory>

#include <troupe/datasets/shard_dataset.hpp>

namespace troupe::internal {

namespace {

using NodePtr = std::shared_ptr<const detail::DatasetNode>;

/// SplitMix64: nearby inputs (positions 1, 2, ...) give unrelated seeds.
uint64_t mix(uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

} // namespace

AgreedSeeds with_agreed_seeds(const Dataset& dataset, uint64_t seed, SeedScope scope) {
  std::vector<NodePtr> chain; // source first
  for (auto node = dataset.node(); node; node = node->input())
    chain.insert(chain.begin(), node);
  std::size_t end = chain.size();
  if (scope == SeedScope::before_last_shard) {
    end = 0;
    for (std::size_t i = 0; i < chain.size(); ++i)
      if (dynamic_cast<const ShardDataset*>(chain[i].get()) != nullptr)
        end = i;
  }
  AgreedSeeds out{dataset, {}};
  NodePtr node;
  bool changed = false;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    // Unchanged nodes are kept as they are until the first one that changes.
    node = i == 0 ? chain[i] : (changed ? chain[i]->with_input(node) : chain[i]);
    if (i >= end)
      continue;
    if (auto seeded = node->with_drawn_seed(mix(seed ^ mix(i)))) {
      out.seeded.push_back(node->describe());
      node = std::move(seeded);
      changed = true;
    }
  }
  if (changed)
    out.dataset = Dataset(node);
  return out;
}

} // namespace troupe::internal
