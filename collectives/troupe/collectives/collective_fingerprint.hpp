#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <troupe/collectives/fwd.hpp>
#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>

namespace troupe {

class Tensor;

/// The kinds of collective a replica can issue. `broadcast` sends the first
/// replica's tensors to every replica (multi-worker variable initialisation).
/// On the wire as these numbers (docs/protocol.md): add new kinds at the end.
enum class CollectiveKind : unsigned char { all_reduce, all_gather, merge_call, broadcast, reduce_scatter };

/// Whether `kind` reduces every participant's values into one result (an
/// all_reduce, or a reduce_scatter, whose participants then keep a block each).
[[nodiscard]] constexpr bool reduces(CollectiveKind kind) noexcept {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter;
}

/// "all_reduce", "all_gather", "merge_call", "broadcast", "reduce_scatter".
[[nodiscard]] std::string_view name(CollectiveKind kind) noexcept;

/// What one participant asked for: the operation, its reduce op or axis, and
/// the dtype and shape of every tensor. Participants of one collective must
/// present compatible fingerprints (equal for all_reduce; equal except along
/// `axis` for all_gather).
struct CollectiveFingerprint {
  CollectiveKind kind = CollectiveKind::all_reduce;
  ReduceOp op = ReduceOp::SUM;
  int axis = 0;
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;

  /// The fingerprint of `kind` over `tensors`.
  [[nodiscard]] static CollectiveFingerprint of(CollectiveKind kind, ReduceOp op, int axis,
                                                const std::vector<Tensor>& tensors);

  /// "all_reduce(SUM) of float32 (3,)", "all_gather(axis=0) of [int32 (3,), int32 (2, 2)]".
  [[nodiscard]] std::string describe() const;

  /// A compact binary form for the wire (announce frames between workers).
  [[nodiscard]] std::vector<std::byte> to_bytes() const;
  /// Parses to_bytes(); Error(data_loss) when the bytes are not one.
  [[nodiscard]] static CollectiveFingerprint from_bytes(std::span<const std::byte> bytes);

  friend bool operator==(const CollectiveFingerprint&, const CollectiveFingerprint&) = default;
};

/// Checks that every participant's fingerprint is compatible with the first's.
/// Returns an empty optional when they are, else a message that lists what
/// each participant sent ("replica 0 sent ..., replica 1 sent ...").
[[nodiscard]] std::optional<std::string>
check_fingerprints(const std::vector<CollectiveFingerprint>& fingerprints);

/// check_fingerprints with the participants' names ("task worker:1") in place
/// of "replica i".
[[nodiscard]] std::optional<std::string>
check_fingerprints(const std::vector<CollectiveFingerprint>& fingerprints, const std::vector<std::string>& names);

} // namespace troupe
