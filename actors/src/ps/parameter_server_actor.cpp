#include <troupe/actors/ps/parameter_server_actor.hpp>

#include <cmath>
#include <exception>

#include <caf/all.hpp>

#include <troupe/actors/ps/ps_client.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/ops/nn_ops.hpp>
#include <troupe/ops/tensor_ops.hpp>

namespace troupe::internal {

namespace {

/// "float32 with shape (2, 3)".
std::string describe_tensor(const Tensor& t) {
  if (!t.valid())
    return "empty";
  return std::string{name(t.dtype())} + " with shape " + t.shape().to_string();
}

bool known_op(UpdateOp op) noexcept {
  return static_cast<uint8_t>(op) <= static_cast<uint8_t>(UpdateOp::APPLY_ADAM);
}

bool is_optimizer_op(UpdateOp op) noexcept {
  return op == UpdateOp::APPLY_MOMENTUM || op == UpdateOp::APPLY_ADAM;
}

/// How many hyperparameters an optimizer op takes, and what they are (for errors).
std::pair<std::size_t, const char*> optimizer_hyper(UpdateOp op) noexcept {
  if (op == UpdateOp::APPLY_ADAM)
    return {4, "{learning_rate, beta_1, beta_2, epsilon}"};
  return {2, "{learning_rate, momentum}"};
}

/// Empty when `hyper` is in range for `op`, else what is wrong with it.
std::string check_optimizer_hyper(UpdateOp op, const std::vector<double>& hyper) {
  const auto [count, names] = optimizer_hyper(op);
  if (hyper.size() != count)
    return "takes exactly " + std::to_string(count) + " hyperparameters " + names + ", not "
           + std::to_string(hyper.size());
  for (double h : hyper)
    if (!std::isfinite(h))
      return "takes finite hyperparameters " + std::string{names};
  if (op == UpdateOp::APPLY_MOMENTUM && (hyper[1] < 0 || hyper[1] > 1))
    return "takes a momentum in [0, 1] (Keras' bound), not " + std::to_string(hyper[1]);
  if (op == UpdateOp::APPLY_ADAM) {
    // beta < 1 keeps the bias correction 1 - beta_1^step away from zero.
    if (hyper[1] < 0 || hyper[1] >= 1 || hyper[2] < 0 || hyper[2] >= 1)
      return "takes beta_1 and beta_2 in [0, 1), not " + std::to_string(hyper[1]) + " and "
             + std::to_string(hyper[2]);
    if (hyper[3] < 0)
      return "takes an epsilon >= 0, not " + std::to_string(hyper[3]);
  }
  return {};
}

ShardKey slot_key(const ShardKey& key, int32_t slot) noexcept {
  return ShardKey{key.variable, key.shard, slot};
}

/// The slots an optimizer op reads and writes, besides the variable.
std::vector<int32_t> slots_of(UpdateOp op) {
  if (op == UpdateOp::APPLY_ADAM)
    return {adam_m_slot, adam_v_slot, adam_iterations_slot};
  if (op == UpdateOp::APPLY_MOMENTUM)
    return {momentum_slot};
  return {};
}

/// Empty when slot `slot` (held as `value`) fits variable `var`, else what is wrong.
std::string check_slot(int32_t slot, const Tensor& value, const Tensor& var) {
  if (slot == adam_iterations_slot) {
    if (value.dtype() != DType::int64 || value.shape() != Shape{})
      return "the iteration count (slot " + std::to_string(slot) + ") is " + describe_tensor(value)
             + ", not an int64 scalar";
    if (value.item<int64_t>() < 0)
      return "the iteration count (slot " + std::to_string(slot) + ") is negative";
    return {};
  }
  if (value.dtype() != var.dtype() || value.shape() != var.shape())
    return "slot " + std::to_string(slot) + " is " + describe_tensor(value) + " but the variable is "
           + describe_tensor(var) + "; a slot has the variable's dtype and shape";
  return {};
}

} // namespace

// -- free functions ---------------------------------------------------------------

std::string to_string(const ShardKey& key) {
  std::string out;
  if (key.slot != 0)
    out = "slot " + std::to_string(key.slot) + " of ";
  return out + "shard " + std::to_string(key.shard) + " of variable " + std::to_string(key.variable);
}

std::string to_string(const AttemptId& id) {
  return "attempt " + std::to_string(id.attempt) + " of function " + std::to_string(id.function);
}

const char* to_string(UpdateOp op) noexcept {
  switch (op) {
    case UpdateOp::ASSIGN:
      return "assign";
    case UpdateOp::ASSIGN_ADD:
      return "assign_add";
    case UpdateOp::ASSIGN_SUB:
      return "assign_sub";
    case UpdateOp::APPLY_SGD:
      return "apply_sgd";
    case UpdateOp::APPLY_MOMENTUM:
      return "apply_momentum";
    case UpdateOp::APPLY_ADAM:
      return "apply_adam";
  }
  return "unknown update op";
}

Tensor updated_value(const Tensor& value, const ShardUpdate& update) {
  switch (update.op) {
    case UpdateOp::ASSIGN:
      return update.value;
    case UpdateOp::ASSIGN_ADD:
      return add(value, update.value);
    case UpdateOp::ASSIGN_SUB:
      return subtract(value, update.value);
    case UpdateOp::APPLY_SGD:
      return subtract(value, multiply(Tensor::full(Shape{}, update.hyper.at(0), value.dtype()), update.value));
    case UpdateOp::APPLY_MOMENTUM:
    case UpdateOp::APPLY_ADAM:
      fail(Errc::invalid_argument,
           std::string{to_string(update.op)} + " also writes the variable's slots; use updated_values");
  }
  fail(Errc::invalid_argument, "unknown update op " + std::to_string(static_cast<int>(update.op)));
}

std::vector<std::pair<ShardKey, Tensor>>
updated_values(const std::function<Tensor(const ShardKey&)>& current, const ShardUpdate& update) {
  if (!is_optimizer_op(update.op))
    return {{update.key, updated_value(current(update.key), update)}};
  // Copies of the handles: the kernels write through mutable_data, which
  // copies a shared buffer first, so the held values stay as they are.
  Tensor var = current(update.key);
  if (!var.valid())
    fail(Errc::not_found, std::string{to_string(update.op)} + ": there is no " + to_string(update.key));
  auto slot = [&](int32_t index) {
    Tensor value = current(slot_key(update.key, index));
    if (!value.valid()) // the first update creates the slot
      return index == adam_iterations_slot ? Tensor(int64_t{0}) : Tensor::zeros(var.shape(), var.dtype());
    if (auto wrong = check_slot(index, value, var); !wrong.empty())
      fail(Errc::invalid_argument, std::string{to_string(update.op)} + " on " + to_string(update.key) + ": " + wrong);
    return value;
  };
  const auto& h = update.hyper;
  if (update.op == UpdateOp::APPLY_MOMENTUM) {
    Tensor accum = slot(momentum_slot);
    // The Fashion-MNIST sample's call (Keras SGD, nesterov off).
    apply_momentum(var, accum, update.value, {.learning_rate = h.at(0), .momentum = h.at(1)});
    return {{update.key, std::move(var)}, {slot_key(update.key, momentum_slot), std::move(accum)}};
  }
  Tensor m = slot(adam_m_slot);
  Tensor v = slot(adam_v_slot);
  // The step is per shard: the updates applied here so far, plus this one.
  const int64_t step = slot(adam_iterations_slot).item<int64_t>() + 1;
  apply_adam(var, m, v, update.value, step,
             {.learning_rate = h.at(0), .beta_1 = h.at(1), .beta_2 = h.at(2), .epsilon = h.at(3)});
  return {{update.key, std::move(var)},
          {slot_key(update.key, adam_m_slot), std::move(m)},
          {slot_key(update.key, adam_v_slot), std::move(v)},
          {slot_key(update.key, adam_iterations_slot), Tensor(step)}};
}

void add_parameter_server_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe_parameter_server>();
}

