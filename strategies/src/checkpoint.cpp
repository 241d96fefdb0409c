#include <troupe/strategies/checkpoint.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/crc32c.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>
#include <troupe/strategies/variable_state.hpp>

namespace troupe {

namespace {

constexpr char magic[8] = {'T', 'R', 'O', 'U', 'P', 'E', 'C', 'K'};
constexpr uint32_t format_version = 1;
constexpr uint32_t max_rank = 254;

std::string quote(const std::string& path) {
  return "\"" + path + "\"";
}

void require_cross_replica_context(const char* method) {
  const auto* frame = detail::current_context_frame();
  if (frame != nullptr && frame->replica != nullptr)
    fail(Errc::failed_precondition, std::string(method) + " was called in replica context (inside strategy.run): "
                                      "save and restore checkpoints in cross-replica context, between steps");
}

/// Checkpoints belong to the coordinator of a parameter-server job: a
/// scheduled function's reads see its own staged updates, and its writes
/// would be staged, not applied.
void require_outside_scheduled_functions(const char* method) {
  if (internal::WorkerContext::current() != nullptr)
    fail(Errc::failed_precondition,
         std::string(method) + " was called inside a scheduled function (a function given to "
                               "ClusterCoordinator::schedule): save and restore checkpoints on the coordinator, "
                               "after coordinator.join()");
}

/// The entries a ShardedVariable's optimizer slots are saved under ("<key>/m").
constexpr const char* slot_names[] = {"momentum", "m", "v", "iterations"};

std::string slot_entry(const std::string& key, const std::string& slot) {
  return key + "/" + slot;
}

std::string describe(DType dtype, const Shape& shape) {
  return std::string(name(dtype)) + " " + shape.to_string();
}

// -- writing ------------------------------------------------------------------------

/// Appends to a file descriptor through a buffer, keeping the CRC-32C of
/// everything written. Large blocks bypass the buffer.
class Writer {
public:
  Writer(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  void put(const void* data, std::size_t size) {
    crc_ = internal::crc32c_extend(crc_, data, size);
    if (size >= buffer_limit) {
      flush();
      write_all(data, size);
      return;
    }
    buffer_.append(static_cast<const char*>(data), size);
    if (buffer_.size() >= buffer_limit)
      flush();
  }
  template <class T>
  void put_le(T value) {
    unsigned char bytes[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i)
      bytes[i] = static_cast<unsigned char>(static_cast<uint64_t>(value) >> (8 * i));
    put(bytes, sizeof(T));
  }
  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  [[nodiscard]] uint32_t crc() const noexcept { return crc_; }

private:
  static constexpr std::size_t buffer_limit = std::size_t{1} << 20;

  void write_all(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        fail(Errc::failed_precondition, "Checkpoint::save: writing " + quote(path_) + " failed: " + std::strerror(errno));
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  int fd_;
  std::string path_;
  std::string buffer_;
  uint32_t crc_ = 0;
};

Errc errc_of(int error) {
  return error == ENOENT || error == ENOTDIR ? Errc::not_found : Errc::failed_precondition;
}

void write_file(const std::string& tmp, const std::vector<std::pair<std::string, Tensor>>& entries) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    fail(errc_of(error), "Checkpoint::save: cannot create " + quote(tmp) + ": " + std::strerror(error));
  }
  try {
    Writer out(fd, tmp);
    out.put(magic, sizeof magic);
    out.put_le<uint32_t>(format_version);
    out.put_le<uint32_t>(static_cast<uint32_t>(entries.size()));
    for (const auto& [key, saved] : entries) {
      // Variables of GPU replicas are copied to the host to be written.
      const Tensor value = saved.to("CPU:0");
      out.put_le<uint32_t>(static_cast<uint32_t>(key.size()));
      out.put(key.data(), key.size());
      out.put_le<uint8_t>(static_cast<uint8_t>(value.dtype()));
      out.put_le<uint32_t>(static_cast<uint32_t>(value.rank()));
      for (int64_t d : value.shape().dims())
        out.put_le<int64_t>(d);
      out.put_le<uint64_t>(value.nbytes());
      out.put(value.raw_data(), value.nbytes());
      out.put_le<uint32_t>(internal::crc32c(value.raw_data(), value.nbytes()));
    }
    out.put_le<uint32_t>(out.crc());
    out.flush();
    // The data must be on disk before the rename makes it the checkpoint.
    if (::fsync(fd) != 0)
      fail(Errc::failed_precondition, "Checkpoint::save: flushing " + quote(tmp) + " failed: " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    fail(Errc::failed_precondition, "Checkpoint::save: closing " + quote(tmp) + " failed: " + std::strerror(error));
  }
}

void sync_directory_of(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return; // the rename happened; durability of the directory entry is best effort
  (void)::fsync(fd);
  ::close(fd);
}

// -- reading ------------------------------------------------------------------------

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR)
      fail(Errc::not_found, "Checkpoint::restore: checkpoint " + quote(path) + " does not exist");
    fail(Errc::failed_precondition, "Checkpoint::restore: cannot open " + quote(path) + ": " + std::strerror(error));
  }
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    fail(Errc::invalid_argument, "Checkpoint::restore: " + quote(path) + " is a directory, not a checkpoint file");
  }
  data.reserve(static_cast<std::size_t>(st.st_size));
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      fail(Errc::failed_precondition, "Checkpoint::restore: reading " + quote(path) + " failed: "
                                        + std::strerror(error));
    }
    if (n == 0)
      break;
    data.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return data;
}

