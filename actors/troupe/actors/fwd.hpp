#pragma once

/// Forward declarations of troupe's runtime types (actors/).
namespace troupe {

class Runtime;
struct LocalCluster;
struct RuntimeOptions;
struct Simulation;

namespace internal {
class Completion;
class Executor;
class PsCluster;
class ReplicaGroup;
class ReplicaHandle;
class RuntimeImpl;
} // namespace internal

} // namespace troupe
