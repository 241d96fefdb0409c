#include <troupe/actors/gpu/emulated/emulated_nccl_backend.hpp>

#include <cstring>
#include <optional>

#include <troupe/core/errors.hpp>

namespace troupe::testing {

using internal::NcclCall;
using internal::NcclReduction;
using internal::NcclState;

struct EmulatedNcclBackend::Comm {
  std::array<unsigned char, internal::NcclUniqueId::size> id{};
  int ranks = 0;
  std::vector<Rank*> members;  // [rank], null until it joined or once aborted
  bool aborted = false;        ///< a rank was aborted: the others wait forever, as NCCL's would
  std::string failure;
  /// [group index][rank]: the rank's calls once it issued that group.
  std::vector<std::vector<std::optional<std::vector<NcclCall>>>> groups;
};

struct EmulatedNcclBackend::Rank {
  std::shared_ptr<Comm> comm;
  int rank = 0;
  int gpu = 0;
  std::size_t issued = 0;  // groups
  std::size_t done = 0;
};

namespace {

template <typename T>
T reduce_values(NcclReduction reduction, const std::vector<T>& values) {
  T acc = values.front();
  for (std::size_t i = 1; i < values.size(); ++i) {
    const T v = values[i];
    switch (reduction) {
      case NcclReduction::sum:
      case NcclReduction::avg: acc = static_cast<T>(acc + v); break;
      case NcclReduction::max: acc = v > acc ? v : acc; break;
      case NcclReduction::min: acc = v < acc ? v : acc; break;
      case NcclReduction::prod: acc = static_cast<T>(acc * v); break;
    }
  }
  if (reduction == NcclReduction::avg)
    acc = static_cast<T>(acc / static_cast<T>(values.size()));
  return acc;
}

/// out[i] = reduction over the ranks' in[r][offset + i], for `count` elements.
template <typename T>
void reduce_into(NcclReduction reduction, const std::vector<const void*>& inputs, std::size_t offset,
                 std::size_t count, std::vector<unsigned char>& out) {
  out.resize(count * sizeof(T));
  std::vector<T> values(inputs.size());
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t r = 0; r < inputs.size(); ++r)
      std::memcpy(&values[r], static_cast<const unsigned char*>(inputs[r]) + (offset + i) * sizeof(T), sizeof(T));
    const T v = reduce_values(reduction, values);
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
}

void reduce_typed(DType dtype, NcclReduction reduction, const std::vector<const void*>& inputs, std::size_t offset,
                  std::size_t count, std::vector<unsigned char>& out) {
  switch (dtype) {
    case DType::float32: reduce_into<float>(reduction, inputs, offset, count, out); return;
    case DType::float64: reduce_into<double>(reduction, inputs, offset, count, out); return;
    case DType::int32: reduce_into<int32_t>(reduction, inputs, offset, count, out); return;
    case DType::int64: reduce_into<int64_t>(reduction, inputs, offset, count, out); return;
    case DType::uint8: reduce_into<uint8_t>(reduction, inputs, offset, count, out); return;
    default: fail(Errc::not_supported, "the emulated NCCL reduces float32, float64, int32, int64 and uint8 only");
  }
}

bool same_call(const NcclCall& a, const NcclCall& b) {
  return a.kind == b.kind && a.count == b.count && a.dtype == b.dtype && a.reduction == b.reduction
         && a.root == b.root;
}

} // namespace

EmulatedNcclBackend::EmulatedNcclBackend() = default;

EmulatedNcclBackend::~EmulatedNcclBackend() = default;

internal::NcclUniqueId EmulatedNcclBackend::unique_id() {
  std::lock_guard<std::mutex> guard{mutex_};
  internal::NcclUniqueId id;
  const uint64_t n = next_id_++;
  std::memcpy(id.bytes.data(), &n, sizeof n);
  return id;
}

