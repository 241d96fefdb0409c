#include <troupe/strategies/sharded_variable.hpp>
#include <troupe/strategies/sharded_variable_factory.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>

#include <caf/all.hpp>

#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/ps/ps_client.hpp>
#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {

/// One request of a fan-out: which shard it is about, and the message.
template <class Msg>
struct ShardRequest {
  int64_t shard = 0;
  Msg msg;
};

std::string describe(const Tensor& t) {
  return std::string{name(t.dtype())} + " with shape " + t.shape().to_string();
}


std::string server_name(const ShardedVariableState& state, int64_t shard) {
  return "parameter server " + RoundRobinPlacement::device(state.ps_tasks[static_cast<std::size_t>(shard)]).to_string();
}

/// Request `msg` about shard `shard` of `state`, to that shard's server.
template <class Msg>
PsRequest<Msg> to_shard(const ShardedVariableState& state, int64_t shard, const std::string& what, Msg msg) {
  return {state.servers[static_cast<std::size_t>(shard)],
          "ShardedVariable '" + state.name + "': " + what + " of shard " + std::to_string(shard) + " on "
            + server_name(state, shard),
          std::move(msg)};
}

/// ps_request_all for requests about the shards of one variable.
template <class Reply, class Msg>
auto fan_out_optional(const ShardedVariableState& state, std::vector<ShardRequest<Msg>> requests, const char* what,
                      bool missing_ok) {
  std::vector<PsRequest<Msg>> targeted;
  for (auto& request : requests)
    targeted.push_back(to_shard(state, request.shard, what, std::move(request.msg)));
  return ps_request_all<Reply>(*state.runtime, std::move(targeted), "ShardedVariable '" + state.name + "': " + what,
                               missing_ok);
}

/// The same, every request answered (Reply = void: no values).
template <class Reply, class Msg>
auto fan_out(const ShardedVariableState& state, std::vector<ShardRequest<Msg>> requests, const char* what) {
  auto replies = fan_out_optional<Reply>(state, std::move(requests), what, false);
  if constexpr (!std::is_void_v<Reply>) {
    std::vector<Reply> out;
    for (auto& reply : replies)
      out.push_back(std::move(*reply));
    return out;
  }
}

} // namespace

ShardedVariable make_sharded_variable(Runtime& runtime, const std::vector<ParameterServerActorHandle>& servers, std::string name,
                                      const Tensor& initial, const std::optional<Partitioner>& partitioner,
                                      RoundRobinPlacement& placement, bool create_on_servers) {
  if (!initial.valid())
    fail(Errc::invalid_argument, "ShardedVariable '" + name + "': give it an initial value, not an empty tensor");
  if (static_cast<int>(servers.size()) != placement.num_ps())
    fail(Errc::invalid_argument, "ShardedVariable '" + name + "': " + std::to_string(servers.size())
                                   + " parameter servers but the placement counts "
                                   + std::to_string(placement.num_ps()) + "; pass one server per ps task");
  auto state = std::make_shared<ShardedVariableState>();
  state->runtime = &runtime.impl();
  state->name = std::move(name);
  // Counted per program (a simulated task's own): the chief is the only task
  // creating variables on the servers, and every task's program names them alike.
  state->variable_id = runtime.impl().functions().next_variable_id();
  state->dtype = initial.dtype();
  state->layout = ShardLayout::for_variable(initial.shape(), initial.dtype(), partitioner);
  state->ps_tasks = placement.place(state->layout);
  for (int task : state->ps_tasks)
    state->servers.push_back(servers.at(static_cast<std::size_t>(task)));
  if (!create_on_servers)
    return ShardedVariable{std::move(state)};
  auto values = state->layout.split(initial);
  std::vector<ShardRequest<PsCreateMsg>> requests;
  for (int64_t i = 0; i < state->layout.num_shards(); ++i)
    requests.push_back({i, PsCreateMsg{ShardKey{state->variable_id, static_cast<int32_t>(i), 0}, state->name,
                                       values[static_cast<std::size_t>(i)]}});
  (void) fan_out<void>(*state, std::move(requests), "creation");
  return ShardedVariable{std::move(state)};
}

