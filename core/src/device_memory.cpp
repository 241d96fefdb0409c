#include <troupe/core/device_memory.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include <troupe/core/device_spec.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

struct Registry {
  std::mutex mutex;
  // In registration order; the last entry of a name serves it.
  std::vector<std::shared_ptr<DeviceMemory>> memories;
};

Registry& registry() {
  // Never destroyed: tensors freed during static destruction may still look it up.
  static auto* instance = new Registry;
  return *instance;
}

std::atomic<GpuAbsenceReason> absence_reason{nullptr};

} // namespace

std::shared_ptr<DeviceMemory> device_memory_for(const DeviceSpec& device) {
  if (!device.is_gpu())
    return nullptr;
  const std::string name = DeviceSpec::local("GPU", device.device_index().value_or(0)).short_name();
  auto& reg = registry();
  std::string served;
  {
    std::lock_guard<std::mutex> guard{reg.mutex};
    for (auto it = reg.memories.rbegin(); it != reg.memories.rend(); ++it)
      if ((*it)->device() == name)
        return *it;
    std::vector<std::string> names;
    for (const auto& memory : reg.memories)
      if (std::find(names.begin(), names.end(), memory->device()) == names.end())
        names.push_back(memory->device());
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
      served += (served.empty() ? "" : ", ") + n;
  }
  if (!served.empty())
    fail(Errc::not_found, "device \"" + device.to_string() + "\" does not exist: the GPUs of this process are "
                            + served + " (RuntimeOptions::logical_gpu_devices_per_gpu splits each card into more)");
  const auto why_none = absence_reason.load();
  auto reason = why_none != nullptr ? why_none() : std::string();
  if (reason.empty())
    reason = "no Runtime of this process is running; GPU tensors are made while one is";
  fail(Errc::not_found, "device \"" + device.to_string() + "\" does not exist: this process has no GPU ("
                          + reason + "); use a CPU device such as \"CPU:0\"");
}

std::string device_of_card(int card) {
  auto& reg = registry();
  std::lock_guard<std::mutex> guard{reg.mutex};
  std::string first;
  std::vector<int> cards;
  for (const auto& memory : reg.memories) {
    // Logical GPUs count up across cards: the lowest name on `card` is its first.
    const auto index = DeviceSpec::from_string(memory->device()).device_index().value_or(0);
    if (memory->card() == card
        && (first.empty() || index < DeviceSpec::from_string(first).device_index().value_or(0)))
      first = memory->device();
    if (std::find(cards.begin(), cards.end(), memory->card()) == cards.end())
      cards.push_back(memory->card());
  }
  if (!first.empty())
    return first;
  std::sort(cards.begin(), cards.end());
  std::string known;
  for (int c : cards)
    known += (known.empty() ? "" : ", ") + std::to_string(c);
  fail(Errc::not_found, "CUDA device " + std::to_string(card) + " serves no GPU of this process"
                          + (known.empty() ? std::string(" (it has none while no Runtime with GPUs runs)")
                                           : " (its GPUs are on cards " + known + ")"));
}

void register_device_memory(std::shared_ptr<DeviceMemory> memory) {
  auto& reg = registry();
  std::lock_guard<std::mutex> guard{reg.mutex};
  reg.memories.push_back(std::move(memory));
}

void set_gpu_absence_reason(GpuAbsenceReason reason) noexcept {
  absence_reason.store(reason);
}

void unregister_device_memory(const DeviceMemory* memory) noexcept {
  auto& reg = registry();
  std::lock_guard<std::mutex> guard{reg.mutex};
  std::erase_if(reg.memories, [&](const auto& m) { return m.get() == memory; });
}

} // namespace troupe::internal