// -- ParameterServerActor ---------------------------------------------------------

ParameterServerActor::ParameterServerActor(caf::actor_config& cfg, ParameterServerOptions options)
  : ParameterServerActorHandle::base(cfg), options_(std::move(options)) {
}

ParameterServerActor::behavior_type ParameterServerActor::make_behavior() {
  return {
    [this](PsCreateMsg& msg) { return on_create(msg); },
    [this](const PsReadMsg& msg) { return on_read(msg); },
    [this](const PsReleaseMsg& msg) { leases_.release(msg.lease); },
    [this](PsApplyMsg& msg) { return on_apply(msg); },
    [this](PsStageMsg& msg) { return on_stage(msg); },
    [this](const PsCommitMsg& msg) { return on_commit(msg); },
    [this](const PsAbortMsg& msg) { return on_abort(msg); },
    [this](const PsStatsMsg&) { return stats(); },
    [this](const PsGatherMsg& msg) { return on_gather(msg); },
  };
}

caf::error ParameterServerActor::make_error(Errc code, const std::string& text) const {
  return caf::make_error(code, "parameter server " + options_.name + ": " + text);
}

std::string ParameterServerActor::describe(const ShardKey& key) const {
  auto it = shards_.find(key);
  if (it == shards_.end() || it->second.name.empty())
    return to_string(key);
  return "variable '" + it->second.name + "' (" + to_string(key) + ")";
}

