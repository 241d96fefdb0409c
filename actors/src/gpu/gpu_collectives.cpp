#include <troupe/actors/gpu/gpu_collectives.hpp>

#include <cstring>
#include <set>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/actors/gpu/nccl_collective.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>

namespace troupe::internal {

namespace {

/// The device's GPU memory, or null when it is not a GPU of a running
/// Runtime (its GPUs go before a group's actor exits when a Runtime stops).
GpuDeviceMemory* gpu_memory(const DeviceSpec& device) noexcept {
  try {
    auto memory = device_memory_for(device);
    return dynamic_cast<GpuDeviceMemory*>(memory.get());  // the registry keeps it alive
  } catch (const std::exception&) {
    return nullptr;
  }
}

// What announce() writes: [unique id][i32 ranks][name].
constexpr std::size_t announced_fixed = NcclUniqueId::size + sizeof(int32_t);
constexpr std::size_t max_name_bytes = 256;

void check_announced(const std::string& announced) {
  if (announced.size() < announced_fixed || announced.size() > announced_fixed + max_name_bytes)
    fail(Errc::data_loss, "rank 0 announced an NCCL communicator of " + std::to_string(announced.size())
                            + " bytes, which does not read as one (" + std::to_string(announced_fixed) + " to "
                            + std::to_string(announced_fixed + max_name_bytes) + " bytes)");
}

} // namespace

GpuCollectives::GpuCollectives(Setup setup, CommunicatorFailed communicator_failed)
  : setup_(std::move(setup)), communicator_failed_(std::move(communicator_failed)) {
}

bool GpuCollectives::wanted(const std::vector<std::vector<Tensor>>& inputs) noexcept {
  for (const auto& replica : inputs)
    for (const auto& t : replica)
      if (t.valid() && !t.on_host())
        return true;
  return false;
}

std::string GpuCollectives::nccl_unusable_reason(const std::vector<DeviceSpec>& devices) {
  std::set<int> cards;
  for (const auto& device : devices) {
    auto* gpu = gpu_memory(device);
    if (gpu == nullptr)
      return "replica device " + device.short_name() + " is not a GPU";
    if (!cards.insert(gpu->gpu()).second)
      return device.short_name() + " shares physical GPU " + std::to_string(gpu->gpu())
             + " with another replica, and NCCL takes one rank per GPU";
  }
  auto& nccl = nccl_backend();
  return nccl.available() ? std::string{} : nccl.unavailable_reason();
}

bool GpuCollectives::uses_nccl() {
  if (uses_nccl_)
    return *uses_nccl_;
  const std::string group = "collective group " + std::to_string(setup_.group);
  std::string devices;
  for (const auto& device : setup_.devices) {
    auto* gpu = gpu_memory(device);
    if (gpu == nullptr)
      fail(Errc::not_supported, group + ": replica device " + device.short_name()
                                  + " is not a GPU, but its peers send GPU tensors; run every replica on a GPU "
                                    "or copy the values to the host");
    devices += (devices.empty() ? "" : ", ") + device.short_name() + " (GPU " + std::to_string(gpu->gpu()) + ")";
  }
  auto& nccl = nccl_backend();
  const bool asked = setup_.implementation == CommunicationImplementation::NCCL;
  const std::string why_not = nccl_unusable_reason(setup_.devices);
  if (why_not.empty() && setup_.implementation != CommunicationImplementation::RING
      && (asked || setup_.across_workers || setup_.devices.size() > 1)) {
    uses_nccl_ = true;
    TROUPE_LOG(info, "coll") << group << ": collectives of GPU tensors run through " << nccl.version() << " over "
                             << devices << (setup_.across_workers ? " on every worker, " : ", ")
                             << setup_.ranks << " ranks"
                             << (asked ? " (CommunicationImplementation::NCCL)" : " (AUTO)");
    return true;
  }
  if (asked || setup_.across_workers)
    fail(Errc::not_supported, group + ": collectives of GPU tensors "
                                + (setup_.across_workers ? std::string{"across workers need NCCL"}
                                                         : std::string{"were asked to run through NCCL"})
                                + ", which cannot run here: "
                                + (why_not.empty() ? "the strategy asked for CommunicationImplementation::RING"
                                                   : why_not)
                                + (setup_.across_workers
                                     ? ". Give each replica its own GPU, or run the replicas on CPU devices"
                                     : ". Use CommunicationImplementation::AUTO, which all-reduces through the "
                                       "GPUs' memory instead"));
  uses_nccl_ = false;
  TROUPE_LOG(info, "coll") << group << ": all_reduce of GPU tensors runs on the GPUs' streams without NCCL over "
                           << devices << " ("
                           << (setup_.implementation == CommunicationImplementation::RING
                                 ? std::string{"CommunicationImplementation::RING"}
                                 : !why_not.empty() ? why_not : std::string{"one replica"})
                           << ")";
  return false;
}

NcclCommunicatorSpec GpuCollectives::communicator() {
  if (!current_) {
    if (setup_.first_rank != 0)
      fail(Errc::internal, "collective group " + std::to_string(setup_.group)
                             + ": only rank 0 creates the NCCL communicator; the others adopt its");
    NcclCommunicatorSpec spec;
    spec.name = "group " + std::to_string(setup_.group) + " gen " + std::to_string(generation_) + " ("
                + std::to_string(setup_.ranks) + " ranks)";
    spec.id = nccl_backend().unique_id();
    spec.ranks = setup_.ranks;
    current_ = spec;
  }
  auto spec = *current_;
  spec.rank = setup_.first_rank;
  return spec;
}

std::string GpuCollectives::announce() {
  const auto spec = communicator();
  std::string out(reinterpret_cast<const char*>(spec.id.bytes.data()), spec.id.bytes.size());
  const int32_t ranks = spec.ranks;
  out.append(reinterpret_cast<const char*>(&ranks), sizeof ranks);
  return out + spec.name;
}

std::string GpuCollectives::announced_name(const std::string& announced) {
  check_announced(announced);
  return announced.substr(announced_fixed);
}

void GpuCollectives::adopt(const std::string& announced) {
  check_announced(announced);
  NcclCommunicatorSpec spec;
  std::memcpy(spec.id.bytes.data(), announced.data(), NcclUniqueId::size);
  int32_t ranks = 0;
  std::memcpy(&ranks, announced.data() + NcclUniqueId::size, sizeof ranks);
  spec.ranks = ranks;
  spec.name = announced.substr(announced_fixed);
  if (spec.ranks != setup_.ranks)
    fail(Errc::data_loss, "rank 0 announced NCCL communicator " + spec.name + " of " + std::to_string(spec.ranks)
                            + " ranks, but this group has " + std::to_string(setup_.ranks) + " replicas");
  if (current_ && current_->name != spec.name)
    failed(current_->name, "rank 0 replaced the communicator");
  current_ = spec;
}

std::shared_ptr<FiberCollective> GpuCollectives::nccl_plan(const CollectiveKey& key, CollectiveKind kind, ReduceOp op,
                                                           int axis,
                                                           std::vector<std::vector<Tensor>> inputs,
                                                           std::vector<std::vector<int64_t>> gather_rows,
                                                           const std::string& what) {
  NcclCollective::Plan plan;
  plan.kind = kind;
  plan.op = op;
  plan.axis = axis;
  plan.communicator = communicator();
  plan.gather_rows = std::move(gather_rows);
  plan.timeout = setup_.timeout;
  plan.bytes_per_pack = setup_.bytes_per_pack;
  plan.what = what;
  plan.on_failure = communicator_failed_;
  plan.key = key;
  return std::make_shared<NcclCollective>(std::move(plan), std::move(inputs), setup_.devices);
}

void GpuCollectives::failed(const std::string& failed_name, const std::string& why) {
  const std::string name = failed_name;  // it may be current_'s own, reset below
  last_dropped_ = name;
  if (current_ && current_->name == name) {
    current_.reset();
    ++generation_;
  }
  for (const auto& device : setup_.devices)
    if (auto* gpu = gpu_memory(device))
      gpu->abort_nccl(name, why);
}

void GpuCollectives::abandon(const std::string& why) {
  if (current_)
    failed(current_->name, why);
}

void GpuCollectives::close() {
  if (!current_)
    return;
  for (const auto& device : setup_.devices)
    if (auto* gpu = gpu_memory(device))
      gpu->close_nccl(current_->name);
  current_.reset();
}

} // namespace troupe::internal
