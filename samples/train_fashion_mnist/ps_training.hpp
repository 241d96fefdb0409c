#pragma once

#include "fashion_mnist_data.hpp"
#include "options.hpp"

namespace train {

/// Asynchronous training with ParameterServerStrategy (--strategy ps): a
/// LocalCluster of --workers workers and --ps parameter servers, the MLP's
/// weights sharded over the servers, each step a function scheduled on one
/// worker that reads the weights, computes the gradient on its batch (summed
/// over the worker's --replicas replicas) and has the servers apply the
/// optimizer step. Prints the same progress bar and metrics as the mirrored
/// job and writes metrics.csv; returns the exit status. With --checkpoint DIR
/// it saves the weights, the servers' optimizer slots and the epoch counter
/// after every epoch and resumes from the last save (--stop-after N stops
/// early, as if interrupted); a job that lost a parameter server is
/// restarted the same way.
int run_parameter_server_training(const Options& opts, const Split& train_split, const Split& test_split);

} // namespace train