caf::result<void> ParameterServerActor::on_create(PsCreateMsg& msg) {
  if (!msg.initial.valid())
    return make_error(Errc::invalid_argument,
                      "cannot create " + to_string(msg.key) + " from an empty tensor; give it an initial value");
  if (shards_.count(msg.key) != 0)
    return make_error(Errc::invalid_argument, "cannot create " + describe(msg.key)
                                                + " twice; each shard key is created once per server");
  shards_.emplace(msg.key, Shard{std::move(msg.name), std::move(msg.initial)});
  return caf::unit;
}

caf::expected<ParameterServerActor::Shard*> ParameterServerActor::checked_target(const ShardUpdate& update,
                                                                                const char* context) {
  auto it = shards_.find(update.key);
  if (it == shards_.end())
    return make_error(Errc::not_found, std::string{context} + ": there is no " + to_string(update.key)
                                         + " on this server; create it first or send the update to the server "
                                           "that owns the shard");
  if (!known_op(update.op))
    return make_error(Errc::invalid_argument, std::string{context} + " on " + describe(update.key)
                                                + ": unknown update op "
                                                + std::to_string(static_cast<int>(update.op))
                                                + "; both ends must run the same troupe version");
  const Tensor& value = it->second.value;
  const std::string what = std::string{context} + " " + to_string(update.op) + " on " + describe(update.key);
  if (!update.value.valid())
    return make_error(Errc::invalid_argument, what + ": the update's tensor is empty");
  if (update.value.dtype() != value.dtype())
    return make_error(Errc::dtype_mismatch, what + ": the update is " + describe_tensor(update.value)
                                              + " but the shard is " + describe_tensor(value) + "; cast it to "
                                              + std::string{troupe::name(value.dtype())} + " first");
  if (update.value.shape() != value.shape())
    return make_error(Errc::shape_mismatch, what + ": the update is " + describe_tensor(update.value)
                                              + " but the shard is " + describe_tensor(value)
                                              + "; send one tensor of the shard's shape per shard");
  if (update.op == UpdateOp::APPLY_SGD) {
    if (!is_floating(value.dtype()))
      return make_error(Errc::invalid_argument,
                        what + ": SGD needs a floating-point variable, not " + describe_tensor(value));
    if (update.hyper.size() != 1 || !std::isfinite(update.hyper[0]))
      return make_error(Errc::invalid_argument,
                        what + ": SGD takes exactly one finite hyperparameter, the learning rate");
  }
  if (is_optimizer_op(update.op)) {
    if (update.key.slot != 0)
      return make_error(Errc::invalid_argument, what + ": an optimizer update targets the variable (slot 0), "
                                                       "which updates its slots with it");
    if (value.dtype() != DType::float32 && value.dtype() != DType::float64)
      return make_error(Errc::invalid_argument, what + ": " + to_string(update.op)
                                                  + " runs on float32 or float64 variables, not "
                                                  + describe_tensor(value) + "; keep this variable in float32");
    if (auto wrong = check_optimizer_hyper(update.op, update.hyper); !wrong.empty())
      return make_error(Errc::invalid_argument, what + ": " + to_string(update.op) + " " + wrong);
    for (int32_t slot : slots_of(update.op)) {
      auto held = shards_.find(slot_key(update.key, slot));
      if (held == shards_.end())
        continue; // created at the first applied update
      if (auto wrong = check_slot(slot, held->second.value, value); !wrong.empty())
        return make_error(Errc::invalid_argument, what + ": " + wrong);
    }
  }
  return &it->second;
}