/// Reads the format with bounds checks; every failure is Error(data_loss) naming the file.
class Reader {
public:
  Reader(const std::string& data, std::string path) : data_(data), path_(std::move(path)) {}

  [[noreturn]] void corrupt(const std::string& what) const {
    fail(Errc::data_loss, "Checkpoint::restore: " + quote(path_) + " is not a valid troupe checkpoint: " + what);
  }

  const char* take(std::size_t size, const std::string& what) {
    if (size > data_.size() - offset_)
      corrupt("the file is truncated or corrupted: " + what + " needs " + std::to_string(size)
              + " bytes at offset " + std::to_string(offset_) + " but the file ends at "
              + std::to_string(data_.size()));
    const char* p = data_.data() + offset_;
    offset_ += size;
    return p;
  }
  template <class T>
  T get_le(const std::string& what) {
    const auto* p = reinterpret_cast<const unsigned char*>(take(sizeof(T), what));
    uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return static_cast<T>(v);
  }
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return data_.size() - offset_; }

private:
  const std::string& data_;
  std::string path_;
  std::size_t offset_ = 0;
};

struct Entry {
  DType dtype;
  Shape shape;
  Tensor value;
};

std::map<std::string, Entry> parse(const std::string& data, const std::string& path) {
  Reader in(data, path);
  if (data.size() < sizeof magic || std::memcmp(data.data(), magic, sizeof magic) != 0)
    in.corrupt(data.size() < sizeof magic && std::memcmp(data.data(), magic, data.size()) == 0
                 ? "the file is truncated: it ends inside the header (" + std::to_string(data.size()) + " bytes)"
                 : "bad magic: it does not start with \"TROUPECK\"");
  (void)in.take(sizeof magic, "the magic");
  const auto version = in.get_le<uint32_t>("the version");
  if (version != format_version)
    in.corrupt("it has format version " + std::to_string(version) + " but this troupe reads version "
               + std::to_string(format_version));
  const auto count = in.get_le<uint32_t>("the variable count");
  std::map<std::string, Entry> entries;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string which = "variable " + std::to_string(i + 1) + " of " + std::to_string(count);
    const auto name_len = in.get_le<uint32_t>("the name length of " + which);
    std::string key(in.take(name_len, "the name of " + which), name_len);
    const std::string label = which + " ('" + key + "')";
    const auto code = in.get_le<uint8_t>("the dtype of " + label);
    if (code > static_cast<uint8_t>(last_dtype))
      in.corrupt(label + " has an unknown dtype code " + std::to_string(code));
    const auto dtype = static_cast<DType>(code);
    const auto rank = in.get_le<uint32_t>("the rank of " + label);
    if (rank > max_rank)
      in.corrupt(label + " has rank " + std::to_string(rank));
    std::vector<int64_t> dims;
    for (uint32_t d = 0; d < rank; ++d) {
      dims.push_back(in.get_le<int64_t>("the shape of " + label));
      if (dims.back() < 0)
        in.corrupt(label + " has a negative dimension " + std::to_string(dims.back()));
    }
    Shape shape(std::move(dims));
    const auto nbytes = in.get_le<uint64_t>("the byte count of " + label);
    // Checked without multiplying first, so huge corrupt dimensions cannot overflow.
    const uint64_t elements = nbytes / size_of(dtype);
    if (nbytes % size_of(dtype) != 0 || static_cast<uint64_t>(shape.num_elements()) != elements)
      in.corrupt(label + " of " + describe(dtype, shape) + " says it has " + std::to_string(nbytes) + " bytes");
    const char* bytes = in.take(nbytes, "the data of " + label);
    const auto stored = in.get_le<uint32_t>("the checksum of " + label);
    const auto actual = internal::crc32c(bytes, nbytes);
    if (stored != actual)
      in.corrupt("the data of " + label + " fails its checksum (CRC-32C " + std::to_string(actual)
                 + ", the file says " + std::to_string(stored) + "): the file is corrupted");
    Tensor value = Tensor::empty(shape, dtype);
    if (nbytes > 0)
      std::memcpy(value.mutable_raw_data(), bytes, nbytes);
    if (!entries.emplace(key, Entry{dtype, shape, std::move(value)}).second)
      in.corrupt("it holds two variables named '" + key + "'");
  }
  const std::size_t body = in.offset();
  const auto stored = in.get_le<uint32_t>("the file checksum");
  if (in.remaining() != 0)
    in.corrupt(std::to_string(in.remaining()) + " unexpected bytes follow the file checksum");
  const auto actual = internal::crc32c(data.data(), body);
  if (stored != actual)
    in.corrupt("the file fails its checksum (CRC-32C " + std::to_string(actual) + ", the file says "
               + std::to_string(stored) + "): the file is corrupted");
  return entries;
}

