// TF_CONFIG as a process finds it in its environment: parsed into a cluster
// spec by TFConfigClusterResolver and TPUClusterResolver, and each task
// address split into host and port. Anything malformed is Error.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <troupe/core/errors.hpp>
#include <troupe/net/cluster_spec.hpp>
#include <troupe/net/tf_config_cluster_resolver.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>

using namespace troupe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto resolver = TFConfigClusterResolver::from_json(text);
    const ClusterSpec spec = resolver.cluster_spec();
    (void) spec.to_json();
    (void) spec.fingerprint();
    (void) resolver.master();
    for (const auto& [job, tasks] : spec.as_dict())
      for (const auto& address : tasks) {
        try {
          (void) parse_task_address(address);
        } catch (const Error&) {
        }
      }
  } catch (const Error&) {
  }
  try {
    const auto tpu = TPUClusterResolver::from_tf_config("", text);
    (void) tpu.cluster_spec();
    (void) tpu.num_accelerators();
  } catch (const Error&) {
  }
  return 0;
}
