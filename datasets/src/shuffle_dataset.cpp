#include <troupe/datasets/shuffle_dataset.hpp>

#include <random>
#include <vector>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

/// SplitMix64's finaliser: spreads nearby inputs (seed, seed + 1) far apart.
uint64_t mix(uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t random_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

class ShuffleIterator : public detail::ElementIterator {
public:
  ShuffleIterator(std::unique_ptr<detail::ElementIterator> input, int64_t buffer_size,
                  uint64_t seed)
    : input_(std::move(input)), buffer_size_(static_cast<std::size_t>(buffer_size)),
      generator_(seed) {}

  std::optional<Element> next() override {
    // Fill the buffer (the first call, or a refill the input could not make).
    while (!input_done_ && buffer_.size() < buffer_size_) {
      auto element = input_->next();
      if (!element) {
        input_done_ = true;
        break;
      }
      buffer_.push_back(std::move(*element));
    }
    if (buffer_.empty())
      return std::nullopt;
    // `%` on mt19937_64's output (not uniform_int_distribution, whose
    // algorithm differs between standard libraries) keeps a seeded order
    // the same everywhere, as TensorFlow's `generator() % size` does.
    const std::size_t slot = generator_() % buffer_.size();
    Element result = std::move(buffer_[slot]);
    std::optional<Element> refill;
    if (!input_done_) {
      refill = input_->next();
      input_done_ = !refill;
    }
    if (refill) {
      buffer_[slot] = std::move(*refill);
    } else {
      buffer_[slot] = std::move(buffer_.back());
      buffer_.pop_back();
    }
    return result;
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  std::size_t buffer_size_;
  std::mt19937_64 generator_;
  std::vector<Element> buffer_;
  bool input_done_ = false;
};

} // namespace

ShuffleDataset::ShuffleDataset(std::shared_ptr<const detail::DatasetNode> input,
                               int64_t buffer_size, std::optional<uint64_t> seed,
                               bool reshuffle_each_iteration)
  : ShuffleDataset(std::move(input), buffer_size, seed, seed ? *seed : random_seed(),
                   reshuffle_each_iteration) {}

ShuffleDataset::ShuffleDataset(std::shared_ptr<const detail::DatasetNode> input,
                               int64_t buffer_size, std::optional<uint64_t> seed,
                               uint64_t base_seed, bool reshuffle_each_iteration)
  : UnaryDataset(std::move(input), "shuffle"), buffer_size_(buffer_size), seed_(seed),
    base_seed_(base_seed), reshuffle_(reshuffle_each_iteration) {
  if (buffer_size <= 0)
    fail(Errc::invalid_argument,
         "shuffle: buffer_size must be positive, got " + std::to_string(buffer_size)
           + " (1 keeps the input order; the dataset size shuffles uniformly)");
}

std::unique_ptr<detail::ElementIterator> ShuffleDataset::iterator() const {
  uint64_t pass = 0;
  if (reshuffle_)
    // A peek for the element spec takes the next pass's seed without using it up.
    pass = ElementSpecPeek::active() ? iterations_.load() : iterations_.fetch_add(1);
  return std::make_unique<ShuffleIterator>(input_->iterator(), buffer_size_,
                                           mix(base_seed_ ^ mix(pass)));
}

std::string ShuffleDataset::describe() const {
  return "shuffle(" + std::to_string(buffer_size_)
         + ", seed=" + (seed_ ? std::to_string(*seed_) : std::string("None"))
         + ", reshuffle_each_iteration=" + (reshuffle_ ? "true" : "false") + ")";
}

std::shared_ptr<const detail::DatasetNode>
ShuffleDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  // Keep the base seed, so an unseeded pipeline rewritten keeps its order too.
  return std::make_shared<ShuffleDataset>(std::move(input), buffer_size_, seed_, base_seed_,
                                          reshuffle_);
}

std::shared_ptr<const detail::DatasetNode> ShuffleDataset::with_drawn_seed(uint64_t seed) const {
  if (seed_)
    return nullptr; // the user's seed already makes the order the same everywhere
  return std::make_shared<ShuffleDataset>(input_, buffer_size_, seed_, seed, reshuffle_);
}

} // namespace troupe::internal
