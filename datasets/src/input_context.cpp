#include <troupe/datasets/input_context.hpp>

#include <string>

#include <troupe/core/errors.hpp>

namespace troupe {

InputContext::InputContext(int num_input_pipelines, int input_pipeline_id, int num_replicas_in_sync)
  : num_input_pipelines_(num_input_pipelines), input_pipeline_id_(input_pipeline_id),
    num_replicas_in_sync_(num_replicas_in_sync) {
  if (num_input_pipelines < 1 || input_pipeline_id < 0 || input_pipeline_id >= num_input_pipelines
      || num_replicas_in_sync < 1)
    fail(Errc::invalid_argument, "InputContext: input pipeline " + std::to_string(input_pipeline_id) + " of "
                                   + std::to_string(num_input_pipelines) + " with "
                                   + std::to_string(num_replicas_in_sync) + " replicas is not valid");
}

int64_t InputContext::get_per_replica_batch_size(int64_t global_batch_size) const {
  if (global_batch_size < 1 || global_batch_size % num_replicas_in_sync_ != 0)
    fail(Errc::invalid_argument,
         "The `global_batch_size` " + std::to_string(global_batch_size)
           + " is not divisible by `num_replicas_in_sync` " + std::to_string(num_replicas_in_sync_)
           + ": choose a global batch size that is a multiple of the number of replicas");
  return global_batch_size / num_replicas_in_sync_;
}

} // namespace troupe