caf::error ParameterServerActor::refuse_if_resolved(const AttemptId& id, const char* what) const {
  if (id.function == 0 || id.attempt == 0)
    return make_error(Errc::invalid_argument, std::string{what} + " for " + to_string(id)
                                                + ": function ids and attempts start at 1");
  if (id.function < resolved_below_)
    return make_error(Errc::failed_precondition,
                      std::string{what} + " for " + to_string(id) + " is refused: every function below "
                        + std::to_string(resolved_below_) + " is already resolved");
  auto it = functions_.find(id.function);
  if (it == functions_.end())
    return caf::none;
  const FunctionRecord& record = it->second;
  if (record.committed_attempt && *record.committed_attempt != id.attempt)
    return make_error(Errc::failed_precondition,
                      std::string{what} + " for " + to_string(id) + " is refused: function "
                        + std::to_string(id.function) + " was committed by attempt "
                        + std::to_string(*record.committed_attempt) + ", so its effects already took place");
  if (record.aborted_attempts.count(id.attempt) != 0)
    return make_error(Errc::failed_precondition, std::string{what} + " for " + to_string(id)
                                                   + " is refused: that attempt was aborted");
  return caf::none;
}

caf::result<PsReadReply> ParameterServerActor::on_read(const PsReadMsg& msg) {
  auto value = read_value(msg);
  if (!value)
    return std::move(value.error());
  PsReadReply reply;
  // A reader on this host that allows it reads a large value out of this
  // process's memory; the value is held until it says it is done (or, if it
  // never does, twice its request's timeout).
  if (msg.cross_memory && current_sender() && CrossMemoryPeers::pid_of(current_sender()->node())) {
    reply.remote = cross_memory_of(*value);
    if (reply.remote.bytes > 0) {
      const auto loan = leases_.hold(*value);
      reply.remote.lease = loan.token;
      reply.remote.slot_address = loan.slot_address;
    }
    if (reply.remote.lease != 0) {
      delayed_send(this, 2 * ps_request_timeout(), PsReleaseMsg{reply.remote.lease});
      return reply;
    }
    reply.remote = {};
  }
  reply.value = std::move(*value);
  return reply;
}

