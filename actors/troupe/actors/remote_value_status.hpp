#pragma once

namespace troupe {

/// Where a scheduled function stands (TF's RemoteValueStatus, with its
/// ABORTED split into the function's own failure and a cancellation).
enum class RemoteValueStatus {
  not_ready, ///< queued or running
  ready,     ///< ran; fetch returns its value
  failed,    ///< raised, or could not run (no worker alive); fetch raises that error
  cancelled, ///< never ran because an earlier function failed; fetch says so
};

} // namespace troupe
