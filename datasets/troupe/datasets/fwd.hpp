#pragma once

/// Forward declarations of troupe's input pipeline types (datasets/).
namespace troupe {

class Dataset;
class DistributedDataset;
class Element;
class InputContext;
struct DatasetOptions;
struct InputOptions;
struct TensorSpec;
enum class AutoShardPolicy : unsigned char;

namespace detail {
class DatasetNode;
class ElementIterator;
} // namespace detail

} // namespace troupe