/// Checks `entries` (a parsed file) against `variables` before anything changes.
void match(const std::map<std::string, Variable>& variables, const std::map<std::string, ShardedVariable>& sharded,
           const std::map<std::string, Entry>& entries, const std::string& path,
           const CheckpointRestoreOptions& options) {
  const std::string different = "Checkpoint::restore: checkpoint from a different model: ";
  auto require_entry = [&](const std::string& key, DType dtype, const Shape& shape) {
    auto it = entries.find(key);
    if (it == entries.end()) {
      std::string held;
      for (const auto& [k, e] : entries)
        held += (held.empty() ? "'" : ", '") + k + "'";
      fail(Errc::invalid_argument, different + quote(path) + " has no variable '" + key + "' (it holds "
                                     + (held.empty() ? "none" : held) + ")");
    }
    if (it->second.dtype != dtype || it->second.shape != shape)
      fail(Errc::invalid_argument, different + "variable '" + key + "' is " + describe(dtype, shape)
                                     + " here but " + describe(it->second.dtype, it->second.shape) + " in "
                                     + quote(path));
  };
  for (const auto& [key, v] : variables) {
    const auto& state = internal::VariableAccess::state(v, "Checkpoint::restore");
    require_entry(key, state.dtype, state.shape);
  }
  std::set<std::string> slot_entries;
  for (const auto& [key, v] : sharded) {
    require_entry(key, v.dtype(), v.shape());
    for (const std::string slot : slot_names) {
      const auto it = entries.find(slot_entry(key, slot));
      if (it == entries.end())
        continue; // never updated
      slot_entries.insert(it->first);
      const Entry& entry = it->second;
      if (slot != "iterations") {
        if (entry.dtype != v.dtype() || entry.shape != v.shape())
          fail(Errc::invalid_argument, different + "optimizer slot '" + it->first + "' is "
                                         + describe(entry.dtype, entry.shape) + " in " + quote(path)
                                         + " but its variable is " + describe(v.dtype(), v.shape()) + " here");
        continue;
      }
      const auto counts = entry.dtype == DType::int64 && entry.shape.rank() <= 1 ? entry.value.to_vector<int64_t>()
                                                                                : std::vector<int64_t>{};
      if (counts.empty() || *std::min_element(counts.begin(), counts.end()) < 0)
        fail(Errc::invalid_argument, different + "optimizer slot '" + it->first + "' in " + quote(path) + " is "
                                       + describe(entry.dtype, entry.shape)
                                       + "; Adam's iteration count is an int64 scalar or vector of counts >= 0");
    }
    if (slot_entries.count(slot_entry(key, "momentum")) != 0
        && (slot_entries.count(slot_entry(key, "m")) + slot_entries.count(slot_entry(key, "v"))
              + slot_entries.count(slot_entry(key, "iterations")))
             != 0)
      fail(Errc::invalid_argument, different + quote(path) + " holds both momentum's slot '"
                                     + slot_entry(key, "momentum") + "' and Adam's slots for '" + key
                                     + "'; a variable has one optimizer's slots");
  }
  if (!options.expect_partial) {
    std::string extra;
    for (const auto& [k, e] : entries)
      if (variables.count(k) == 0 && sharded.count(k) == 0 && slot_entries.count(k) == 0)
        extra += (extra.empty() ? "'" : ", '") + k + "'";
    if (!extra.empty())
      fail(Errc::invalid_argument, different + quote(path) + " also holds " + extra
                                     + ", which this Checkpoint does not have (restore with "
                                       "CheckpointRestoreOptions{.expect_partial = true} to ignore them)");
  }
}

