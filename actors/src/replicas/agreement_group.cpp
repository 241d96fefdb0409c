#include <troupe/actors/replicas/agreement_group.hpp>

#include <cstring>
#include <exception>

#include <troupe/actors/replicas/replica_group.hpp>
#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/collective_membership.hpp>

namespace troupe::internal {

namespace {

GroupOptions agreement_options(const CollectiveMembership& cluster) {
  const auto& k = knobs();
  GroupOptions options;
  options.timeout_seconds = k.collective_timeout_seconds;
  options.stall_warning_seconds = k.stall_warning_seconds;
  options.stack_bytes = k.fiber_stack_bytes;
  options.group_id = agreement_group_id;
  // The defaults of CrossWorkerSetup, not the knobs: an all_gather does not
  // use them, and a worker with other knobs must still reach the comparison.
  CrossWorkerSetup setup;
  setup.rank = cluster.rank;
  setup.task_names = cluster.task_names;
  setup.local_replicas = 1;
  options.cluster = setup;
  return options;
}

} // namespace

AgreementGroup::AgreementGroup(Executor& runtime, const DeviceSpec& device, const CollectiveMembership& cluster)
  : workers_(static_cast<int>(cluster.task_names.size())),
    group_(std::make_unique<ReplicaGroup>(runtime, std::vector<DeviceSpec>{device},
                                          std::vector<void*>{nullptr}, agreement_options(cluster),
                                          cluster.link)) {
}

AgreementGroup::~AgreementGroup() = default;

std::vector<std::string> AgreementGroup::exchange(const std::string& mine) {
  std::lock_guard guard(mutex_);
  const Tensor block = pack_block(mine);
  Tensor gathered;
  auto errors = group_->run([&](int replica) {
    CollectiveRequest request;
    request.kind = CollectiveKind::all_gather;
    request.axis = 0;
    request.tensors = {block};
    gathered = group_->handle(replica).collective(std::move(request)).tensors.at(0);
  });
  for (auto& e : errors)
    if (e)
      std::rethrow_exception(e);
  return unpack_blocks(gathered, static_cast<std::size_t>(workers_));
}

// -- blocks -----------------------------------------------------------------------

Tensor pack_block(const std::string& bytes) {
  const uint64_t length = bytes.size();
  std::vector<uint8_t> out(sizeof length + bytes.size());
  std::memcpy(out.data(), &length, sizeof length);
  if (!bytes.empty())
    std::memcpy(out.data() + sizeof length, bytes.data(), bytes.size());
  return Tensor::from_vector(out);
}

std::vector<std::string> unpack_blocks(const Tensor& gathered, std::size_t count) {
  const auto* data = reinterpret_cast<const char*>(gathered.raw_data());
  const std::size_t size = gathered.nbytes();
  std::vector<std::string> blocks;
  std::size_t at = 0;
  while (blocks.size() < count) {
    uint64_t length = 0;
    // Every bound is checked before the length is used: the bytes came from other processes.
    if (size - at < sizeof length)
      break;
    std::memcpy(&length, data + at, sizeof length);
    at += sizeof length;
    if (length > size - at)
      break;
    blocks.emplace_back(data + at, static_cast<std::size_t>(length));
    at += static_cast<std::size_t>(length);
  }
  if (blocks.size() != count || at != size)
    fail(Errc::data_loss, "the gathered agreement holds " + std::to_string(size) + " bytes that are not "
                            + std::to_string(count) + " whole blocks (one per worker); a worker runs "
                            "another version of troupe");
  return blocks;
}

} // namespace troupe::internal
