#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace troupe {

/// Expands a Slurm hostlist (SLURM_STEP_NODELIST, SLURM_JOB_NODELIST) into
/// host names, in order and without deduplication, as TensorFlow's
/// expand_hostlist: "node[01-03,07],gpu5,a[1-2]b" gives node01, node02,
/// node03, node07, gpu5, a1b, a2b.
///
/// A range keeps the zero padding of its first number ("[08-10]" gives 08, 09,
/// 10). Several bracket groups in one name expand like Slurm, first group
/// outermost ("r[1-2]n[1-2]" gives r1n1, r1n2, r2n1, r2n2). Malformed input
/// (empty names, unbalanced or nested brackets, non-numeric or descending
/// ranges, more than a million hosts) is Error(invalid_argument) quoting the
/// bad part.
[[nodiscard]] std::vector<std::string> expand_hostlist(std::string_view hostlist);

/// Expands Slurm's tasks-per-node list (SLURM_STEP_TASKS_PER_NODE,
/// SLURM_TASKS_PER_NODE) as TensorFlow's expand_tasks_per_node:
/// "2(x3),1" gives 2, 2, 2, 1. Counts must be positive; anything else is
/// Error(invalid_argument) quoting the bad part.
[[nodiscard]] std::vector<int> expand_tasks_per_node(std::string_view tasks_per_node);

} // namespace troupe
