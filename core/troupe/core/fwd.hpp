#pragma once

/// Forward declarations of troupe's core types.
namespace troupe {

enum class DType : unsigned char;
enum class Errc : unsigned char;
class DeviceSpec;
class Error;
class Shape;
class Tensor;
struct float16;
struct bfloat16;

} // namespace troupe
