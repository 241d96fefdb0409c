#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fashion_mnist_data.hpp"
#include "options.hpp"

namespace train {

/// The flags and data that shape the model every task trains, by flag name,
/// as text: what check_same_across_workers compares across the processes of
/// a job (mirrored or parameter-server), so that a process started with
/// another optimizer, batch or slice of the data fails the job at start
/// instead of training apart (or pushing its own updates into the shared model).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> job_settings(const Options& opts,
                                                                            const Split& train_split);

} // namespace train
