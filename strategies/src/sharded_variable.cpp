#include <troupe/strategies/sharded_variable.hpp>
#include <troupe/strategies/sharded_variable_factory.hpp>

#include <atomic>
#include <cstring>
#include <chrono>
#include <map>

#include <caf/all.hpp>

#include <troupe/actors/completion.hpp>
#include <troupe/actors/runtime_impl.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {

/// The reply of a request without a value.
struct NoReply {};

/// One request of a fan-out: which shard it is about, and the message.
template <class Msg>
struct ShardRequest {
  int64_t shard = 0;
  Msg msg;
};

/// Where the fan-out's helper actor leaves the replies for the waiting thread.
template <class Reply>
struct FanOutSlot {
  std::vector<std::optional<Reply>> replies;
  std::optional<std::string> error; ///< the first failure, already naming variable, shard and server
  Errc code = Errc::internal;
  std::size_t pending = 0;
  Completion done;
};

/// Ids are unique in this process; the chief is the only process creating
/// variables of a ParameterServerStrategy, so they are unique on the servers.
std::atomic<uint64_t> next_variable_id{1};

std::string describe(const Tensor& t) {
  return std::string{name(t.dtype())} + " with shape " + t.shape().to_string();
}

Errc code_of(const caf::error& err) {
  if (err.category() == caf::atom("troupe"))
    return static_cast<Errc>(err.code());
  if (err == caf::sec::request_timeout)
    return Errc::timeout;
  return Errc::peer_lost; // the server exited or is unreachable
}

std::string server_name(const ShardedVariableState& state, int64_t shard) {
  return "parameter server " + RoundRobinPlacement::device(state.ps_tasks[static_cast<std::size_t>(shard)]).to_string();
}

/// Sends every request at once from a helper actor and waits (through the
/// runtime, so simulation steps the actors) until each one is answered;
/// throws Error for the first failure, naming the variable, the shard and
/// the server. Every request has the collective timeout as its deadline, so
/// a dead or silent server ends the wait.
template <class Reply, class Msg>
std::vector<Reply> fan_out(const ShardedVariableState& state, std::vector<ShardRequest<Msg>> requests,
                           const char* what) {
  auto slot = std::make_shared<FanOutSlot<Reply>>();
  slot->replies.resize(requests.size());
  slot->pending = requests.size();
  if (requests.empty())
    return {};
  std::vector<std::string> servers;
  for (const auto& request : requests)
    servers.push_back(server_name(state, request.shard));
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(knobs().collective_timeout_seconds));
  const std::string context = "ShardedVariable '" + state.name + "': " + what;
  std::vector<caf::actor> targets;
  for (const auto& request : requests)
    targets.push_back(state.servers[static_cast<std::size_t>(request.shard)]);
  state.runtime->system().spawn([slot, requests = std::move(requests), servers = std::move(servers),
                                 targets = std::move(targets), timeout, context](caf::event_based_actor* self) {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      auto finish = [slot] {
        if (--slot->pending == 0)
          slot->done.set();
      };
      auto on_error = [slot, self, i, finish, context, server = servers[i], shard = requests[i].shard](
                        caf::error& err) {
        if (!slot->error) {
          slot->code = code_of(err);
          slot->error = context + " of shard " + std::to_string(shard) + " on " + server
                        + " failed: " + self->system().render(err)
                        + (slot->code == Errc::timeout ? "; is the server alive? TROUPE_COLLECTIVE_TIMEOUT_SECONDS sets the deadline" : "");
        }
        finish();
      };
      if constexpr (std::is_same_v<Reply, NoReply>)
        self->request(targets[i], timeout, requests[i].msg)
          .then([slot, i, finish] { slot->replies[i] = NoReply{}; finish(); }, on_error);
      else
        self->request(targets[i], timeout, requests[i].msg)
          .then([slot, i, finish](Reply& reply) { slot->replies[i] = std::move(reply); finish(); }, on_error);
    }
  });
  state.runtime->wait(slot->done, context.c_str());
  if (slot->error)
    fail(slot->code, *slot->error);
  std::vector<Reply> out;
  for (auto& reply : slot->replies)
    out.push_back(std::move(*reply));
  return out;
}

} // namespace