internal::NcclComm EmulatedNcclBackend::init_rank(int gpu, const internal::NcclUniqueId& id, int ranks, int rank) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (ranks < 1 || rank < 0 || rank >= ranks)
    fail(Errc::internal, "emulated ncclCommInitRank: rank " + std::to_string(rank) + " of " + std::to_string(ranks)
                           + ": invalid usage");
  auto& comm = comms_[id.bytes];
  if (!comm) {
    comm = std::make_shared<Comm>();
    comm->id = id.bytes;
    comm->ranks = ranks;
    comm->members.resize(static_cast<std::size_t>(ranks), nullptr);
  }
  if (comm->aborted) {
    note("ncclCommInitRank: rank " + std::to_string(rank) + " joins a communicator that was aborted (a stale "
         "unique id: real NCCL would wait for its root forever)");
    fail(Errc::internal, "emulated ncclCommInitRank: the unique id names an aborted communicator");
  }
  if (comm->ranks != ranks || comm->members[static_cast<std::size_t>(rank)] != nullptr) {
    note("ncclCommInitRank: rank " + std::to_string(rank) + " of " + std::to_string(ranks)
         + " joins a communicator it does not fit (another size, or the rank taken)");
    fail(Errc::internal, "emulated ncclCommInitRank: invalid usage");
  }
  for (const Rank* other : comm->members)
    if (other != nullptr && other->gpu == gpu && comm->failure.empty())
      comm->failure = "invalid usage: Duplicate GPU detected: rank " + std::to_string(other->rank) + " and rank "
                      + std::to_string(rank) + " both on CUDA device " + std::to_string(gpu);
  auto* created = new Rank{comm, rank, gpu, 0, 0};
  comm->members[static_cast<std::size_t>(rank)] = created;
  ranks_.insert(created);
  ++ranks_created_;
  return created;
}

EmulatedNcclBackend::Rank* EmulatedNcclBackend::rank_of(internal::NcclComm comm) {
  auto* rank = static_cast<Rank*>(comm);
  return ranks_.count(rank) != 0 ? rank : nullptr;
}

NcclState EmulatedNcclBackend::state(internal::NcclComm handle, std::string& error) {
  std::lock_guard<std::mutex> guard{mutex_};
  Rank* rank = rank_of(handle);
  if (rank == nullptr) {
    note("ncclCommGetAsyncError on a communicator that was aborted");
    error = "invalid argument: unknown communicator";
    return NcclState::failed;
  }
  const Comm& comm = *rank->comm;
  if (!comm.failure.empty()) {
    error = comm.failure;
    return NcclState::failed;
  }
  if (auto it = failed_gpus_.find(rank->gpu); it != failed_gpus_.end()) {
    error = it->second;
    return NcclState::failed;
  }
  for (const Rank* member : comm.members)
    if (member == nullptr)
      return NcclState::in_progress;  // still joining
  return rank->done < rank->issued ? NcclState::in_progress : NcclState::ready;
}

NcclState EmulatedNcclBackend::enqueue(int gpu, internal::NcclComm handle, internal::GpuStream,
                                       const std::vector<NcclCall>& calls, std::string& error) {
  std::lock_guard<std::mutex> guard{mutex_};
  Rank* rank = rank_of(handle);
  if (rank == nullptr || rank->gpu != gpu) {
    note("a group of NCCL calls on a communicator that was aborted, or of another GPU");
    error = "invalid argument: unknown communicator";
    return NcclState::failed;
  }
  Comm& comm = *rank->comm;
  if (!comm.failure.empty()) {
    error = comm.failure;
    return NcclState::failed;
  }
  if (auto it = failed_gpus_.find(gpu); it != failed_gpus_.end()) {
    error = it->second;
    return NcclState::failed;
  }
  bool joined = true;
  for (const Rank* member : comm.members)
    joined = joined && member != nullptr;
  if (!joined || rank->done < rank->issued)
    note("a group of NCCL calls issued while the communicator was still in progress");
  const std::size_t index = rank->issued++;
  ++groups_issued_;
  changed_.notify_all();
  if (comm.groups.size() <= index)
    comm.groups.resize(index + 1, std::vector<std::optional<std::vector<NcclCall>>>(
                                    static_cast<std::size_t>(comm.ranks)));
  comm.groups[index][static_cast<std::size_t>(rank->rank)] = calls;
  for (const auto& issued : comm.groups[index])
    if (!issued)
      return NcclState::in_progress;
  for (const Rank* member : comm.members)
    if (member == nullptr || stalled_gpus_.count(member->gpu) != 0)
      return NcclState::in_progress;  // a rank aborted, or one stalled: never completes
  run_group_locked(comm, index);
  if (!comm.failure.empty()) {
    error = comm.failure;
    return NcclState::failed;
  }
  return NcclState::ready;
}

