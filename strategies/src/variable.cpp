#include <troupe/strategies/variable.hpp>

#include <cstring>
#include <ostream>

#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>
#include <troupe/strategies/variable_state.hpp>

namespace troupe {

namespace internal {

// How a variable write in replica context reaches ReplicaContext's broadcast.
class VariableReplicaWrite {
public:
  /// Global replica 0's `value` (the chief's first replica), on every replica of every worker.
  static Tensor first_replica_value(ReplicaContext& context, const Tensor& value) {
    return context.broadcast_from_first_replica({value}).front();
  }
};

} // namespace internal

std::string_view name(VariableSynchronization synchronization) noexcept {
  switch (synchronization) {
    case VariableSynchronization::AUTO: return "AUTO";
    case VariableSynchronization::NONE: return "NONE";
    case VariableSynchronization::ON_WRITE: return "ON_WRITE";
    case VariableSynchronization::ON_READ: return "ON_READ";
  }
  return "?";
}

std::string_view name(VariableAggregation aggregation) noexcept {
  switch (aggregation) {
    case VariableAggregation::NONE: return "NONE";
    case VariableAggregation::SUM: return "SUM";
    case VariableAggregation::MEAN: return "MEAN";
    case VariableAggregation::ONLY_FIRST_REPLICA: return "ONLY_FIRST_REPLICA";
  }
  return "?";
}

namespace {

using detail::VariableState;

enum class UpdateKind { assign, add, subtract };

const char* method_name(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::assign: return "assign";
    case UpdateKind::add: return "assign_add";
    case UpdateKind::subtract: return "assign_sub";
  }
  return "?";
}

Tensor combine(UpdateKind kind, const Tensor& current, const Tensor& value) {
  switch (kind) {
    case UpdateKind::assign: return value;
    case UpdateKind::add: return add(current, value);
    case UpdateKind::subtract: return subtract(current, value);
  }
  return value;
}

std::string quoted_name(const VariableState& s) {
  return "'" + s.name + "'";
}

// TensorFlow's values_util.aggregation_error_msg, for MirroredVariable.
constexpr const char* aggregation_error =
  "You must specify an aggregation method to update a MirroredVariable in Replica Context. You can do "
  "so by passing an explicit value for argument `aggregation` to tf.Variable(..).";

// The global replica that local copy `i` belongs to (workers hold equal shares).
int global_replica(const VariableState& s, std::size_t i) {
  return s.strategy->extended().worker_index() * static_cast<int>(s.copies.size()) + static_cast<int>(i);
}

void set_copy(VariableState& s, std::size_t i, const Tensor& value) {
  s.copies[i] = value.to(s.devices[i]);
}

void set_every_copy(VariableState& s, const Tensor& value) {
  for (std::size_t i = 0; i < s.copies.size(); ++i)
    set_copy(s, i, value);
}

// SplitMix64's finaliser.
uint64_t mix64(uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A 128-bit hash of a value's dtype, shape and bytes, as an int64 row [1, 2]
// that an all_gather can stack: two values with the same fingerprint are
// equal bit for bit, short of a 2^-128 accident.
Tensor value_fingerprint(const Tensor& value) {
  uint64_t lanes[2] = {0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL};
  auto absorb = [&](uint64_t word) {
    lanes[0] = mix64((lanes[0] ^ word) * 0x9E3779B97F4A7C15ULL);
    lanes[1] = mix64((lanes[1] + word) ^ 0xD1B54A32D192ED03ULL);
  };
  absorb(static_cast<uint64_t>(value.dtype()));
  absorb(static_cast<uint64_t>(value.shape().rank()));
  for (auto d : value.shape().dims())
    absorb(static_cast<uint64_t>(d));
  const std::size_t n = value.nbytes();
  absorb(n);
  const std::byte* bytes = value.raw_data();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    absorb(word);
  }
  if (i < n) {
    uint64_t tail = 0;
    std::memcpy(&tail, bytes + i, n - i);
    absorb(tail);
  }
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(lanes[0]), static_cast<int64_t>(lanes[1])})
    .reshape(Shape{1, 2});
}

