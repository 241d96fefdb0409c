#include <troupe/ops/gpu_ops.hpp>

#include <cstring>
#include <string>
#include <utility>

#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_checks.hpp>

namespace troupe::internal {

namespace {

bool on_gpu(const Tensor& t) noexcept {
  return t.valid() && !t.on_host();
}

/// The device an op with these operands runs on: the first GPU operand's.
const DeviceSpec& op_device(std::initializer_list<const Tensor*> operands) {
  for (const Tensor* t : operands)
    if (on_gpu(*t))
      return t->device();
  fail(Errc::internal, "a GPU op was called without a GPU operand");
}

/// `t` on `device`, copied there when it lives elsewhere (TensorFlow copies
/// an op's inputs to the op's device too).
Tensor placed(const Tensor& t, const DeviceSpec& device) {
  return t.device() == device ? t : t.to(device);
}

void require_float32(const Tensor& t, const DeviceSpec& device, const char* op, const char* what) {
  if (t.dtype() != DType::float32)
    fail(Errc::not_supported, std::string{op} + " on " + device.short_name() + ": GPU kernels take float32 tensors, "
                                + "but " + what + " is a " + describe(t)
                                + "; cast it to float32, or copy the operands to the host (t.to(\"CPU:0\"))");
}

GpuLabelType label_type(DType dtype) {
  switch (dtype) {
    case DType::int32: return GpuLabelType::int32;
    case DType::int64: return GpuLabelType::int64;
    default: return GpuLabelType::uint8;  // the caller admits only these three
  }
}

const float* in(const Tensor& t) {
  return reinterpret_cast<const float*>(t.device_data());
}

float* out(Tensor& t) {
  return reinterpret_cast<float*>(t.mutable_device_data());
}

/// Sends `enqueue` to `device`'s actor with the kernels in force now (tests
/// swap them while they run).
template <class Enqueue>
void launch(const DeviceSpec& device, const char* what, Enqueue enqueue) {
  const GpuKernels& kernels = gpu_kernels();
  device_memory_for(device)->launch(what, [&kernels, enqueue = std::move(enqueue)](const GpuLaunchContext& ctx) {
    enqueue(kernels, ctx);
  });
}

} // namespace

bool any_on_gpu(const Tensor& a) noexcept {
  return on_gpu(a);
}
bool any_on_gpu(const Tensor& a, const Tensor& b) noexcept {
  return on_gpu(a) || on_gpu(b);
}
bool any_on_gpu(const Tensor& a, const Tensor& b, const Tensor& c) noexcept {
  return on_gpu(a) || on_gpu(b) || on_gpu(c);
}
bool any_on_gpu(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) noexcept {
  return on_gpu(a) || on_gpu(b) || on_gpu(c) || on_gpu(d);
}

Tensor gpu_binary(GpuBinaryOp kind, const Tensor& a, const Tensor& b, const Shape& shape, const char* op) {
  const DeviceSpec& device = op_device({&a, &b});
  require_float32(a, device, op, "the left operand");
  // A host scalar travels by value; anything else is placed on the op's device.
  auto operand = [&](const Tensor& t, Tensor& keep) {
    GpuOperand o;
    if (t.on_host() && t.rank() == 0) {
      o.value = t.item<float>();
      return o;
    }
    keep = placed(t, device);
    o.data = in(keep);
    o.broadcast = t.rank() == 0 && shape.rank() != 0;
    return o;
  };
  Tensor keep_a;
  Tensor keep_b;
  const GpuOperand x = operand(a, keep_a);
  const GpuOperand y = operand(b, keep_b);
  Tensor result = Tensor::empty(shape, DType::float32, device);
  const int64_t n = result.num_elements();
  if (n == 0)
    return result;
  float* o = out(result);
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) { k.binary_f32(ctx, kind, x, y, o, n); });
  return result;
}

Tensor gpu_unary(GpuUnaryOp kind, const Tensor& x, const char* op) {
  const DeviceSpec& device = x.device();
  require_float32(x, device, op, "x");
  Tensor result = Tensor::empty(x.shape(), DType::float32, device);
  const int64_t n = x.num_elements();
  if (n == 0)
    return result;
  const float* i = in(x);
  float* o = out(result);
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) { k.unary_f32(ctx, kind, i, o, n); });
  return result;
}

