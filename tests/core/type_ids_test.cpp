#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>

#include <troupe/core/caf_types.hpp>
#include <troupe/core/type_ids.hpp>

using troupe::DeviceSpec;
using troupe::DType;
using troupe::Errc;
using troupe::Shape;
using troupe::Tensor;

namespace {

caf::actor_system_config& troupe_config(caf::actor_system_config& cfg) {
  cfg.set("scheduler.max-threads", 1);
  troupe::add_core_types(cfg);
  return cfg;
}

/// An actor system whose config went through add_core_types().
struct CafFixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{troupe_config(cfg)};

  /// Serialises `x` into bytes.
  template <class T>
  std::vector<char> save(T& x) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    auto err = sink(x);
    REQUIRE_FALSE(err);
    return buf;
  }

  /// Deserialises a T from `buf`; the error is returned through `err`.
  template <class T>
  T load(const std::vector<char>& buf, caf::error& err) {
    T x;
    caf::binary_deserializer source{sys, buf};
    err = source(x);
    return x;
  }

  template <class T>
  T round_trip(T x) {
    auto buf = save(x);
    caf::error err;
    auto y = load<T>(buf, err);
    REQUIRE_FALSE(err);
    return y;
  }
};

/// A tensor of `dtype` with a different value in every element (and a NaN
/// for floating dtypes, which only a bit-exact transfer preserves).
Tensor distinct_tensor(DType dtype, const Shape& shape) {
  return troupe::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto n = shape.num_elements();
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<bool> values;
      for (int64_t i = 0; i < n; ++i)
        values.push_back(i % 3 == 1);
      return Tensor::from_vector(values, shape);
    } else {
      std::vector<T> values;
      for (int64_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(i) * 0.75f - 2.0f;
        if constexpr (std::is_integral_v<T>)
          values.push_back(static_cast<T>(i * 1000003 - 7));
        else
          values.push_back(T(i == 1 ? std::numeric_limits<float>::quiet_NaN() : v));
      }
      return Tensor::from_vector(values, shape);
    }
  });
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes()
         && (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}

} // namespace

TEST_CASE("the core type-ID block names Tensor, Shape and DeviceSpec", "[core][type_ids]") {
  using block = caf::id_block::troupe_core;
  CHECK(block::begin == caf::first_custom_type_id);
  CHECK(block::end == block::begin + 3);
  CHECK(caf::type_id<Tensor>::value == block::begin);
  CHECK(std::string(caf::type_name<Tensor>::value) == "troupe::Tensor");
  CHECK(std::string(caf::type_name<Shape>::value) == "troupe::Shape");
  CHECK(std::string(caf::type_name<DeviceSpec>::value) == "troupe::DeviceSpec");
}

TEST_CASE_METHOD(CafFixture, "a tensor of every dtype round-trips through CAF bit-exactly",
                 "[core][type_ids]") {
  auto dtype = GENERATE(DType::bool_, DType::int32, DType::int64, DType::float16, DType::bfloat16,
                        DType::float32, DType::float64, DType::uint8);
  auto shape = GENERATE(Shape{2, 3}, Shape{}, Shape{5}, Shape{0, 4}, Shape{2, 1, 3});
  CAPTURE(troupe::name(dtype), shape.to_string());
  const auto device = DeviceSpec::from_string("/job:worker/replica:0/task:1/device:CPU:0");
  auto x = distinct_tensor(dtype, shape).on_device(device);
  auto y = round_trip(x);
  REQUIRE(y.valid());
  CHECK(y.dtype() == dtype);
  CHECK(y.shape() == shape);
  CHECK(y.device() == device);
  CHECK(same_bytes(x, y));
  CHECK_FALSE(y.shares_buffer_with(x));
}

TEST_CASE_METHOD(CafFixture, "a uint8 tensor keeps every byte value and dtype code 7",
                 "[core][type_ids]") {
  std::vector<uint8_t> all(256);
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<uint8_t>(255 - i);
  auto x = Tensor::from_vector(all, Shape{16, 16});
  auto buf = save(x);
  CHECK(buf[1] == 7); // byte 1 is the dtype code; appending uint8 kept the older codes
  caf::error err;
  auto y = load<Tensor>(buf, err);
  REQUIRE_FALSE(err);
  CHECK(y.dtype() == DType::uint8);
  CHECK(y.shape() == Shape{16, 16});
  CHECK(y.to_vector<uint8_t>() == all);
  // The first code past the last dtype is still rejected.
  buf[1] = 8;
  (void)load<Tensor>(buf, err);
  REQUIRE(err);
  CHECK(err.code() == static_cast<uint8_t>(Errc::data_loss));
}

TEST_CASE_METHOD(CafFixture, "an empty tensor round-trips as empty", "[core][type_ids]") {
  auto y = round_trip(Tensor{});
  CHECK_FALSE(y.valid());
}

TEST_CASE_METHOD(CafFixture, "a slice sends only its own rows", "[core][type_ids]") {
  auto x = distinct_tensor(DType::float32, Shape{4, 3});
  auto rows = x.slice(1, 3);
  auto y = round_trip(rows);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(same_bytes(rows, y));
  const auto all = x.to_vector<float>();
  CHECK(y.to_vector<float>() == std::vector<float>(all.begin() + 3, all.begin() + 9));
}

TEST_CASE_METHOD(CafFixture, "a large tensor is written as one raw block", "[core][type_ids]") {
  auto x = Tensor::full(Shape{1 << 18}, 1.5, DType::float32);
  auto buf = save(x);
  // Header (flag, dtype, dims, device, sizes) plus exactly the payload: no per-element framing.
  CHECK(buf.size() > x.nbytes());
  CHECK(buf.size() < x.nbytes() + 64);
  caf::error err;
  auto y = load<Tensor>(buf, err);
  REQUIRE_FALSE(err);
  CHECK(same_bytes(x, y));
}

