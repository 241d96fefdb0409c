#pragma once

// The user's program of this sample: a MultiWorkerMirroredStrategy training
// loop that knows nothing of how it is run. main.cpp runs it as one task of
// a real cluster (troupe-launch) and as every task of a SimulatedCluster.

#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace sample {

/// What one task ends with: its place and the model it trained.
struct Trained {
  std::string task;       ///< "worker:1"
  std::vector<float> w;   ///< the weights, every worker's the same
  float loss = 0;         ///< the mean loss of the last step, over every replica
  int steps = 0;
};

/// Fits y = 3 x0 - 2 x1 + 0.5 on 64 examples, 6 epochs, batches of 8 over
/// every replica of every worker.
Trained train(troupe::Runtime& rt);

/// "worker:1 steps 16 w [2.98..., ...] loss 0.0012...": every bit printed.
std::string describe(const Trained& t);

} // namespace sample