Tensor gpu_relu_grad(const Tensor& gradients, const Tensor& features) {
  const char* op = "relu_grad";
  const DeviceSpec& device = op_device({&gradients, &features});
  require_float32(features, device, op, "features");
  const Tensor g = placed(gradients, device);
  const Tensor f = placed(features, device);
  Tensor result = Tensor::empty(f.shape(), DType::float32, device);
  const int64_t n = f.num_elements();
  if (n == 0)
    return result;
  const float* gp = in(g);
  const float* fp = in(f);
  float* o = out(result);
  launch(device, op,
         [=](const GpuKernels& k, const GpuLaunchContext& ctx) { k.relu_grad_f32(ctx, gp, fp, o, n); });
  return result;
}

Tensor gpu_bias_add(const Tensor& value, const Tensor& bias) {
  const char* op = "bias_add";
  const DeviceSpec& device = op_device({&value, &bias});
  require_float32(value, device, op, "value");
  const Tensor x = placed(value, device);
  const Tensor b = placed(bias, device);
  Tensor result = Tensor::empty(x.shape(), DType::float32, device);
  const int64_t cols = x.shape()[x.rank() - 1];
  if (result.num_elements() == 0)
    return result;
  const int64_t rows = x.num_elements() / cols;
  const float* xp = in(x);
  const float* bp = in(b);
  float* o = out(result);
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) {
    k.bias_add_f32(ctx, xp, bp, o, rows, cols);
  });
  return result;
}

Tensor gpu_reduce_sum(const Tensor& x, int64_t outer, int64_t length, int64_t inner, const Shape& shape,
                      float scale, const char* op) {
  const DeviceSpec& device = x.device();
  require_float32(x, device, op, "x");
  Tensor result = Tensor::empty(shape, DType::float32, device);
  if (result.num_elements() == 0)
    return result;
  const float* xp = in(x);
  float* o = out(result);
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) {
    k.reduce_sum_f32(ctx, xp, o, outer, length, inner, scale);
  });
  return result;
}

Tensor gpu_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k) {
  const char* op = "matmul";
  const DeviceSpec& device = op_device({&a, &b});
  require_float32(a, device, op, "a");
  const Tensor x = placed(a, device);
  const Tensor y = placed(b, device);
  Tensor result = Tensor::empty(Shape{m, n}, DType::float32, device);
  if (m == 0 || n == 0)
    return result;
  if (k == 0)
    return Tensor::zeros(Shape{m, n}, DType::float32, device.short_name());
  const GpuGemm args{in(x), in(y), out(result), x.shape()[0], x.shape()[1], y.shape()[0], y.shape()[1],
                     transpose_a, transpose_b, m, n, k};
  launch(device, op, [=](const GpuKernels& kernels, const GpuLaunchContext& ctx) { kernels.gemm_f32(ctx, args); });
  return result;
}

Tensor gpu_softmax(const Tensor& logits, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  const DeviceSpec& device = logits.device();
  require_float32(logits, device, op, "logits");
  Tensor result = Tensor::empty(logits.shape(), DType::float32, device);
  const int64_t cols = logits.shape()[logits.rank() - 1];
  if (result.num_elements() == 0)
    return result;
  const int64_t rows = logits.num_elements() / cols;
  const float* i = in(logits);
  float* o = out(result);
  launch(device, op,
         [=](const GpuKernels& k, const GpuLaunchContext& ctx) { k.softmax_f32(ctx, i, o, rows, cols, log); });
  return result;
}