std::string replica_range(int first, int count) {
  return count == 1 ? "replica " + std::to_string(first)
                    : "replicas " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

// An aggregation NONE write must pass the same value on every replica of
// every worker: one all_gather of each replica's fingerprint lets every
// replica of every worker compare them and fail alike.
void require_same_on_every_worker(const VariableState& s, ReplicaContext& ctx, const char* method,
                                  const Tensor& value) {
  const Tensor all = ctx.all_gather(value_fingerprint(value), 0);
  const auto rows = all.to_vector<int64_t>();
  const int local = static_cast<int>(s.copies.size());
  const int workers = static_cast<int>(rows.size() / 2) / local;
  auto row_of_worker = [&](int w) { return std::pair{rows[2 * w * local], rows[2 * w * local + 1]}; };
  std::string differing;
  for (int w = 1; w < workers; ++w)
    if (row_of_worker(w) != row_of_worker(0))
      differing += (differing.empty() ? "" : ", ") + std::string("worker ") + std::to_string(w) + " ("
                   + replica_range(w * local, local) + ")";
  if (differing.empty())
    return;
  fail(Errc::invalid_argument,
       std::string(method) + ": " + aggregation_error + " (variable " + quoted_name(s)
         + " has aggregation NONE, and the workers passed different values: worker 0 ("
         + replica_range(0, local) + ") passed one value, " + differing
         + " another, so the workers' copies would drift apart: create it with VariableOptions.aggregation "
           "SUM, MEAN or ONLY_FIRST_REPLICA, or update it in cross-replica context, e.g. from merge_call's "
           "function)");
}

// An ON_WRITE write in replica context: aggregate the replicas' values with
// one collective, then every replica applies the same update to its copy.
void replica_update_on_write(VariableState& s, ReplicaContext& ctx, int local, UpdateKind kind,
                             const Tensor& value) {
  const char* method = method_name(kind);
  Tensor aggregated;
  switch (s.aggregation) {
    case VariableAggregation::SUM:
      aggregated = ctx.all_reduce(ReduceOp::SUM, value);
      break;
    case VariableAggregation::MEAN:
      // TensorFlow's rule: an integer mean would silently truncate.
      if (!is_floating(s.dtype))
        fail(Errc::invalid_argument,
             std::string(method) + ": Cannot update non-float variables with tf.VariableAggregation.MEAN "
               + "aggregation in replica context. Either change the variable dtype to float or update it in "
               + "cross-replica context. (variable " + quoted_name(s) + " has dtype "
               + std::string(name(s.dtype)) + ")");
      aggregated = ctx.all_reduce(ReduceOp::MEAN, value);
      break;
    case VariableAggregation::ONLY_FIRST_REPLICA:
      if (s.strategy->extended().num_workers() > 1) {
        // "The value from the first replica": global replica 0's, on every
        // worker, so the workers' copies cannot drift apart.
        aggregated = internal::VariableReplicaWrite::first_replica_value(ctx, value);
        break;
      }
      [[fallthrough]];
    case VariableAggregation::NONE: {
      // One merge_call takes replica 0's value, bit for bit and for every
      // dtype (an all_reduce of replica 0's value and zeros would lose -0.0
      // and refuse bool). NONE also checks that nothing would be lost.
      const bool only_first = s.aggregation == VariableAggregation::ONLY_FIRST_REPLICA;
      const std::string variable = quoted_name(s);
      aggregated = ctx.merge_call(
        [&](Strategy&, const PerReplica<Tensor>& values) -> Tensor {
          const auto& all = values.values();
          if (!only_first)
            for (std::size_t r = 1; r < all.size(); ++r)
              if (!array_equal(all[r], all[0]))
                fail(Errc::invalid_argument,
                     std::string(method) + ": " + aggregation_error + " (variable " + variable
                       + " has aggregation NONE, and replica 0 and replica " + std::to_string(r)
                       + " passed different values: create it with VariableOptions.aggregation SUM, MEAN "
                         "or ONLY_FIRST_REPLICA, or update it in cross-replica context, e.g. from "
                         "merge_call's function)");
          return all.front();
        },
        value);
      // merge_call sees this worker's replicas only: the workers compare too.
      if (!only_first && s.strategy->extended().num_workers() > 1)
        require_same_on_every_worker(s, ctx, method, aggregated);
      break;
    }
  }
  set_copy(s, static_cast<std::size_t>(local), combine(kind, s.copies[static_cast<std::size_t>(local)], aggregated));
}

// TensorFlow keeps the sum of an ON_READ SUM variable across an assign in
// cross-replica context by dividing the value over the replicas. Integers are
// split exactly: replica 0 takes what the truncating division leaves.
void split_over_replicas(VariableState& s, const Tensor& value) {
  const int n = s.strategy->num_replicas_in_sync();
  if (n == 1) {
    set_every_copy(s, value);
    return;
  }
  const Tensor share = divide(value, scalar_like(n, s.dtype));
  const Tensor first = is_floating(s.dtype) ? share : subtract(value, multiply(share, scalar_like(n - 1, s.dtype)));
  for (std::size_t i = 0; i < s.copies.size(); ++i)
    set_copy(s, i, global_replica(s, i) == 0 ? first : share);
}

void cross_replica_update(VariableState& s, UpdateKind kind, const Tensor& value) {
  if (s.synchronization != VariableSynchronization::ON_READ) {
    // The copies are equal: update one, share the result (no copies).
    set_every_copy(s, combine(kind, s.copies.front(), value));
    return;
  }
  if (s.aggregation == VariableAggregation::SUM) {
    if (kind == UpdateKind::assign) {
      split_over_replicas(s, value);
    } else {
      // Adding to replica 0's copy alone adds exactly `value` to the sum.
      for (std::size_t i = 0; i < s.copies.size(); ++i)
        if (global_replica(s, i) == 0)
          set_copy(s, i, combine(kind, s.copies[i], value));
    }
    return;
  }
  for (std::size_t i = 0; i < s.copies.size(); ++i)
    set_copy(s, i, combine(kind, s.copies[i], value));
}

void update(VariableState& s, UpdateKind kind, const Tensor& value) {
  const char* method = method_name(kind);
  internal::check_value(s, value, method);
  auto* ctx = internal::variable_context(s, method);
  if (ctx == nullptr) {
    cross_replica_update(s, kind, value);
    return;
  }
  const int local = internal::local_replica(s, *ctx);
  // ON_READ copies are per replica; NONE means a single copy: no aggregation.
  if (s.synchronization != VariableSynchronization::ON_WRITE) {
    set_copy(s, static_cast<std::size_t>(local), combine(kind, s.copies[static_cast<std::size_t>(local)], value));
    return;
  }
  replica_update_on_write(s, *ctx, local, kind, value);
}

} // namespace

