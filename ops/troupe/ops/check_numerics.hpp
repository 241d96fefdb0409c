#pragma once

#include <string>

#include <troupe/core/tensor.hpp>

namespace troupe {

/// tf.debugging.check_numerics: returns `x` itself when every element is
/// finite. A NaN or an infinity is Error(invalid_argument) with TensorFlow's
/// text, "<message> : Tensor had NaN values" ("Inf values", "Inf and NaN
/// values"), so that a training loop ends at the first non-finite loss or
/// gradient instead of logging -nan for the rest of the job. Put in
/// `message` what the reader needs to find the value: the tensor, the step,
/// the worker. Floating dtypes only (float16, bfloat16, float32, float64);
/// any other dtype is Error(invalid_argument), as TensorFlow refuses it. A GPU
/// tensor is copied to the host to be checked (a synchronisation point).
[[nodiscard]] Tensor check_numerics(const Tensor& x, const std::string& message);

} // namespace troupe