caf::error ParameterServerActor::resolve_remote(ShardUpdate& update, CrossMemoryTensor& remote, const char* context) {
  if (remote.bytes == 0)
    return caf::none;
  const auto pid = current_sender() ? CrossMemoryPeers::pid_of(current_sender()->node()) : std::nullopt;
  if (!pid)
    return make_error(Errc::invalid_argument, std::string{context} + " update of " + describe(update.key)
                                                + " points into another process's memory, which this server may "
                                                  "not read (only tasks on its host that passed the handshake)");
  auto shard = shards_.find(update.key);
  if (shard == shards_.end())
    return make_error(Errc::not_found, std::string{context} + ": there is no " + to_string(update.key)
                                         + " on this server to update");
  // A mismatch is named as checked_target names one (the update's value is
  // not read at all then).
  const Tensor& like = shard->second.value;
  const std::string what = std::string{context} + " " + to_string(update.op) + " on " + describe(update.key);
  const std::string lent = (remote.dtype <= static_cast<uint8_t>(last_dtype)
                              ? std::string{troupe::name(static_cast<DType>(remote.dtype))}
                              : "dtype code " + std::to_string(remote.dtype))
                           + " " + Shape{remote.dims}.to_string();
  if (remote.dtype != static_cast<uint8_t>(like.dtype()))
    return make_error(Errc::dtype_mismatch, what + ": the update is " + lent + " but the shard is "
                                              + describe_tensor(like) + "; cast it to "
                                              + std::string{troupe::name(like.dtype())} + " first");
  if (remote.dims != like.shape().dims())
    return make_error(Errc::shape_mismatch, what + ": the update is " + lent + " but the shard is "
                                              + describe_tensor(like)
                                              + "; send one tensor of the shard's shape per shard");
  Tensor value;
  if (auto why = take_cross_memory(*pid, remote, &like, value); !why.empty())
    return make_error(Errc::data_loss, std::string{context} + " update of " + describe(update.key)
                                         + ": its value could not be read from the sender's memory: " + why);
  update.value = std::move(value);
  remote = {};
  return caf::none;
}

caf::expected<Tensor> ParameterServerActor::read_value(const PsReadMsg& msg) {
  auto it = shards_.find(msg.key);
  auto missing = [&] {
    return make_error(Errc::not_found, "read: there is no " + to_string(msg.key)
                                         + " on this server (an optimizer slot exists once an update "
                                           "that uses it was applied)");
  };
  if (it == shards_.end() && msg.attempt.function == 0)
    return missing();
  if (msg.attempt.function == 0)
    return it->second.value;
  if (auto err = refuse_if_resolved(msg.attempt, "read"))
    return err;
  if (it == shards_.end() && msg.key.slot == 0)
    return missing();
  // Read-your-writes: the committed value with this attempt's own staged
  // updates to the key, computed on a copy; other attempts stay invisible.
  // A slot its staged optimizer updates would create is read as they would leave it.
  auto committed = [&]() -> caf::expected<Tensor> {
    if (it == shards_.end())
      return missing();
    return it->second.value;
  };
  auto fn = functions_.find(msg.attempt.function);
  if (fn == functions_.end() || fn->second.committed_attempt)
    return committed(); // nothing staged, or staged updates are already in the committed value
  auto staged = fn->second.staged.find(msg.attempt.attempt);
  if (staged == fn->second.staged.end())
    return committed();
  std::map<ShardKey, Tensor> next;
  try {
    for (const auto& update : staged->second)
      if (update.key.variable == msg.key.variable && update.key.shard == msg.key.shard)
        for (auto& [key, value] : updated_values([&](const ShardKey& k) { return current_value(next, k); }, update))
          next[key] = std::move(value);
  } catch (const std::exception& e) {
    return make_error(Errc::internal, "read of " + describe(msg.key) + " for " + to_string(msg.attempt)
                                        + ": applying its staged updates failed: " + e.what());
  }
  if (auto found = next.find(msg.key); found != next.end())
    return found->second;
  return committed();
}

caf::result<void> ParameterServerActor::on_apply(PsApplyMsg& msg) {
  if (auto err = resolve_remote(msg.update, msg.remote, "immediate"))
    return err;
  auto target = checked_target(msg.update, "immediate");
  if (!target)
    return std::move(target.error());
  try {
    // Every new value first (the variable and its slots), then install them.
    std::map<ShardKey, Tensor> next;
    for (auto& [key, value] :
         updated_values([&](const ShardKey& k) { return current_value(next, k); }, msg.update))
      next[key] = std::move(value);
    for (auto& [key, value] : next)
      install(key, std::move(value));
  } catch (const std::exception& e) {
    return make_error(Errc::invalid_argument, "immediate " + std::string{to_string(msg.update.op)} + " on "
                                                + describe(msg.update.key) + " failed: " + e.what());
  }
  return caf::unit;
}

