#include <catch2/catch.hpp>

#include <troupe/collectives/local_all_gather.hpp>
#include <troupe/ops/tensor_ops.hpp>

using namespace troupe;

TEST_CASE("the local all-gather concatenates each tensor index in participant order",
          "[collectives][local_all_gather]") {
  std::vector<std::vector<Tensor>> in{
    {Tensor::from_vector<int32_t>({1, 2}), Tensor::from_vector<float>({1, 2}, {1, 2})},
    {Tensor::from_vector<int32_t>({3}), Tensor::from_vector<float>({3, 4}, {1, 2})},
  };
  auto out = internal::local_all_gather(in, 0);
  REQUIRE(out.size() == 2);
  CHECK(out[0].to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3});
  CHECK(out[1].shape() == Shape{2, 2});
  auto along1 = internal::local_all_gather({{in[0][1]}, {in[1][1]}}, 1);
  CHECK(along1[0].shape() == Shape{1, 4});
  CHECK(along1[0].to_vector<float>() == std::vector<float>{1, 2, 3, 4});
}
