// The TPU topology bytes (TensorFlow's serialized TopologyProto) that
// initialize_tpu_system hands back and connect_tpu_system takes: parsed or
// refused with Error; a parsed topology answers its lookups and serializes
// back to bytes that parse to the same topology.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/tpu_topology.hpp>

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const Topology topology = Topology::from_serialized(bytes);
    (void) topology.device_coordinates();
    (void) topology.missing_devices();
    const auto& flat = topology.device_coordinates_flat();
    const auto rank = static_cast<std::size_t>(topology.mesh_rank());
    if (rank > 0 && flat.size() >= rank) {
      const std::vector<int> first(flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(rank));
      (void) topology.task_ordinal_at_coordinates(first);
      (void) topology.tpu_device_name_at_coordinates(first);
    }
    if (!(Topology::from_serialized(topology.serialized()) == topology))
      std::abort(); // a round trip that changes the topology
  } catch (const Error&) {
  }
  return 0;
}
