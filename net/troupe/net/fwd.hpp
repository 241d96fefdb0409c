#pragma once

/// Forward declarations of troupe's cluster types (net/).
namespace troupe {

class ClusterResolver;
class ClusterSpec;
class SimpleClusterResolver;
class SlurmClusterResolver;
class TFConfigClusterResolver;
struct SimpleClusterResolverOptions;
struct SlurmClusterResolverOptions;
struct SlurmJob;
struct TaskAddress;

} // namespace troupe
