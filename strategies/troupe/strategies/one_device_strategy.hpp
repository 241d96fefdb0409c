#pragma once

#include <string>

#include <troupe/actors/fwd.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe {

/// Runs on a single device (tf.distribute.OneDeviceStrategy).
class OneDeviceStrategy final : public Strategy {
public:
  OneDeviceStrategy(Runtime& runtime, const std::string& device);
};

} // namespace troupe
