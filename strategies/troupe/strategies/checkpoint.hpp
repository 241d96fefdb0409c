#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <troupe/strategies/variable.hpp>

namespace troupe {

/// How Checkpoint::restore treats what the file and the Checkpoint do not share.
struct CheckpointRestoreOptions {
  /// False (default): a variable in the file that the Checkpoint does not
  /// have is Error(invalid_argument), as a checkpoint of a different model.
  /// True: such variables are ignored (TensorFlow's expect_partial()). A
  /// variable of the Checkpoint missing from the file is an error either way.
  bool expect_partial = false;
};

/// Saves and restores the values of variables (tf.train.Checkpoint's
/// write/read, for variables only). A variable is saved as its cross-replica
/// value (ON_READ copies aggregated), so a checkpoint does not depend on the
/// number of replicas: one saved from 4 replicas restores into 1 or 2.
///
/// File format (version 1; integers little-endian, tensor bytes in the host's
/// element layout, which is little-endian on every platform troupe builds for):
///
///     magic    8 bytes  "TROUPECK"
///     version  u32      1
///     count    u32      number of variables
///     count times, in name order:
///       name_len u32, name   name_len bytes (UTF-8)
///       dtype    u8         troupe::DType's value (stable: new dtypes are appended)
///       rank     u32, dims  rank × i64
///       nbytes   u64, bytes nbytes bytes (row-major elements)
///       crc      u32        CRC-32C of the bytes
///     trailer  u32      CRC-32C of every byte before it
///
/// save() writes "<path>.tmp", flushes it to disk and renames it to `path`,
/// so `path` always holds a complete checkpoint: the old one until the new
/// one is whole. restore() reads and checks the whole file before it changes
/// any variable, so a bad file changes nothing.
///
/// Both are called in cross-replica context (not inside strategy.run).
class Checkpoint {
public:
  /// Saves each variable under its name(); two variables of one name are
  /// Error(invalid_argument) (use the map form to name them).
  explicit Checkpoint(const std::vector<Variable>& variables);
  /// The same for a braced list: Checkpoint({w, b}).
  Checkpoint(std::initializer_list<Variable> variables) : Checkpoint(std::vector<Variable>(variables)) {}
  /// Saves each variable under its key.
  explicit Checkpoint(std::map<std::string, Variable> variables);

  /// Writes every variable's value to `path` (see the class comment). An I/O
  /// failure is Error(not_found) for a missing directory, else
  /// Error(failed_precondition), naming the file and the system's reason;
  /// `path` is left as it was.
  void save(const std::string& path) const;

  /// Sets every variable to its value in `path`, on every replica's copy.
  /// Errors, all before any variable changes: Error(not_found) when the file
  /// does not exist; Error(data_loss) naming the file and what is wrong when
  /// it is not a troupe checkpoint, has another version, is truncated or
  /// fails a checksum; Error(invalid_argument) "checkpoint from a different
  /// model" when a variable is missing from the file, has another dtype or
  /// shape there (both named), or the file holds variables this Checkpoint
  /// does not have (unless options.expect_partial).
  void restore(const std::string& path, const CheckpointRestoreOptions& options = {});

  /// The variables by the key they are saved under.
  [[nodiscard]] const std::map<std::string, Variable>& variables() const noexcept { return variables_; }

private:
  std::map<std::string, Variable> variables_;
};

} // namespace troupe