TEST_CASE_METHOD(CafFixture, "a truncated tensor fails to load instead of crashing",
                 "[core][type_ids]") {
  auto x = distinct_tensor(DType::int64, Shape{16});
  auto buf = save(x);
  auto cut = GENERATE(1, 3, 10, 64);
  CAPTURE(cut);
  buf.resize(buf.size() - static_cast<size_t>(cut));
  caf::error err;
  (void) load<Tensor>(buf, err);
  CHECK(err);
}

TEST_CASE_METHOD(CafFixture, "a corrupted dtype or shape is data_loss", "[core][type_ids]") {
  auto x = distinct_tensor(DType::int32, Shape{3});
  auto buf = save(x);
  SECTION("unknown dtype code") {
    buf[1] = 42; // byte 0 is the validity flag, byte 1 the dtype
  }
  SECTION("negative dimension") {
    Tensor neg;
    std::vector<char> fake;
    caf::binary_serializer sink{sys, fake};
    uint8_t valid = 1;
    uint8_t dtype = static_cast<uint8_t>(DType::int32);
    std::vector<int64_t> dims{-3};
    std::string device = "/device:CPU:0";
    REQUIRE_FALSE(sink(valid, dtype, dims, device));
    buf = fake;
  }
  SECTION("dims whose element count passes int64_t") {
    // 2^57 * 99 fits in 64 unsigned bits but not in Shape's int64_t count.
    std::vector<char> fake;
    caf::binary_serializer sink{sys, fake};
    uint8_t valid = 1;
    uint8_t dtype = static_cast<uint8_t>(DType::uint8);
    std::vector<int64_t> dims{int64_t{1} << 57, 99};
    std::string device = "/device:CPU:0";
    REQUIRE_FALSE(sink(valid, dtype, dims, device));
    buf = fake;
  }
  caf::error err;
  (void) load<Tensor>(buf, err);
  REQUIRE(err);
  CHECK(err.category() == caf::atom("troupe"));
  CHECK(err.code() == static_cast<uint8_t>(Errc::data_loss));
}

TEST_CASE("a shape with a zero dim has no elements, whatever its other dims", "[core][type_ids]") {
  // fuzz/messages (UBSan) found it: a received empty tensor whose other dims
  // are huge overflowed Shape::num_elements()'s int64_t product on the way
  // to 0 when it was serialized again (corpus: regression-empty-tensor-huge-dims).
  CHECK(Shape{int64_t{1} << 57, 99, 0}.num_elements() == 0);
  CHECK(Shape{0, int64_t{1} << 62, int64_t{1} << 62}.num_elements() == 0);
  CHECK(Shape{2, 3}.num_elements() == 6);
  CHECK(Shape{}.num_elements() == 1);
}

TEST_CASE_METHOD(CafFixture, "shapes and device specs round-trip through CAF", "[core][type_ids]") {
  auto shape = GENERATE(Shape{}, Shape{3}, Shape{2, 0, 7});
  CHECK(round_trip(shape) == shape);
  auto spec = GENERATE(as<std::string>{}, "", "/job:ps", "/job:worker/replica:0/task:1/gpu:1",
                       "/device:CPU:*");
  auto device = DeviceSpec::from_string(spec);
  CHECK(round_trip(device) == device);
}

TEST_CASE_METHOD(CafFixture, "a message of core types crosses a serializer by type name",
                 "[core][type_ids]") {
  auto x = distinct_tensor(DType::float64, Shape{2, 2});
  auto msg = caf::make_message(x, Shape{2, 2}, DeviceSpec::local("GPU", 1));
  auto buf = save(msg);
  caf::error err;
  auto out = load<caf::message>(buf, err);
  REQUIRE_FALSE(err);
  REQUIRE(out.match_elements<Tensor, Shape, DeviceSpec>());
  CHECK(same_bytes(out.get_as<Tensor>(0), x));
  CHECK(out.get_as<Shape>(1) == Shape{2, 2});
  CHECK(out.get_as<DeviceSpec>(2).to_string() == "/device:GPU:1");
  CHECK(caf::to_string(caf::make_message(Shape{2, 2}, DeviceSpec::local("GPU", 1)))
        == R"((troupe::Shape([2, 2]), troupe::DeviceSpec("/device:GPU:1")))");
}

TEST_CASE_METHOD(CafFixture, "an Errc becomes a caf::error of category troupe",
                 "[core][type_ids][errors]") {
  caf::error plain = caf::make_error(Errc::timeout);
  CHECK(plain.category() == caf::atom("troupe"));
  CHECK(plain.code() == static_cast<uint8_t>(Errc::timeout));
  CHECK(sys.render(plain) == "troupe(timeout)");

  caf::error with_text = caf::make_error(Errc::timeout, "collective 7 timed out after 60 s");
  CHECK(sys.render(with_text) == "troupe(timeout): collective 7 timed out after 60 s");

  caf::error implicit = Errc::peer_lost;
  CHECK(implicit.code() == static_cast<uint8_t>(Errc::peer_lost));
  CHECK(troupe::to_string(Errc::key_mismatch) == "key_mismatch");

  // Errors cross nodes as code, category and context.
  auto back = round_trip(with_text);
  CHECK(back == with_text);
  CHECK(sys.render(back) == "troupe(timeout): collective 7 timed out after 60 s");
}