/// Sets every variable to its value in `values` (by key), all or nothing.
void assign_all(const std::map<std::string, Variable>& variables, const std::map<std::string, Tensor>& values) {
  // Assigning cannot fail for matching values, but keep the all-or-nothing promise regardless.
  std::vector<std::pair<detail::VariableState*, std::vector<Tensor>>> before;
  try {
    for (const auto& [key, v] : variables) {
      auto& state = internal::VariableAccess::state(v, "Checkpoint::restore");
      before.emplace_back(&state, state.copies);
      detail::CrossReplicaGuard guard(*state.strategy);
      internal::cross_replica_assign(state, values.at(key));
    }
  } catch (...) {
    for (auto& [state, copies] : before)
      state->copies = std::move(copies);
    throw;
  }
}

void write_and_rename(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& entries) {
  const std::string tmp = path + ".tmp";
  write_file(tmp, entries);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    fail(errc_of(error), "Checkpoint::save: cannot rename " + quote(tmp) + " to " + quote(path) + ": "
                           + std::strerror(error) + "; " + quote(path) + " is unchanged");
  }
  sync_directory_of(path);
}

// -- agreeing across workers ----------------------------------------------------------
//
// Under a multi-worker strategy only the chief (worker 0) reads or writes the
// file. What it found is broadcast to every worker first, as a report (the
// outcome, an Errc and the chief's message); only after a good report do the
// variables' values follow, one broadcast each, in key order.

/// The strategy that makes a Checkpoint's save and restore collective: the
/// variables' multi-worker strategy, or nullptr when none is multi-worker.
Strategy* cluster_strategy(const std::map<std::string, Variable>& variables, const char* method) {
  Strategy* cluster = nullptr;
  std::string single; // a variable of a single-worker strategy, for the error
  for (const auto& [key, v] : variables) {
    auto* strategy = internal::VariableAccess::state(v, method).strategy;
    if (strategy->extended().num_workers() > 1)
      cluster = cluster != nullptr ? cluster : strategy;
    else if (single.empty())
      single = key;
  }
  if (cluster != nullptr && !single.empty())
    fail(Errc::invalid_argument,
         std::string(method) + ": variable '" + single + "' belongs to a single-worker strategy but others to "
           + cluster->extended().strategy_name() + " with " + std::to_string(cluster->extended().num_workers())
           + " workers: a checkpoint's variables must all be of the multi-worker strategy (or all local); "
             "use one Checkpoint for each");
  return cluster;
}

/// cluster_strategy, refusing sharded variables beside a multi-worker strategy's.
Strategy* cluster_strategy(const std::map<std::string, Variable>& variables,
                           const std::map<std::string, ShardedVariable>& sharded, const char* method) {
  Strategy* cluster = cluster_strategy(variables, method);
  if (cluster != nullptr && !sharded.empty())
    fail(Errc::invalid_argument,
         std::string(method) + ": sharded variable '" + sharded.begin()->first + "' (ParameterServerStrategy) "
           "beside variables of " + cluster->extended().strategy_name()
           + " with several workers: use one Checkpoint for each strategy");
  return cluster;
}