ShardedVariable make_sharded_variable(Runtime& runtime, const std::vector<caf::actor>& servers, std::string name,
                                      const Tensor& initial, const std::optional<Partitioner>& partitioner,
                                      RoundRobinPlacement& placement) {
  if (!initial.valid())
    fail(Errc::invalid_argument, "ShardedVariable '" + name + "': give it an initial value, not an empty tensor");
  if (static_cast<int>(servers.size()) != placement.num_ps())
    fail(Errc::invalid_argument, "ShardedVariable '" + name + "': " + std::to_string(servers.size())
                                   + " parameter servers but the placement counts "
                                   + std::to_string(placement.num_ps()) + "; pass one server per ps task");
  auto state = std::make_shared<ShardedVariableState>();
  state->runtime = &runtime.impl();
  state->name = std::move(name);
  state->variable_id = next_variable_id++;
  state->dtype = initial.dtype();
  state->layout = ShardLayout::for_variable(initial.shape(), initial.dtype(), partitioner);
  state->ps_tasks = placement.place(state->layout);
  for (int task : state->ps_tasks)
    state->servers.push_back(servers.at(static_cast<std::size_t>(task)));
  auto values = state->layout.split(initial);
  std::vector<ShardRequest<PsCreateMsg>> requests;
  for (int64_t i = 0; i < state->layout.num_shards(); ++i)
    requests.push_back({i, PsCreateMsg{ShardKey{state->variable_id, static_cast<int32_t>(i), 0}, state->name,
                                       values[static_cast<std::size_t>(i)]}});
  (void) fan_out<NoReply>(*state, std::move(requests), "creation");
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

void update_shards(const ShardedVariableState& state, UpdateOp op, const Tensor& value, AttemptId attempt) {
  const std::string context = "ShardedVariable '" + state.name + "': " + to_string(op);
  if (attempt.function != 0)
    fail(Errc::not_supported, context + " under " + to_string(attempt)
                                + ": staged updates come with the worker actor; update immediately instead");
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
  auto parts = state.layout.split(value);
  std::vector<ShardRequest<PsApplyMsg>> requests;
  for (int64_t i = 0; i < state.layout.num_shards(); ++i)
    requests.push_back({i, PsApplyMsg{ShardUpdate{ShardKey{state.variable_id, static_cast<int32_t>(i), 0}, op,
                                                  parts[static_cast<std::size_t>(i)], {}}}});
  (void) fan_out<NoReply>(state, std::move(requests), to_string(op));
}

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
  requests.push_back({index_, internal::PsReadMsg{{state_->variable_id, static_cast<int32_t>(index_), 0}, {}}});
  return internal::fan_out<Tensor>(*state_, std::move(requests), "read").at(0);
}

// -- ShardedVariable -----------------------------------------------------------------

ShardedVariable::ShardedVariable(std::shared_ptr<internal::ShardedVariableState> state) noexcept
  : state_(std::move(state)) {
}

const std::string& ShardedVariable::name() const noexcept {
  return state_->name;
}

const Shape& ShardedVariable::shape() const noexcept {
  return state_->layout.full_shape();
}

DType ShardedVariable::dtype() const noexcept {
  return state_->dtype;
}

int64_t ShardedVariable::num_shards() const noexcept {
  return state_->layout.num_shards();
}

ShardedVariable::Shard ShardedVariable::shard(int64_t i) const {
  if (i < 0 || i >= num_shards())
    fail(Errc::out_of_range, "ShardedVariable '" + state_->name + "' has " + std::to_string(num_shards())
                               + " shards, so shard " + std::to_string(i) + " does not exist");
  return Shard{state_, i};
}

Tensor ShardedVariable::read_value() const {
  return state_->layout.concat(internal::read_shards(*state_));
}

Tensor ShardedVariable::embedding_lookup(const Tensor& ids) const {
  return internal::gather_rows(*state_, ids);
}

void ShardedVariable::assign(const Tensor& value) {
  internal::update_shards(*state_, internal::UpdateOp::ASSIGN, value);
}

void ShardedVariable::assign_add(const Tensor& delta) {
  internal::update_shards(*state_, internal::UpdateOp::ASSIGN_ADD, delta);
}

void ShardedVariable::assign_sub(const Tensor& delta) {
  internal::update_shards(*state_, internal::UpdateOp::ASSIGN_SUB, delta);
}

} // namespace troupe