// -- Variable ---------------------------------------------------------------------

const std::string& Variable::name() const {
  return internal::VariableAccess::state(*this, "name").name;
}

DType Variable::dtype() const {
  return internal::VariableAccess::state(*this, "dtype").dtype;
}

const Shape& Variable::shape() const {
  return internal::VariableAccess::state(*this, "shape").shape;
}

VariableSynchronization Variable::synchronization() const {
  return internal::VariableAccess::state(*this, "synchronization").synchronization;
}

VariableAggregation Variable::aggregation() const {
  return internal::VariableAccess::state(*this, "aggregation").aggregation;
}

bool Variable::trainable() const {
  return internal::VariableAccess::state(*this, "trainable").trainable;
}

Strategy& Variable::distribute_strategy() const {
  return *internal::VariableAccess::state(*this, "distribute_strategy").strategy;
}

std::vector<std::string> Variable::devices() const {
  std::vector<std::string> out;
  for (const auto& d : internal::VariableAccess::state(*this, "devices").devices)
    out.push_back(d.to_string());
  return out;
}

int Variable::num_copies() const {
  return static_cast<int>(internal::VariableAccess::state(*this, "num_copies").copies.size());
}

Tensor Variable::read_value() const {
  const auto& s = internal::VariableAccess::state(*this, "read_value");
  if (auto* ctx = internal::variable_context(s, "read_value"))
    return s.copies[static_cast<std::size_t>(internal::local_replica(s, *ctx))];
  return internal::cross_replica_value(s, "read_value");
}