/// A cross-replica frame of `strategy` that lets its collectives run (unlike
/// merge_call's frame, where this worker's replicas are busy).
class CollectiveFrame {
public:
  explicit CollectiveFrame(Strategy& strategy) noexcept : frame_{&strategy, nullptr, false}, installer_(&frame_) {}

private:
  detail::ContextFrame frame_;
  detail::FrameInstaller installer_;
};

void require_collectives_possible(const char* method) {
  if (const auto* frame = detail::current_context_frame(); frame != nullptr && frame->in_merge_call)
    fail(Errc::failed_precondition,
         std::string(method) + " was called inside merge_call's function: under a multi-worker strategy it "
                               "broadcasts the chief's result to every worker, which needs the replicas that "
                               "wait in merge_call; call it between steps");
}

/// The chief's messages travel bounded: a longer one is cut.
constexpr std::size_t max_report_message = 4096;

/// What the chief's read or write came to.
struct ChiefReport {
  enum Outcome : int64_t { done = 0, no_file = 1, failed = 2 };
  Outcome outcome = done;
  Errc code = Errc::internal;
  std::string message;

  static ChiefReport from(const Error& e) {
    return {e.code() == Errc::not_found ? no_file : failed, e.code(), e.what()};
  }
};

using Broadcast = std::function<Tensor(const Tensor&)>;

/// The chief's report on every worker; `mine` is used on the chief only.
ChiefReport share(const Broadcast& from_chief, bool chief, ChiefReport mine, const char* method) {
  if (mine.message.size() > max_report_message)
    mine.message.resize(max_report_message);
  const Tensor header = from_chief(Tensor::from_vector<int64_t>(
    {static_cast<int64_t>(mine.outcome), static_cast<int64_t>(mine.code), static_cast<int64_t>(mine.message.size())}));
  const auto fields = header.to_vector<int64_t>();
  // Checked before use: the length sizes an allocation.
  if (fields.size() != 3 || fields[0] < ChiefReport::done || fields[0] > ChiefReport::failed
      || fields[1] < static_cast<int64_t>(Errc::invalid_argument) || fields[1] > static_cast<int64_t>(Errc::unknown)
      || fields[2] < 0 || fields[2] > static_cast<int64_t>(max_report_message))
    fail(Errc::data_loss, std::string(method) + ": the chief's (worker 0's) report arrived malformed: "
                            + to_string(header));
  ChiefReport agreed{static_cast<ChiefReport::Outcome>(fields[0]), static_cast<Errc>(fields[1]), {}};
  if (fields[2] > 0) {
    Tensor text = Tensor::zeros({fields[2]}, DType::uint8);
    if (chief)
      std::memcpy(text.mutable_raw_data(), mine.message.data(), mine.message.size());
    const Tensor received = from_chief(text);
    agreed.message.assign(reinterpret_cast<const char*>(received.raw_data()), received.nbytes());
  }
  return agreed;
}

/// Throws the chief's failure: the chief its own Error, the others one naming it.
[[noreturn]] void fail_with(const ChiefReport& agreed, const Error* own, int worker, const std::string& what) {
  if (own != nullptr)
    throw *own;
  fail(agreed.code, what + " on worker " + std::to_string(worker) + ": the chief (worker 0) failed, so no worker "
                      "did: " + agreed.message);
}

} // namespace

Checkpoint::Checkpoint(const std::vector<Variable>& variables) {
  for (const auto& v : variables) {
    const auto& key = internal::VariableAccess::state(v, "Checkpoint").name;
    if (!variables_.emplace(key, v).second)
      fail(Errc::invalid_argument, "Checkpoint: two variables are named '" + key
                                     + "'; pass a map to save them under different keys");
  }
}

Checkpoint::Checkpoint(std::map<std::string, Variable> variables) : variables_(std::move(variables)) {
  for (const auto& [key, v] : variables_)
    (void)internal::VariableAccess::state(v, ("Checkpoint (key '" + key + "')").c_str());
}

