// One worker of checkpoint_test.cpp's MultiWorkerMirroredStrategy cases,
// started by troupe-launch (each worker 2 replicas); DIR/<worker index> is
// the worker's own folder, as if the workers shared no file system:
//   checkpoint_worker save DIR     sets known values, saves DIR/<index>/ckpt
//   checkpoint_worker resume DIR   restores DIR/<index>/ckpt into fresh
//                                  variables, then tries DIR/<index>/stale
//                                  (absent on the chief) and DIR/<index>/bad
//                                  (corrupt on the chief), then saves where
//                                  the chief has no folder
// It prints "CHECKPOINT <what>" lines for the test and exits 0 when what it
// observed is what the scenario expects of it, else 1 after "CHECKPOINT WRONG".
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

using namespace troupe;

namespace {

[[noreturn]] void wrong(const std::string& what) {
  std::cout << "CHECKPOINT WRONG " << what << std::endl;
  std::exit(1);
}

const std::vector<float> saved_w{0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f};
const std::vector<float> saved_count{10.0f, 20.0f};
constexpr int64_t saved_step = 7;

/// Weights (ON_WRITE), a step counter (ONLY_FIRST_REPLICA) and a per-replica
/// sum (ON_READ SUM), all zero when created.
struct Model {
  Variable w, step, count;

  explicit Model(Strategy& strategy) {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::zeros({2, 3}, DType::float32),
                                 {.name = "w", .aggregation = VariableAggregation::MEAN});
    step = strategy.create_variable(Tensor(int64_t{0}),
                                    {.name = "step", .aggregation = VariableAggregation::ONLY_FIRST_REPLICA});
    count = strategy.create_variable(Tensor::zeros({2}, DType::float32),
                                     {.name = "count",
                                      .synchronization = VariableSynchronization::ON_READ,
                                      .aggregation = VariableAggregation::SUM});
  }
  [[nodiscard]] Checkpoint checkpoint() const { return Checkpoint({w, step, count}); }
};

/// Wrong unless every variable holds the saved values, on every local copy of w.
void expect_saved_values(Model& model, const std::string& when) {
  for (int replica = 0; replica < 2; ++replica)
    if (model.w.value(replica).to_vector<float>() != saved_w)
      wrong(when + ": w on local replica " + std::to_string(replica) + " is " + to_string(model.w.value(replica)));
  if (model.step.read_value().item<int64_t>() != saved_step)
    wrong(when + ": step is " + to_string(model.step.read_value()));
  if (model.count.read_value().to_vector<float>() != saved_count)
    wrong(when + ": count is " + to_string(model.count.read_value()));
}

/// The Error `fn` throws, printed as "CHECKPOINT <label> <code>: <message>".
void expect_error(const std::string& label, Errc code, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    std::cout << "CHECKPOINT " << label << " " << name(e.code()) << ": " << e.what() << std::endl;
    if (e.code() != code)
      wrong(label + " failed with " + std::string(name(e.code())) + ", not " + std::string(name(code)));
    return;
  }
  wrong(label + " did not fail");
}

int save(Strategy& strategy, const std::string& dir) {
  Model model(strategy);
  model.w.assign(Tensor::from_vector(saved_w, {2, 3}));
  model.step.assign(Tensor(saved_step));
  model.count.assign(Tensor::from_vector(saved_count));
  model.checkpoint().save(dir + "/ckpt");
  std::cout << "CHECKPOINT saved" << std::endl;
  return 0;
}

int resume(Strategy& strategy, const std::string& dir) {
  Model model(strategy);
  if (!model.checkpoint().restore_if_exists(dir + "/ckpt"))
    wrong("restore_if_exists found no checkpoint");
  expect_saved_values(model, "after restore");
  std::cout << "CHECKPOINT restored step " << model.step.read_value().item<int64_t>() << std::endl;

  // Worker 1 holds a "stale" file, the chief none: the chief's answer counts.
  if (model.checkpoint().restore_if_exists(dir + "/stale"))
    wrong("restore_if_exists restored \"stale\", which the chief does not have");
  std::cout << "CHECKPOINT stale not restored" << std::endl;
  expect_error("missing", Errc::not_found, [&] { model.checkpoint().restore(dir + "/stale"); });
  // The chief's "bad" is corrupt, worker 1's is good: every worker fails.
  expect_error("bad", Errc::data_loss, [&] { model.checkpoint().restore(dir + "/bad"); });
  // The chief cannot write (no such folder there): every worker fails.
  expect_error("unwritable", Errc::not_found, [&] { model.checkpoint().save(dir + "/no_folder/ckpt"); });
  expect_saved_values(model, "after the failed restores");
  std::cout << "CHECKPOINT unchanged" << std::endl;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: checkpoint_worker save|resume DIR\n";
    return 2;
  }
  const std::string scenario = argv[1];
  try {
    Runtime rt(ClusterResolver::from_env(), {.logical_cpu_devices = 2});
    MultiWorkerMirroredStrategy strategy(rt);
    const std::string dir = std::string(argv[2]) + "/" + std::to_string(strategy.extended().worker_index());
    if (scenario == "save")
      return save(strategy, dir);
    if (scenario == "resume")
      return resume(strategy, dir);
    std::cerr << "checkpoint_worker: unknown scenario \"" << scenario << "\"\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout << "CHECKPOINT WRONG unexpected error: " << e.what() << std::endl;
    return 1;
  }
}
