#pragma once

// Deliberately free of CAF headers: code that only configures an actor system
// should not pay for them (see core/type_ids.hpp for the CAF-facing part).
namespace caf {
class actor_system_config;
} // namespace caf

namespace troupe {

/// Registers troupe's core message types (the type-ID block
/// `caf::id_block::troupe_core`: Tensor, Shape, DeviceSpec) and the "troupe"
/// error category with `cfg`.
///
/// Call it on every config before its actor_system is created, in every process
/// of a job: CAF silently drops remote messages whose types are not registered
/// on both ends. Calling it twice is harmless.
void add_core_types(caf::actor_system_config& cfg);

} // namespace troupe