std::vector<Tensor> read_shards(const ShardedVariableState& state, AttemptId attempt) {
  std::vector<ShardRequest<PsReadMsg>> requests;
  for (int64_t i = 0; i < state.layout.num_shards(); ++i)
    requests.push_back({i, PsReadMsg{ShardKey{state.variable_id, static_cast<int32_t>(i), 0}, attempt}});
  return fan_out<Tensor>(state, std::move(requests), "read");
}

Tensor gather_rows(const ShardedVariableState& state, const Tensor& ids, AttemptId attempt) {
  const std::string context = "ShardedVariable '" + state.name + "': embedding_lookup";
  if (!ids.valid() || ids.rank() != 1 || (ids.dtype() != DType::int32 && ids.dtype() != DType::int64))
    fail(Errc::invalid_argument, context + ": ids must be an int32 or int64 vector, not "
                                   + (ids.valid() ? describe(ids) : std::string{"an empty tensor"}));
  if (state.layout.full_shape().rank() == 0)
    fail(Errc::invalid_argument, context + ": a scalar variable has no rows to look up");
  const auto all = ids.to_vector<int64_t>();
  const int64_t row_count = state.layout.full_shape()[0];
  // Group by shard: per shard the local rows, and where each id's row goes back.
  std::map<int64_t, std::vector<int64_t>> local_rows;
  std::vector<std::pair<int64_t, std::size_t>> origin; // per id: shard, position in that shard's reply
  for (int64_t id : all) {
    if (id < 0 || id >= row_count)
      fail(Errc::out_of_range, context + ": id " + std::to_string(id) + " is outside the variable's "
                                 + std::to_string(row_count) + " rows; ids must be in [0, "
                                 + std::to_string(row_count) + ")");
    const int64_t shard = state.layout.shard_of_row(id);
    auto& rows = local_rows[shard];
    origin.emplace_back(shard, rows.size());
    rows.push_back(id - state.layout.row_offset(shard));
  }
  std::vector<ShardRequest<PsGatherMsg>> requests;
  std::map<int64_t, std::size_t> reply_of_shard;
  for (auto& [shard, rows] : local_rows) {
    reply_of_shard[shard] = requests.size();
    requests.push_back({shard, PsGatherMsg{ShardKey{state.variable_id, static_cast<int32_t>(shard), 0},
                                           Tensor::from_vector<int64_t>(rows), attempt}});
  }
  auto replies = fan_out<Tensor>(state, std::move(requests), "embedding_lookup");
  // Reassemble in the ids' order: every id's row, as a view of its shard's reply.
  const Shape out_shape = state.layout.full_shape().with_dim(0, static_cast<int64_t>(all.size()));
  Tensor out = Tensor::empty(out_shape, state.dtype);
  const std::size_t row_bytes = all.empty() ? 0 : out.nbytes() / all.size();
  std::byte* dst = out.mutable_raw_data();
  for (std::size_t i = 0; i < origin.size(); ++i) {
    const Tensor& reply = replies[reply_of_shard.at(origin[i].first)];
    std::memcpy(dst + i * row_bytes, reply.raw_data() + origin[i].second * row_bytes, row_bytes);
  }
  return out;
}