Checkpoint::Checkpoint(const std::vector<Variable>& variables, const std::vector<ShardedVariable>& sharded)
  : Checkpoint(variables) {
  for (const auto& v : sharded) {
    if (v.state() == nullptr)
      fail(Errc::invalid_argument, "Checkpoint: a ShardedVariable is null (ShardedVariable{nullptr}); pass the "
                                   "variables ParameterServerStrategy::create_variable returned");
    if (variables_.count(v.name()) != 0 || !sharded_.emplace(v.name(), v).second)
      fail(Errc::invalid_argument, "Checkpoint: two variables are named '" + v.name()
                                     + "'; pass maps to save them under different keys");
  }
  check_keys();
}

Checkpoint::Checkpoint(std::map<std::string, Variable> variables, std::map<std::string, ShardedVariable> sharded)
  : Checkpoint(std::move(variables)) {
  sharded_ = std::move(sharded);
  check_keys();
}

void Checkpoint::check_keys() const {
  for (const auto& [key, v] : sharded_) {
    if (v.state() == nullptr)
      fail(Errc::invalid_argument, "Checkpoint: sharded variable '" + key + "' is null (ShardedVariable{nullptr}); "
                                   "pass the variables ParameterServerStrategy::create_variable returned");
    if (variables_.count(key) != 0)
      fail(Errc::invalid_argument, "Checkpoint: '" + key + "' names a variable and a sharded variable; "
                                     "save them under different keys");
    // Its slots are saved under "<key>/<slot>": no other variable may use those keys.
    for (const std::string slot : slot_names) {
      const auto taken = slot_entry(key, slot);
      if (variables_.count(taken) != 0 || sharded_.count(taken) != 0)
        fail(Errc::invalid_argument, "Checkpoint: the key '" + taken + "' would hold the optimizer slot '" + slot
                                       + "' of sharded variable '" + key
                                       + "'; save that variable under another key");
    }
  }
}

void Checkpoint::assign_values(std::map<std::string, Tensor> values) const {
  // The sharded variables first: they are the ones that can fail (a lost
  // server), and the local variables are then left as they were.
  for (const auto& [key, v] : sharded_) {
    ShardedVariable target = v;
    target.assign(values.at(key));
    std::map<std::string, Tensor> slots;
    for (const std::string slot : slot_names) {
      auto it = values.find(slot_entry(key, slot));
      if (it == values.end())
        continue;
      Tensor value = it->second;
      if (slot == "iterations" && value.rank() == 1 && value.shape()[0] != v.num_shards()) {
        // Saved from another sharding, with shards that counted differently:
        // the new shards cannot inherit their own counts, so all take the largest.
        const auto counts = value.to_vector<int64_t>();
        value = Tensor(*std::max_element(counts.begin(), counts.end()));
      }
      slots.emplace(slot, std::move(value));
    }
    target.assign_slots(slots);
  }
  assign_all(variables_, values);
}

Tensor Checkpoint::broadcast_from_chief(Strategy& strategy, const Tensor& value) {
  CollectiveFrame frame(strategy);
  return strategy.extended().cross_device_ops().broadcast(value);
}