caf::result<void> ParameterServerActor::on_stage(PsStageMsg& msg) {
  if (auto err = refuse_if_resolved(msg.attempt, "staged update"))
    return err;
  auto record = functions_.find(msg.attempt.function);
  if (record != functions_.end() && record->second.committed_attempt)
    return make_error(Errc::failed_precondition, "staged update for " + to_string(msg.attempt)
                                                   + " is refused: that attempt has already committed");
  if (auto err = resolve_remote(msg.update, msg.remote, "staged"))
    return err;
  auto target = checked_target(msg.update, "staged");
  if (!target)
    return std::move(target.error());
  auto& staged = functions_[msg.attempt.function].staged[msg.attempt.attempt];
  if (msg.sequence < staged.size())
    return caf::unit; // a duplicate of a stage that is already held
  if (msg.sequence > staged.size())
    return make_error(Errc::data_loss, "staged update " + std::to_string(msg.sequence) + " for "
                                         + to_string(msg.attempt) + " arrived but only "
                                         + std::to_string(staged.size())
                                         + " came before it; stage each update after the previous one is "
                                           "acknowledged");
  staged.push_back(std::move(msg.update));
  return caf::unit;
}

caf::result<PsCommitReply> ParameterServerActor::on_commit(const PsCommitMsg& msg) {
  // The watermark comes first: it never covers the function being committed
  // (the coordinator resolves it only after this reply), and applying it
  // before the checks keeps the records bounded even when the commit fails.
  if (msg.resolved_below > msg.attempt.function)
    return make_error(Errc::invalid_argument, "commit of " + to_string(msg.attempt) + " says every function below "
                                                + std::to_string(msg.resolved_below)
                                                + " is resolved, which includes this one");
  advance_watermark(msg.resolved_below);
  if (auto err = refuse_if_resolved(msg.attempt, "commit"))
    return err;
  auto& record = functions_[msg.attempt.function];
  if (record.committed_attempt) // the same attempt: refuse_if_resolved refused the others
    return PsCommitReply{true, 0};
  std::vector<ShardUpdate> updates;
  if (auto staged = record.staged.find(msg.attempt.attempt); staged != record.staged.end())
    updates = std::move(staged->second);
  if (updates.size() != msg.staged_updates) {
    record.staged[msg.attempt.attempt] = std::move(updates);
    return make_error(Errc::data_loss, "commit of " + to_string(msg.attempt) + " expects "
                                         + std::to_string(msg.staged_updates) + " staged updates here but "
                                         + std::to_string(record.staged[msg.attempt.attempt].size())
                                         + " arrived; nothing was applied");
  }
  // All or nothing: compute every new value first, then install them.
  std::map<ShardKey, Tensor> next;
  try {
    for (const auto& update : updates)
      for (auto& [key, value] : updated_values([&](const ShardKey& k) { return current_value(next, k); }, update))
        next[key] = std::move(value);
  } catch (const std::exception& e) {
    record.staged[msg.attempt.attempt] = std::move(updates);
    return make_error(Errc::internal, "commit of " + to_string(msg.attempt) + " failed, nothing was applied: "
                                        + e.what());
  }
  for (auto& [key, value] : next)
    install(key, std::move(value));
  // Committed: no other attempt of this function may ever apply here.
  record.committed_attempt = msg.attempt.attempt;
  record.staged.clear();
  record.aborted_attempts.clear();
  return PsCommitReply{false, static_cast<uint32_t>(updates.size())};
}

