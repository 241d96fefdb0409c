#include <troupe/strategies/checkpoint.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/timeline.hpp>
#include <troupe/strategies/checkpoint_files.hpp>
#include <troupe/strategies/checkpoint_format.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>
#include <troupe/strategies/variable_state.hpp>

namespace troupe {

using internal::CheckpointEntry;
using internal::describe;
using internal::quote;

namespace {

/// Writes the checkpoint file, as a span on the task's checkpoint track of
/// the timeline (the runtime of `strategy`, the variables' own).
void write_file(const Strategy* strategy, const std::string& path,
                const std::vector<std::pair<std::string, Tensor>>& entries) {
  auto* runtime = strategy != nullptr ? strategy->extended().runtime() : nullptr;
  auto& timeline = internal::Timeline::process();
  if (runtime == nullptr || !timeline.on()) {
    internal::write_checkpoint_file(path, entries);
    return;
  }
  auto& executor = runtime->executor();
  const auto began = executor.now();
  std::size_t bytes = 0;
  for (const auto& [name, value] : entries)
    bytes += value.nbytes();
  auto trace = [&](const std::string& outcome) {
    timeline.span(executor.trace_pid(), internal::Timeline::checkpoint_track, "checkpoint save", "checkpoint", began,
                  executor.now(), "\"path\": " + internal::Timeline::quoted(path) + ", \"bytes\": "
                                    + std::to_string(bytes) + ", \"outcome\": " + internal::Timeline::quoted(outcome));
  };
  try {
    internal::write_checkpoint_file(path, entries);
  } catch (const std::exception& e) {
    trace(e.what());
    throw;
  }
  trace("ok");
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

/// Checks `entries` (a parsed file) against `variables` before anything changes.
void match(const std::map<std::string, Variable>& variables, const std::map<std::string, ShardedVariable>& sharded,
           const std::map<std::string, CheckpointEntry>& entries, const std::string& path,
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
      const CheckpointEntry& entry = it->second;
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
    const Strategy* owner = variables_.empty() ? nullptr : internal::VariableAccess::state(variables_.begin()->second,
                                                                                            "Checkpoint::save").strategy;
    write_file(owner, path, entries);
    return;
  }
  // Only the chief writes: workers writing one shared path would race on
  // "<path>.tmp". The others learn whether the chief's write succeeded.
  const int worker = cluster->extended().worker_index();
  std::optional<Error> own;
  ChiefReport mine;
  if (worker == 0) {
    try {
      write_file(cluster, path, entries);
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
    std::map<std::string, CheckpointEntry> entries;
    try {
      entries = internal::parse_checkpoint(internal::read_checkpoint_file(path), path);
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
  std::map<std::string, CheckpointEntry> entries;
  std::optional<Error> own;
  ChiefReport mine;
  if (worker == 0) {
    try {
      entries = internal::parse_checkpoint(internal::read_checkpoint_file(path), path);
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