SoftmaxCrossEntropy gpu_cross_entropy(const Tensor& labels, const Tensor& logits, int64_t classes, bool with_loss,
                                      bool with_backprop, const char* op) {
  const DeviceSpec& device = op_device({&logits, &labels});
  require_float32(logits, device, op, "logits");
  const Tensor l = placed(labels, device);
  const Tensor x = placed(logits, device);
  SoftmaxCrossEntropy result;
  // The loss comes almost free with the backprop; it is always computed.
  result.loss = Tensor::empty(l.shape(), DType::float32, device);
  if (with_backprop)
    result.backprop = Tensor::empty(x.shape(), DType::float32, device);
  const int64_t rows = l.num_elements();
  if (rows > 0) {  // with no classes, every label is out of range: NaN rows
    const void* lp = l.device_data();
    const GpuLabelType type = label_type(l.dtype());
    const float* xp = in(x);
    float* loss = out(result.loss);
    float* backprop = with_backprop ? out(result.backprop) : nullptr;
    launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) {
      k.cross_entropy_f32(ctx, lp, type, xp, rows, classes, loss, backprop);
    });
  }
  if (!with_loss)
    result.loss = Tensor{};
  return result;
}

int64_t gpu_accuracy_count(const Tensor& labels, const Tensor& logits, int64_t classes) {
  const char* op = "accuracy_count";
  const DeviceSpec& device = op_device({&logits, &labels});
  require_float32(logits, device, op, "logits");
  const int64_t rows = labels.num_elements();
  if (rows == 0)
    return 0;
  const Tensor l = placed(labels, device);
  const Tensor x = placed(logits, device);
  Tensor counts = Tensor::empty(Shape{2}, DType::int64, device);
  const void* lp = l.device_data();
  const GpuLabelType type = label_type(l.dtype());
  const float* xp = in(x);
  auto* cp = reinterpret_cast<int64_t*>(counts.mutable_device_data());
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) {
    k.accuracy_count_f32(ctx, lp, type, xp, rows, classes, cp);
  });
  const Tensor host = counts.to("CPU:0");
  const int64_t* result = host.data<int64_t>();
  if (result[1] < rows)
    fail(Errc::invalid_argument, std::string{op} + ": the label at position " + std::to_string(result[1])
                                   + " is outside [0, " + std::to_string(classes)
                                   + ") (the logits have " + std::to_string(classes)
                                   + " classes); labels must be class indices, not one-hot rows");
  return result[0];
}

void gpu_axpy(Tensor& y, double alpha, const Tensor& x) {
  const char* op = "axpy_inplace";
  const DeviceSpec& device = y.device();
  require_float32(y, device, op, "y");
  const Tensor xs = placed(x, device);
  const int64_t n = y.num_elements();
  if (n == 0)
    return;
  // Write access first: when x shares y's buffer, y gets its own copy.
  float* yp = out(y);
  const float* xp = in(xs);
  const auto a = static_cast<float>(alpha);
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) { k.axpy_f32(ctx, yp, a, xp, n); });
}

void gpu_momentum(Tensor& var, Tensor& accum, const Tensor& grad, const MomentumOptions& options) {
  const char* op = "apply_momentum";
  const DeviceSpec& device = var.device();
  require_float32(var, device, op, "var");
  require_same_device(var, "var", accum, "accum", op);
  const Tensor g = placed(grad, device);
  const int64_t n = var.num_elements();
  if (n == 0)
    return;
  float* w = out(var);
  float* a = out(accum);
  const float* gp = in(g);
  const auto lr = static_cast<float>(options.learning_rate);
  const auto momentum = static_cast<float>(options.momentum);
  const bool nesterov = options.nesterov;
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) {
    k.momentum_f32(ctx, w, a, gp, n, lr, momentum, nesterov);
  });
}

void gpu_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, double alpha, const AdamOptions& options) {
  const char* op = "apply_adam";
  const DeviceSpec& device = var.device();
  require_float32(var, device, op, "var");
  require_same_device(var, "var", m, "m", op);
  require_same_device(var, "var", v, "v", op);
  const Tensor g = placed(grad, device);
  const int64_t n = var.num_elements();
  if (n == 0)
    return;
  float* w = out(var);
  float* m1 = out(m);
  float* m2 = out(v);
  const float* gp = in(g);
  const auto a = static_cast<float>(alpha);
  const auto b1 = static_cast<float>(1.0 - options.beta_1);
  const auto b2 = static_cast<float>(1.0 - options.beta_2);
  const auto eps = static_cast<float>(options.epsilon);
  launch(device, op, [=](const GpuKernels& k, const GpuLaunchContext& ctx) {
    k.adam_f32(ctx, w, m1, m2, gp, n, a, b1, b2, eps);
  });
}

} // namespace troupe::internal