caf::result<uint32_t> ParameterServerActor::on_abort(const PsAbortMsg& msg) {
  if (msg.resolved_below > msg.attempt.function)
    return make_error(Errc::invalid_argument, "abort of " + to_string(msg.attempt) + " says every function below "
                                                + std::to_string(msg.resolved_below)
                                                + " is resolved, which includes this one");
  advance_watermark(msg.resolved_below);
  if (msg.attempt.function == 0 || msg.attempt.attempt == 0)
    return make_error(Errc::invalid_argument, "abort of " + to_string(msg.attempt)
                                                + ": function ids and attempts start at 1");
  if (msg.attempt.function < resolved_below_)
    return uint32_t{0}; // forgotten: nothing of it is held
  auto& record = functions_[msg.attempt.function];
  if (record.committed_attempt == msg.attempt.attempt)
    return make_error(Errc::failed_precondition, "abort of " + to_string(msg.attempt)
                                                   + " is refused: that attempt has already committed");
  uint32_t discarded = 0;
  if (auto staged = record.staged.find(msg.attempt.attempt); staged != record.staged.end()) {
    discarded = static_cast<uint32_t>(staged->second.size());
    record.staged.erase(staged);
  }
  // A committed function refuses every other attempt already; otherwise
  // remember the abort so that the attempt's late stages are refused.
  if (!record.committed_attempt)
    record.aborted_attempts.insert(msg.attempt.attempt);
  return discarded;
}

Tensor ParameterServerActor::current_value(const std::map<ShardKey, Tensor>& pending, const ShardKey& key) const {
  if (auto it = pending.find(key); it != pending.end())
    return it->second;
  if (auto it = shards_.find(key); it != shards_.end())
    return it->second.value;
  return Tensor{};
}

void ParameterServerActor::install(const ShardKey& key, Tensor value) {
  if (auto it = shards_.find(key); it != shards_.end()) {
    it->second.value = std::move(value);
    return;
  }
  auto variable = shards_.find(slot_key(key, 0));
  shards_.emplace(key, Shard{variable != shards_.end() ? variable->second.name : std::string{}, std::move(value)});
}

void ParameterServerActor::advance_watermark(uint64_t resolved_below) {
  if (resolved_below <= resolved_below_)
    return;
  resolved_below_ = resolved_below;
  std::erase_if(functions_, [&](const auto& entry) { return entry.first < resolved_below_; });
}

caf::result<Tensor> ParameterServerActor::on_gather(const PsGatherMsg& msg) {
  // The same value a read with this attempt sees (read-your-writes included).
  auto source = read_value(PsReadMsg{msg.key, msg.attempt, false});
  if (!source)
    return std::move(source.error());
  const Tensor value = std::move(*source);
  const std::string what = "gather from " + describe(msg.key);
  if (!msg.rows.valid() || msg.rows.dtype() != DType::int64 || msg.rows.rank() != 1)
    return make_error(Errc::invalid_argument, what + ": the rows must be an int64 vector, not "
                                                + describe_tensor(msg.rows));
  if (value.rank() == 0)
    return make_error(Errc::invalid_argument, what + ": a scalar shard has no rows; read it instead");
  const int64_t row_count = value.shape().dims()[0];
  std::vector<Tensor> rows;
  rows.reserve(static_cast<std::size_t>(msg.rows.num_elements()));
  const int64_t* ids = msg.rows.data<int64_t>();
  for (int64_t i = 0; i < msg.rows.num_elements(); ++i) {
    if (ids[i] < 0 || ids[i] >= row_count)
      return make_error(Errc::out_of_range, what + ": row " + std::to_string(ids[i]) + " is outside the shard's "
                                              + std::to_string(row_count) + " rows");
    rows.push_back(value.slice(ids[i], ids[i] + 1));
  }
  try {
    if (rows.empty())
      return value.slice(0, 0);
    return concat(rows, 0);
  } catch (const std::exception& e) {
    return make_error(Errc::internal, what + " failed: " + e.what());
  }
}

PsStats ParameterServerActor::stats() const {
  PsStats out;
  out.shards = shards_.size();
  out.function_records = functions_.size();
  for (const auto& [id, record] : functions_)
    for (const auto& [attempt, updates] : record.staged)
      out.staged_updates += updates.size();
  out.resolved_below = resolved_below_;
  out.read_leases = leases_.size();
  return out;
}

} // namespace troupe::internal
