// One host of tpu_system_test.cpp's two-host TPU slice, started by
// troupe-launch: joins the cluster with 16 emulated cores (8 on this host),
// initializes the TPU system and prints "TPU <what>" lines for the test.
// Exits 0 after "TPU DONE", or 1 after "TPU ERROR <message>".
#include <iostream>
#include <memory>
#include <string>

#include <troupe/troupe.hpp>

using namespace troupe;

int main() {
  try {
    auto resolver = std::make_shared<TPUClusterResolver>();
    Runtime rt(resolver, {.logical_tpu_cores = 16});
    const auto topology = initialize_tpu_system(rt, *resolver);
    std::cout << "TPU master " << resolver->master() << "\n"
              << "TPU cores " << resolver->num_accelerators().at("TPU") << "\n"
              << "TPU topology tasks " << topology.num_tasks() << " per task " << topology.num_tpus_per_task()
              << "\n";
    const auto assignment = DeviceAssignment::build(topology, std::vector<int>{1, 1, 1, 2}, std::nullopt, 8);
    for (int replica : assignment.lookup_replicas(resolver->task_id(), 0))
      std::cout << "TPU replica " << replica << " " << assignment.tpu_device(replica, 0, "worker") << "\n";
    std::cout << "TPU DONE" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cout << "TPU ERROR " << e.what() << std::endl;
    return 1;
  }
}