void EmulatedNcclBackend::run_group_locked(Comm& comm, std::size_t index) {
  auto& group = comm.groups[index];
  const auto& first = *group.front();
  for (std::size_t r = 1; r < group.size(); ++r) {
    bool same = group[r]->size() == first.size();
    for (std::size_t c = 0; same && c < first.size(); ++c)
      same = same_call((*group[r])[c], first[c]);
    if (!same) {
      note("ranks 0 and " + std::to_string(r) + " issued different NCCL calls in group " + std::to_string(index)
           + " (real NCCL would hang or corrupt memory)");
      comm.failure = "emulated NCCL: mismatched calls across ranks";
      return;
    }
  }
  const std::size_t n = group.size();
  for (std::size_t c = 0; c < first.size(); ++c) {
    const NcclCall& call = first[c];
    const std::size_t element = size_of(call.dtype);
    std::vector<const void*> sends;
    for (const auto& calls : group)
      sends.push_back((*calls)[c].send);
    // Computed in full before any rank's output is written: outputs may alias inputs.
    std::vector<std::vector<unsigned char>> outs(n);
    switch (call.kind) {
      case NcclCall::Kind::all_reduce: {
        std::vector<unsigned char> reduced;
        reduce_typed(call.dtype, call.reduction, sends, 0, call.count, reduced);
        for (auto& out : outs)
          out = reduced;
        break;
      }
      case NcclCall::Kind::all_gather: {
        std::vector<unsigned char> gathered(call.count * element * n);
        for (std::size_t r = 0; r < n; ++r)
          std::memcpy(gathered.data() + r * call.count * element, sends[r], call.count * element);
        for (auto& out : outs)
          out = gathered;
        break;
      }
      case NcclCall::Kind::broadcast: {
        std::vector<unsigned char> root(call.count * element);
        std::memcpy(root.data(), sends[static_cast<std::size_t>(call.root)], root.size());
        for (auto& out : outs)
          out = root;
        break;
      }
      case NcclCall::Kind::reduce_scatter:
        for (std::size_t r = 0; r < n; ++r)
          reduce_typed(call.dtype, call.reduction, sends, r * call.count, call.count, outs[r]);
        break;
    }
    for (std::size_t r = 0; r < n; ++r)
      std::memcpy((*group[r])[c].recv, outs[r].data(), outs[r].size());
    ++calls_run_[call.kind];
  }
  ++groups_run_;
  for (Rank* member : comm.members)
    ++member->done;
  group.clear();  // ran: only the count stays
}

void EmulatedNcclBackend::abort(internal::NcclComm handle) noexcept {
  std::lock_guard<std::mutex> guard{mutex_};
  Rank* rank = rank_of(handle);
  if (rank == nullptr) {
    note("ncclCommAbort of a communicator that was aborted");
    return;
  }
  // The other ranks keep waiting for this one, as real NCCL's would until
  // they are aborted too.
  rank->comm->members[static_cast<std::size_t>(rank->rank)] = nullptr;
  rank->comm->aborted = true;
  ranks_.erase(rank);
  ++ranks_aborted_;
  delete rank;
  changed_.notify_all();
}

int EmulatedNcclBackend::ranks_created() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return ranks_created_;
}

int EmulatedNcclBackend::ranks_alive() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return static_cast<int>(ranks_.size());
}

int EmulatedNcclBackend::ranks_aborted() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return ranks_aborted_;
}

int EmulatedNcclBackend::groups_run() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return groups_run_;
}

int EmulatedNcclBackend::calls_run(NcclCall::Kind kind) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = calls_run_.find(kind);
  return it == calls_run_.end() ? 0 : it->second;
}

int EmulatedNcclBackend::unique_ids() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return static_cast<int>(next_id_ - 1);
}

std::string EmulatedNcclBackend::misuse() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return misuse_;
}

bool EmulatedNcclBackend::wait_for_issued(int groups, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock{mutex_};
  return changed_.wait_for(lock, timeout, [&] { return groups_issued_ >= groups; });
}

bool EmulatedNcclBackend::wait_for_aborted(int ranks, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock{mutex_};
  return changed_.wait_for(lock, timeout, [&] { return ranks_aborted_ >= ranks; });
}

void EmulatedNcclBackend::fail_gpu(int gpu, std::string error) {
  std::lock_guard<std::mutex> guard{mutex_};
  failed_gpus_[gpu] = std::move(error);
}

void EmulatedNcclBackend::stall_gpu(int gpu, bool stalled) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (stalled)
    stalled_gpus_.insert(gpu);
  else
    stalled_gpus_.erase(gpu);
}

void EmulatedNcclBackend::note(const std::string& problem) {
  misuse_ += problem + "\n";
}

} // namespace troupe::testing
