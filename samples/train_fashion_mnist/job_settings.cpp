#include "job_settings.hpp"

#include <charconv>

#include <troupe/troupe.hpp>

namespace train {

namespace {

/// As check_same_across_workers shows a double: the shortest text that reads back bitwise.
std::string text_of(double value) {
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

} // namespace

std::vector<std::pair<std::string, std::string>> job_settings(const Options& opts, const Split& train_split) {
  return {
    {"--replicas", std::to_string(opts.replicas)},
    {"--batch", std::to_string(opts.global_batch)},
    {"--epochs", std::to_string(opts.epochs)},
    {"--stop-after", std::to_string(opts.stop_after)},
    {"--limit", std::to_string(opts.limit_examples)},
    {"--seed", std::to_string(opts.seed)},
    {"--optimizer", opts.optimizer},
    {"--learning-rate", text_of(opts.learning_rate)},
    {"--momentum", text_of(opts.momentum)},
    {"--checkpoint given", opts.checkpoint_dir.empty() ? "false" : "true"},
    {"training images", troupe::TensorSpec::of(train_split.images).to_string()},
    {"training labels", troupe::TensorSpec::of(train_split.labels).to_string()},
  };
}

} // namespace train
