// Slurm's compressed host lists and tasks-per-node strings
// (SLURM_JOB_NODELIST, SLURM_STEP_TASKS_PER_NODE): whatever the environment
// holds is expanded or refused with Error, never a crash or a runaway
// expansion.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <troupe/core/errors.hpp>
#include <troupe/net/hostlist.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void) troupe::expand_hostlist(text);
  } catch (const troupe::Error&) {
  }
  try {
    (void) troupe::expand_tasks_per_node(text);
  } catch (const troupe::Error&) {
  }
  return 0;
}
