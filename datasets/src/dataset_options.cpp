#include <troupe/datasets/dataset_options.hpp>

namespace troupe {

std::string_view name(AutoShardPolicy policy) noexcept {
  switch (policy) {
    case AutoShardPolicy::AUTO: return "AUTO";
    case AutoShardPolicy::FILE: return "FILE";
    case AutoShardPolicy::DATA: return "DATA";
    case AutoShardPolicy::OFF: return "OFF";
    case AutoShardPolicy::HINT: break;
  }
  return "HINT";
}

} // namespace troupe