namespace {

/// Refuses an update value the variable cannot take, before anything is sent.
void check_update_value(const ShardedVariableState& state, const std::string& context, const Tensor& value) {
  if (!value.valid())
    fail(Errc::invalid_argument, context + ": the value is an empty tensor");
  if (value.dtype() != state.dtype)
    fail(Errc::dtype_mismatch, context + ": the value is " + describe(value) + " but the variable is "
                                 + std::string{name(state.dtype)} + " with shape "
                                 + state.layout.full_shape().to_string() + "; cast it first");
  if (value.shape() != state.layout.full_shape())
    fail(Errc::shape_mismatch, context + ": the value has shape " + value.shape().to_string()
                                 + " but the variable has shape " + state.layout.full_shape().to_string()
                                 + "; pass the full variable's shape");
}

/// Applies `op` with values[k] to every shard of variables[k], all at once:
/// every value is checked first, then inside a scheduled function everything
/// is staged under its attempt with one WorkerContext::stage (applied when
/// the coordinator commits the attempt, exactly once, all or nothing), and
/// outside one every shard's PsApplyMsg is sent in one fan-out.
void update_variables(const std::vector<const ShardedVariableState*>& variables, UpdateOp op,
                      const std::vector<Tensor>& values, AttemptId attempt, const std::vector<double>& hyper) {
  for (std::size_t k = 0; k < variables.size(); ++k)
    check_update_value(*variables[k], "ShardedVariable '" + variables[k]->name + "': " + to_string(op), values[k]);
  if (variables.empty())
    return;
  if (auto wrong = check_update_hyper("ShardedVariable '" + variables.front()->name + "': " + to_string(op), hyper);
      !wrong.empty())
    fail(Errc::invalid_argument, wrong);
  std::vector<PsRequest<ShardUpdate>> updates;
  for (std::size_t k = 0; k < variables.size(); ++k) {
    const auto& state = *variables[k];
    auto parts = state.layout.split(values[k]);
    for (int64_t i = 0; i < state.layout.num_shards(); ++i)
      updates.push_back(to_shard(state, i, to_string(op),
                                 ShardUpdate{ShardKey{state.variable_id, static_cast<int32_t>(i), 0}, op,
                                             std::move(parts[static_cast<std::size_t>(i)]), hyper}));
  }
  const std::string context = variables.size() == 1
                                ? "ShardedVariable '" + variables.front()->name + "': " + to_string(op)
                                : std::string{to_string(op)} + " of " + std::to_string(variables.size())
                                    + " ShardedVariables";
  if (attempt.function != 0) {
    auto* worker = WorkerContext::current();
    if (!worker || !(worker->attempt() == attempt))
      fail(Errc::internal, context + ": staging under " + to_string(attempt) + " outside that attempt's worker");
    std::vector<WorkerContext::StageTarget> targets;
    std::size_t next = 0;
    for (const auto* state : variables)
      for (int64_t i = 0; i < state->layout.num_shards(); ++i, ++next)
        targets.push_back({state->ps_tasks[static_cast<std::size_t>(i)], std::move(updates[next].server),
                           std::move(updates[next].what), std::move(updates[next].msg)});
    worker->stage(std::move(targets));
    return;
  }
  std::vector<PsRequest<PsApplyMsg>> requests;
  for (auto& update : updates)
    requests.push_back({std::move(update.server), std::move(update.what), PsApplyMsg{std::move(update.msg)}});
  (void) ps_request_all<void>(*variables.front()->runtime, std::move(requests), context, false);
}

} // namespace

void update_shards(const ShardedVariableState& state, UpdateOp op, const Tensor& value, AttemptId attempt,
                   const std::vector<double>& hyper) {
  update_variables({&state}, op, {value}, attempt, hyper);
}

AttemptId current_attempt() {
  auto* worker = WorkerContext::current();
  return worker ? worker->attempt() : AttemptId{};
}

// -- optimizer slots ------------------------------------------------------------------