Tensor Variable::value(int replica) const {
  const auto& s = internal::VariableAccess::state(*this, "value");
  if (replica < 0 || static_cast<std::size_t>(replica) >= s.copies.size())
    fail(Errc::out_of_range, "value: replica " + std::to_string(replica) + " is out of range: variable '" + s.name
                               + "' has " + std::to_string(s.copies.size()) + " copies");
  return s.copies[static_cast<std::size_t>(replica)];
}

Variable& Variable::assign(const Tensor& value) {
  update(internal::VariableAccess::state(*this, "assign"), UpdateKind::assign, value);
  return *this;
}

Variable& Variable::assign_add(const Tensor& value) {
  update(internal::VariableAccess::state(*this, "assign_add"), UpdateKind::add, value);
  return *this;
}

Variable& Variable::assign_sub(const Tensor& value) {
  update(internal::VariableAccess::state(*this, "assign_sub"), UpdateKind::subtract, value);
  return *this;
}

std::ostream& operator<<(std::ostream& out, const Variable& variable) {
  if (!variable.valid())
    return out << "<Variable (empty)>";
  const auto& s = internal::VariableAccess::state(variable, "operator<<");
  auto copy = [&](std::size_t i) {
    out << "<Variable '" << s.name << (i > 0 ? "/replica_" + std::to_string(i) : std::string()) << ":0' shape="
        << s.shape << " dtype=" << name(s.dtype) << ", value=" << format_values(s.copies[i]) << ">";
  };
  if (s.copies.size() == 1) {
    copy(0);
    return out;
  }
  out << (s.synchronization == VariableSynchronization::ON_READ ? "SyncOnReadVariable" : "MirroredVariable")
      << ":{\n";
  for (std::size_t i = 0; i < s.copies.size(); ++i) {
    out << "  " << i << ": ";
    copy(i);
    out << (i + 1 < s.copies.size() ? ",\n" : "\n");
  }
  return out << "}";
}

// -- internal helpers ---------------------------------------------------------------