void Checkpoint::save(const std::string& path) const {
  require_outside_scheduled_functions("Checkpoint::save");
  require_cross_replica_context("Checkpoint::save");
  Strategy* cluster = cluster_strategy(variables_, sharded_, "Checkpoint::save");
  if (cluster != nullptr)
    require_collectives_possible("Checkpoint::save");
  // Every value first: a variable that cannot be read fails the save before
  // the file system is touched. Across workers reading an ON_READ variable
  // is a collective, so every worker reads every value.
  std::map<std::string, Tensor> values; // in name order, as the file holds them
  try {
    for (const auto& [key, v] : variables_) {
      const auto& state = internal::VariableAccess::state(v, "Checkpoint::save");
      if (cluster != nullptr) {
        CollectiveFrame frame(*state.strategy);
        values.emplace(key, internal::cross_replica_value(state, "Checkpoint::save"));
      } else {
        detail::CrossReplicaGuard guard(*state.strategy);
        values.emplace(key, internal::cross_replica_value(state, "Checkpoint::save"));
      }
    }
    for (const auto& [key, v] : sharded_) {
      values.emplace(key, v.read_value());
      for (auto& [slot, value] : v.read_slots()) {
        const auto counts = slot == "iterations" ? value.to_vector<int64_t>() : std::vector<int64_t>{};
        // Equal counts (the usual case) are saved as one, which any sharding restores.
        if (!counts.empty() && std::all_of(counts.begin(), counts.end(), [&](int64_t c) { return c == counts[0]; }))
          value = Tensor(counts[0]);
        values.emplace(slot_entry(key, slot), std::move(value));
      }
    }
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) + " (saving " + quote(path) + ", which is unchanged)");
  }
  const std::vector<std::pair<std::string, Tensor>> entries(values.begin(), values.end());
  if (cluster == nullptr) {
    write_and_rename(path, entries);
    return;
  }
  // Only the chief writes: workers writing one shared path would race on
  // "<path>.tmp". The others learn whether the chief's write succeeded.
  const int worker = cluster->extended().worker_index();
  std::optional<Error> own;
  ChiefReport mine;
  if (worker == 0) {
    try {
      write_and_rename(path, entries);
    } catch (const Error& e) {
      own = e;
    } catch (const std::exception& e) {
      own = Error(Errc::internal, "Checkpoint::save: writing " + quote(path) + " failed: " + e.what());
    }
    if (own) {
      mine = ChiefReport::from(*own);
      mine.outcome = ChiefReport::failed;
    }
  }
  const auto agreed = share([&](const Tensor& t) { return broadcast_from_chief(*cluster, t); }, worker == 0,
                            mine, "Checkpoint::save");
  if (agreed.outcome != ChiefReport::done)
    fail_with(agreed, own ? &*own : nullptr, worker, "Checkpoint::save");
}

void Checkpoint::restore(const std::string& path, const CheckpointRestoreOptions& options) {
  (void)restore_from(path, options, false);
}

bool Checkpoint::restore_if_exists(const std::string& path, const CheckpointRestoreOptions& options) {
  return restore_from(path, options, true);
}

bool Checkpoint::restore_from(const std::string& path, const CheckpointRestoreOptions& options, bool missing_ok) {
  require_outside_scheduled_functions("Checkpoint::restore");
  require_cross_replica_context("Checkpoint::restore");
  Strategy* cluster = cluster_strategy(variables_, sharded_, "Checkpoint::restore");
  if (cluster == nullptr) {
    std::map<std::string, Entry> entries;
    try {
      entries = parse(read_file(path), path);
    } catch (const Error& e) {
      if (missing_ok && e.code() == Errc::not_found)
        return false;
      throw;
    }
    match(variables_, sharded_, entries, path, options);
    std::map<std::string, Tensor> values;
    for (auto& [key, entry] : entries)
      values.emplace(key, std::move(entry.value));
    assign_values(std::move(values));
    return true;
  }
  require_collectives_possible("Checkpoint::restore");
  // The chief reads and checks its file; every worker then takes the chief's
  // values, so a worker that cannot see the file (or holds another one)
  // still resumes from the chief's state.
  const int worker = cluster->extended().worker_index();
  std::map<std::string, Entry> entries;
  std::optional<Error> own;
  ChiefReport mine;
  if (worker == 0) {
    try {
      entries = parse(read_file(path), path);
      match(variables_, sharded_, entries, path, options);
    } catch (const Error& e) {
      own = e;
      mine = ChiefReport::from(e);
    } catch (const std::exception& e) {
      // Still reported, so that the other workers do not wait for values that never come.
      own = Error(Errc::internal, "Checkpoint::restore: reading " + quote(path) + " failed: " + e.what());
      mine = ChiefReport::from(*own);
    }
  }
  const auto agreed = share([&](const Tensor& t) { return broadcast_from_chief(*cluster, t); }, worker == 0,
                            mine, "Checkpoint::restore");
  if (agreed.outcome == ChiefReport::no_file && missing_ok)
    return false;
  if (agreed.outcome != ChiefReport::done)
    fail_with(agreed, own ? &*own : nullptr, worker, "Checkpoint::restore");
  std::map<std::string, Tensor> values;
  for (const auto& [key, v] : variables_) {
    const auto& state = internal::VariableAccess::state(v, "Checkpoint::restore");
    const Tensor chiefs = worker == 0 ? entries.at(key).value : Tensor::zeros(state.shape, state.dtype);
    values.emplace(key, broadcast_from_chief(*state.strategy, chiefs));
  }
  assign_all(variables_, values);
  return true;
}

} // namespace troupe
