#pragma once

/// Forward declarations of troupe's strategy types (strategies/).
namespace troupe {

class Checkpoint;
class DistributedDataset;
class MirroredStrategy;
class OneDeviceStrategy;
class ReduceDestination;
class ReplicaContext;
class Strategy;
class StrategyExtended;
class StrategyScope;
struct ValueContext;
class Variable;
class VariableColocation;
struct VariableOptions;
template <class T>
class DistributedValues;
template <class T>
class PerReplica;
template <class T>
class Mirrored;

} // namespace troupe