namespace {

// Momentum's accumulator and Adam's m share slot 1 (parameter_server_messages.hpp).
static_assert(momentum_slot == adam_m_slot);
constexpr int32_t optimizer_slots[] = {adam_m_slot, adam_v_slot, adam_iterations_slot};

/// The value a slot has before the first optimizer step: zeros of the
/// shard's shape, or an iteration count of 0.
Tensor never_updated(const ShardedVariableState& state, int32_t slot, int64_t shard) {
  if (slot == adam_iterations_slot)
    return Tensor(int64_t{0});
  return Tensor::zeros(state.layout.shard_shape(shard), state.dtype);
}

void require_coordinator(const ShardedVariableState& state, const char* method) {
  if (WorkerContext::current())
    fail(Errc::failed_precondition,
         "ShardedVariable '" + state.name + "': " + method + " inside a scheduled function: optimizer slots are "
           "read and set on the coordinator, between scheduled functions (as a checkpoint's save and restore do)");
}

/// The slot name's index, or 0 for a name that is none of them.
int32_t slot_of_name(const std::string& name) {
  if (name == "momentum" || name == "m")
    return adam_m_slot;
  if (name == "v")
    return adam_v_slot;
  if (name == "iterations")
    return adam_iterations_slot;
  return 0;
}

/// Per optimizer slot, per shard: the slot's value on that shard's server,
/// or nothing where it does not exist (never updated).
using SlotShards = std::map<int32_t, std::vector<std::optional<Tensor>>>;

/// Every optimizer slot of every shard, read at once.
SlotShards read_slot_shards(const ShardedVariableState& state) {
  std::vector<ShardRequest<PsReadMsg>> requests;
  for (int32_t slot : optimizer_slots)
    for (int64_t i = 0; i < state.layout.num_shards(); ++i)
      requests.push_back({i, PsReadMsg{ShardKey{state.variable_id, static_cast<int32_t>(i), slot}, {}}});
  auto replies = fan_out_optional<Tensor>(state, std::move(requests), "reading the optimizer slots", true);
  SlotShards held;
  std::size_t next = 0;
  for (int32_t slot : optimizer_slots) {
    auto& shards = held[slot];
    for (int64_t i = 0; i < state.layout.num_shards(); ++i) {
      auto& reply = replies[next++];
      // Checked, as anything received: a slot of another shape would corrupt the joined value.
      if (reply) {
        const Tensor expected = never_updated(state, slot, i);
        if (reply->dtype() != expected.dtype() || reply->shape() != expected.shape())
          fail(Errc::data_loss, "ShardedVariable '" + state.name + "': slot " + std::to_string(slot) + " of shard "
                                  + std::to_string(i) + " on " + server_name(state, i) + " is " + describe(*reply)
                                  + ", not " + describe(expected));
      }
      shards.push_back(std::move(reply));
    }
  }
  return held;
}

/// Sets slot s of shard i to values[s][i] (created where it does not exist
/// yet); slots missing from `values` that exist go back to never updated.
void write_slot_shards(const ShardedVariableState& state, const std::map<int32_t, std::vector<Tensor>>& values) {
  const auto held = read_slot_shards(state);
  std::vector<ShardRequest<PsCreateMsg>> creates;
  std::vector<ShardRequest<PsApplyMsg>> assigns;
  for (int32_t slot : optimizer_slots) {
    const auto wanted = values.find(slot);
    for (int64_t i = 0; i < state.layout.num_shards(); ++i) {
      const bool exists = held.at(slot)[static_cast<std::size_t>(i)].has_value();
      const ShardKey key{state.variable_id, static_cast<int32_t>(i), slot};
      if (wanted != values.end()) {
        const Tensor& value = wanted->second.at(static_cast<std::size_t>(i));
        if (exists)
          assigns.push_back({i, PsApplyMsg{ShardUpdate{key, UpdateOp::ASSIGN, value, {}}}});
        else
          creates.push_back({i, PsCreateMsg{key, state.name, value}});
      } else if (exists) {
        // Not given: back to never updated, so the servers hold exactly what was asked.
        assigns.push_back({i, PsApplyMsg{ShardUpdate{key, UpdateOp::ASSIGN, never_updated(state, slot, i), {}}}});
      }
    }
  }
  (void) fan_out<void>(state, std::move(creates), "creating optimizer slots");
  (void) fan_out<void>(state, std::move(assigns), "assigning optimizer slots");
}

} // namespace

} // namespace troupe::internal