namespace internal {

detail::VariableState& VariableAccess::state(const Variable& variable, const char* method) {
  if (!variable.state_)
    fail(Errc::invalid_argument, std::string(method) + ": the Variable is empty (default-constructed); "
                                                       "create variables with strategy.create_variable()");
  return *variable.state_;
}

std::shared_ptr<detail::VariableState> new_variable_state(Strategy& strategy, const Tensor& initial,
                                                          const VariableOptions& options,
                                                          std::vector<DeviceSpec> devices) {
  const std::string label = options.name.empty() ? "Variable" : options.name;
  if (!initial.valid())
    fail(Errc::invalid_argument, "create_variable: the initial value of variable '" + label
                                   + "' is an empty Tensor");
  auto sync = options.synchronization;
  if (sync == VariableSynchronization::AUTO)
    sync = VariableSynchronization::ON_WRITE; // TensorFlow: "`AUTO` synchronization defaults to `ON_WRITE`"
  if (sync == VariableSynchronization::NONE && strategy.num_replicas_in_sync() > 1)
    fail(Errc::invalid_argument,
         "create_variable: `NONE` variable synchronization mode is not supported with tf.distribute strategy. "
         "Please change the `synchronization` for variable: "
           + label + " (" + strategy.describe() + " has " + std::to_string(strategy.num_replicas_in_sync())
           + " replicas; use ON_WRITE or ON_READ)");
  const bool trainable = options.trainable.value_or(sync != VariableSynchronization::ON_READ);
  if (sync == VariableSynchronization::ON_READ && trainable)
    fail(Errc::invalid_argument,
         "create_variable: Synchronization value can be set to VariableSynchronization.ON_READ only for "
         "non-trainable variables. You have specified trainable=True and "
         "synchronization=VariableSynchronization.ON_READ. (variable '"
           + label + "': leave VariableOptions.trainable unset or set it to false)");
  if (devices.size() != strategy.extended().worker_devices().size())
    fail(Errc::internal, "create_variable: " + std::to_string(devices.size()) + " variable devices for "
                           + std::to_string(strategy.extended().worker_devices().size()) + " local replicas");
  auto state = std::make_shared<detail::VariableState>();
  state->dtype = initial.dtype();
  state->shape = initial.shape();
  state->synchronization = sync;
  state->aggregation = options.aggregation;
  state->trainable = trainable;
  state->strategy = &strategy;
  for (const auto& device : devices) {
    // Host copies start as handles to the initial value's buffer; a GPU's
    // copy lives in its memory.
    state->copies.push_back(initial.to(device));
  }
  state->devices = std::move(devices);
  return state;
}

ReplicaContext* variable_context(const detail::VariableState& state, const char* method) {
  auto* frame = detail::current_context_frame();
  if (frame == nullptr)
    return nullptr; // TensorFlow enters the variable's strategy: its cross-replica context
  if (frame->strategy != state.strategy)
    fail(Errc::failed_precondition,
         std::string(method) + ": Mixing different tf.distribute.Strategy objects: " + frame->strategy->describe()
           + " is not " + state.strategy->describe() + " (variable '" + state.name
           + "' belongs to the latter; use it in that strategy's scope or in functions it runs)");
  return frame->replica;
}

int local_replica(const detail::VariableState& state, const ReplicaContext& context) {
  const int local = context.replica_id_in_sync_group()
                    - state.strategy->extended().worker_index() * static_cast<int>(state.copies.size());
  if (local < 0 || static_cast<std::size_t>(local) >= state.copies.size())
    fail(Errc::internal, "variable '" + state.name + "': replica "
                           + std::to_string(context.replica_id_in_sync_group()) + " has no local copy");
  return local;
}

void check_value(const detail::VariableState& state, const Tensor& value, const char* method) {
  if (!value.valid())
    fail(Errc::invalid_argument, std::string(method) + ": the value for variable '" + state.name
                                   + "' is an empty Tensor");
  if (value.dtype() != state.dtype)
    fail(Errc::dtype_mismatch, std::string(method) + ": Cannot update variable '" + state.name + "' of dtype "
                                 + std::string(name(state.dtype)) + " using a Tensor of dtype "
                                 + std::string(name(value.dtype())) + "; cast the value first");
  if (value.shape() != state.shape)
    fail(Errc::shape_mismatch, std::string(method) + ": Cannot update variable '" + state.name + "' with shape "
                                 + state.shape.to_string() + " using a Tensor with shape "
                                 + value.shape().to_string() + ", shapes must be equal.");
}

Tensor cross_replica_value(const detail::VariableState& state, const char* method) {
  if (state.synchronization != VariableSynchronization::ON_READ
      || state.aggregation == VariableAggregation::ONLY_FIRST_REPLICA)
    return state.copies.front();
  if (state.aggregation == VariableAggregation::NONE)
    fail(Errc::invalid_argument,
         std::string(method) + ": Could not convert from `tf.VariableAggregation` VariableAggregation.NONE to "
           + "`tf.distribute.ReduceOp` type (ON_READ variable '" + state.name
           + "' has aggregation NONE, so it has no cross-replica value: read it in replica context, or "
             "create it with aggregation SUM, MEAN or ONLY_FIRST_REPLICA)");
  const auto op = state.aggregation == VariableAggregation::SUM ? ReduceOp::SUM : ReduceOp::MEAN;
  return state.strategy->reduce(op, PerReplica<Tensor>(state.copies));
}

void cross_replica_assign(detail::VariableState& state, const Tensor& value) {
  cross_replica_update(state, UpdateKind::assign, value);
}

} // namespace internal

} // namespace troupe