namespace troupe {

// -- ShardedVariable::Shard ----------------------------------------------------------

Shape ShardedVariable::Shard::shape() const {
  return state_->layout.shard_shape(index_);
}

DeviceSpec ShardedVariable::Shard::device() const {
  return RoundRobinPlacement::device(state_->ps_tasks[static_cast<std::size_t>(index_)]);
}

Tensor ShardedVariable::Shard::read_value() const {
  std::vector<internal::ShardRequest<internal::PsReadMsg>> requests;
  requests.push_back({index_, internal::PsReadMsg{{state_->variable_id, static_cast<int32_t>(index_), 0},
                                                  internal::current_attempt()}});
  return internal::fan_out<Tensor>(*state_, std::move(requests), "read").at(0);
}

// -- ShardedVariable -----------------------------------------------------------------

ShardedVariable::ShardedVariable(std::shared_ptr<internal::ShardedVariableState> state) noexcept
  : state_(std::move(state)) {
}

const internal::ShardedVariableState& ShardedVariable::checked() const {
  if (!state_)
    fail(Errc::failed_precondition, "an empty ShardedVariable: assign it the result of "
                                    "ParameterServerStrategy::create_variable first");
  return *state_;
}

const std::string& ShardedVariable::name() const {
  return checked().name;
}

const Shape& ShardedVariable::shape() const {
  return checked().layout.full_shape();
}

DType ShardedVariable::dtype() const {
  return checked().dtype;
}

int64_t ShardedVariable::num_shards() const {
  return checked().layout.num_shards();
}

ShardedVariable::Shard ShardedVariable::shard(int64_t i) const {
  if (i < 0 || i >= num_shards())
    fail(Errc::out_of_range, "ShardedVariable '" + checked().name + "' has " + std::to_string(num_shards())
                               + " shards, so shard " + std::to_string(i) + " does not exist");
  return Shard{state_, i};
}

Tensor ShardedVariable::read_value() const {
  return checked().layout.concat(internal::read_shards(checked(), internal::current_attempt()));
}

Tensor ShardedVariable::embedding_lookup(const Tensor& ids) const {
  return internal::gather_rows(checked(), ids, internal::current_attempt());
}

void ShardedVariable::assign(const Tensor& value) {
  internal::update_shards(checked(), internal::UpdateOp::ASSIGN, value, internal::current_attempt());
}

void ShardedVariable::assign_add(const Tensor& delta) {
  internal::update_shards(checked(), internal::UpdateOp::ASSIGN_ADD, delta, internal::current_attempt());
}

void ShardedVariable::assign_sub(const Tensor& delta) {
  internal::update_shards(checked(), internal::UpdateOp::ASSIGN_SUB, delta, internal::current_attempt());
}

void ShardedVariable::apply_momentum(const Tensor& gradient, const MomentumOptions& options) {
  if (options.nesterov)
    fail(Errc::not_supported, "ShardedVariable '" + checked().name + "': apply_momentum with nesterov = true is not "
                              "applied on parameter servers; use nesterov = false");
  internal::update_shards(checked(), internal::UpdateOp::APPLY_MOMENTUM, gradient, internal::current_attempt(),
                          {options.learning_rate, options.momentum});
}

void ShardedVariable::apply_adam(const Tensor& gradient, const AdamOptions& options) {
  internal::update_shards(checked(), internal::UpdateOp::APPLY_ADAM, gradient, internal::current_attempt(),
                          {options.learning_rate, options.beta_1, options.beta_2, options.epsilon});
}

std::map<std::string, Tensor> ShardedVariable::read_slots() const {
  using namespace internal;
  require_coordinator(checked(), "read_slots");
  const auto held = read_slot_shards(checked());
  auto exists_anywhere = [&](int32_t slot) {
    const auto& shards = held.at(slot);
    return std::any_of(shards.begin(), shards.end(), [](const auto& t) { return t.has_value(); });
  };
  auto shard_value = [&](int32_t slot, int64_t i) {
    const auto& value = held.at(slot)[static_cast<std::size_t>(i)];
    return value ? *value : never_updated(checked(), slot, i);
  };
  auto joined = [&](int32_t slot) {
    std::vector<Tensor> parts;
    for (int64_t i = 0; i < num_shards(); ++i)
      parts.push_back(shard_value(slot, i));
    return checked().layout.concat(parts);
  };
  std::map<std::string, Tensor> slots;
  // Adam writes all three slots at its first step, momentum only slot 1.
  if (exists_anywhere(adam_v_slot) || exists_anywhere(adam_iterations_slot)) {
    slots.emplace("m", joined(adam_m_slot));
    slots.emplace("v", joined(adam_v_slot));
    std::vector<int64_t> counts;
    for (int64_t i = 0; i < num_shards(); ++i)
      counts.push_back(shard_value(adam_iterations_slot, i).item<int64_t>());
    slots.emplace("iterations", Tensor::from_vector<int64_t>(counts));
  } else if (exists_anywhere(momentum_slot)) {
    slots.emplace("momentum", joined(momentum_slot));
  }
  return slots;
}

void ShardedVariable::assign_slots(const std::map<std::string, Tensor>& slots) {
  using namespace internal;
  const std::string context = "ShardedVariable '" + checked().name + "': assign_slots";
  require_coordinator(checked(), "assign_slots");
  if (slots.count("momentum") != 0 && slots.size() > 1)
    fail(Errc::invalid_argument, context + ": \"momentum\" (SGD with momentum) comes alone, but Adam's slots are "
                                   "given too; pass {\"momentum\"} or {\"m\", \"v\", \"iterations\"}");
  std::map<int32_t, std::vector<Tensor>> values;
  for (const auto& [slot_name, value] : slots) {
    const int32_t slot = slot_of_name(slot_name);
    const std::string what = context + ": slot \"" + slot_name + "\"";
    if (slot == 0)
      fail(Errc::invalid_argument, what + " is not an optimizer slot; the slots are \"momentum\", \"m\", \"v\" "
                                          "and \"iterations\"");
    if (!value.valid())
      fail(Errc::invalid_argument, what + " is an empty tensor");
    if (slot != adam_iterations_slot) {
      if (value.dtype() != checked().dtype)
        fail(Errc::dtype_mismatch, what + " is " + describe(value) + " but the variable is "
                                     + std::string{troupe::name(checked().dtype)} + "; a slot has the variable's dtype");
      if (value.shape() != shape())
        fail(Errc::shape_mismatch, what + " has shape " + value.shape().to_string() + " but the variable has shape "
                                     + shape().to_string() + "; pass the full variable's slot");
      values[slot] = checked().layout.split(value);
      continue;
    }
    const auto shards = static_cast<std::size_t>(num_shards());
    if (value.dtype() != DType::int64 || value.rank() > 1 || (value.rank() == 1 && value.shape()[0] != num_shards()))
      fail(Errc::invalid_argument, what + " is " + describe(value) + "; pass an int64 scalar (every shard's count) "
                                     "or an int64 vector of one count per shard (" + std::to_string(shards) + ")");
    const auto counts = value.to_vector<int64_t>();
    for (int64_t count : counts)
      if (count < 0)
        fail(Errc::invalid_argument, what + " holds the negative count " + std::to_string(count));
    for (std::size_t i = 0; i < shards; ++i)
      values[slot].push_back(Tensor(counts[counts.size() == 1 ? 0 : i]));
  }
  write_slot_shards(checked(), values);
}

} // namespace troupe

// -- several variables in one round trip --------------------------------------------

namespace troupe {

namespace {

/// The variables' states, refusing an empty handle (by its position) and a
/// mix of runtimes, whose servers one wait cannot reach.
std::vector<const internal::ShardedVariableState*> batch_states(const std::vector<ShardedVariable>& variables,
                                                                const std::string& what) {
  std::vector<const internal::ShardedVariableState*> states;
  for (std::size_t k = 0; k < variables.size(); ++k) {
    const auto* state = variables[k].state().get();
    if (!state)
      fail(Errc::failed_precondition, what + ": variables[" + std::to_string(k) + "] is an empty ShardedVariable: "
                                        "assign it the result of ParameterServerStrategy::create_variable first");
    if (!states.empty() && state->runtime != states.front()->runtime)
      fail(Errc::invalid_argument, what + ": ShardedVariable '" + state->name + "' belongs to another Runtime than '"
                                     + states.front()->name + "'; pass the variables of one ParameterServerStrategy");
    states.push_back(state);
  }
  return states;
}

/// One gradient per variable, else Error naming the variable left without
/// one (or the gradient left without a variable).
void check_gradient_count(const std::vector<const internal::ShardedVariableState*>& states,
                          const std::vector<Tensor>& gradients, const std::string& what) {
  if (gradients.size() == states.size())
    return;
  const std::string counts = what + ": " + std::to_string(states.size()) + " variables but "
                             + std::to_string(gradients.size()) + " gradients: ";
  const std::string fix = "; pass one gradient per variable, in the variables' order";
  if (gradients.size() < states.size())
    fail(Errc::invalid_argument,
         counts + "ShardedVariable '" + states[gradients.size()]->name + "' has no gradient" + fix);
  fail(Errc::invalid_argument, counts + "gradients[" + std::to_string(states.size()) + "] has no variable"
                                 + (states.empty() ? "" : " (the last variable is '" + states.back()->name + "')")
                                 + fix);
}

} // namespace

std::vector<Tensor> read_values(const std::vector<ShardedVariable>& variables) {
  using namespace internal;
  const auto states = batch_states(variables, "read_values");
  if (states.empty())
    return {};
  const AttemptId attempt = current_attempt();
  std::vector<PsRequest<PsReadMsg>> requests;
  for (const auto* state : states)
    for (int64_t i = 0; i < state->layout.num_shards(); ++i)
      requests.push_back(
        to_shard(*state, i, "read", PsReadMsg{ShardKey{state->variable_id, static_cast<int32_t>(i), 0}, attempt}));
  auto replies = ps_request_all<Tensor>(*states.front()->runtime, std::move(requests),
                                  "read_values of " + std::to_string(states.size()) + " ShardedVariables", false);
  std::vector<Tensor> values;
  std::size_t next = 0;
  for (const auto* state : states) {
    std::vector<Tensor> shards;
    for (int64_t i = 0; i < state->layout.num_shards(); ++i)
      shards.push_back(std::move(*replies[next++]));
    values.push_back(state->layout.concat(shards));
  }
  return values;
}

void apply_adam(const std::vector<ShardedVariable>& variables, const std::vector<Tensor>& gradients,
                const AdamOptions& options) {
  const auto states = batch_states(variables, "apply_adam");
  check_gradient_count(states, gradients, "apply_adam");
  internal::update_variables(states, internal::UpdateOp::APPLY_ADAM, gradients, internal::current_attempt(),
                             {options.learning_rate, options.beta_1, options.beta_2, options.epsilon});
}

void apply_momentum(const std::vector<ShardedVariable>& variables, const std::vector<Tensor>& gradients,
                    const MomentumOptions& options) {
  const auto states = batch_states(variables, "apply_momentum");
  check_gradient_count(states, gradients, "apply_momentum");
  if (options.nesterov)
    fail(Errc::not_supported, "apply_momentum with nesterov = true is not applied on parameter servers; use "
                              "nesterov = false");
  internal::update_variables(states, internal::UpdateOp::APPLY_MOMENTUM, gradients, internal::current_attempt(),
                             {options.learning_rate, options.momentum});
}

} // namespace troupe
