#include <catch2/catch.hpp>

#include <troupe/ops/tensor_ops.hpp>
#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/rebatch.hpp>

using namespace troupe;
using Catch::Matchers::Contains;

namespace {

// Every step of `dataset` split over `replicas`, as int64 vectors per replica.
std::vector<std::vector<std::vector<int64_t>>> steps(const Dataset& dataset, int replicas) {
  std::vector<std::vector<std::vector<int64_t>>> out;
  for (const auto& batch : dataset) {
    std::vector<std::vector<int64_t>> step;
    for (const auto& piece : split_global_batch(batch, replicas))
      step.push_back(piece.tensor().to_vector<int64_t>());
    out.push_back(step);
  }
  return out;
}

using Steps = std::vector<std::vector<std::vector<int64_t>>>;

} // namespace

TEST_CASE("range(6).batch(4) on 2 replicas gives 0 1 and 2 3, then 4 and 5", "[datasets][rebatch]") {
  CHECK(steps(Dataset::range(6).batch(4), 2) == Steps{{{0, 1}, {2, 3}}, {{4}, {5}}});
}

TEST_CASE("range(4).batch(4) on 5 replicas gives the last replica an empty batch", "[datasets][rebatch]") {
  CHECK(steps(Dataset::range(4).batch(4), 5) == Steps{{{0}, {1}, {2}, {3}, {}}});
  auto pieces = split_global_batch(*Dataset::range(4).batch(4).begin(), 5);
  CHECK(pieces[4].tensor().shape() == Shape{0});
  CHECK(pieces[4].tensor().dtype() == DType::int64);
}

TEST_CASE("range(8).batch(4) on 3 replicas gives the third replica an empty batch each step", "[datasets][rebatch]") {
  CHECK(steps(Dataset::range(8).batch(4), 3) == Steps{{{0, 1}, {2, 3}, {}}, {{4, 5}, {6, 7}, {}}});
}

TEST_CASE("range(4).batch(2) on 2 replicas gives 0 and 1, then 2 and 3", "[datasets][rebatch]") {
  CHECK(steps(Dataset::range(4).batch(2), 2) == Steps{{{0}, {1}}, {{2}, {3}}});
}

TEST_CASE("a tuple batch is split component by component without copying", "[datasets][rebatch]") {
  auto features = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  auto labels = Tensor::from_vector<int32_t>({7, 8, 9});
  auto pieces = split_global_batch(Element::tuple({features, labels}), 2);
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0].is_tuple());
  CHECK(pieces[0][0].shape() == Shape{2, 2});
  CHECK(pieces[1][0].to_vector<float>() == std::vector<float>{5, 6});
  CHECK(pieces[1][1].to_vector<int32_t>() == std::vector<int32_t>{9});
  CHECK(pieces[1][0].shares_buffer_with(features));
}

TEST_CASE("splitting an unbatched element names the fix", "[datasets][rebatch]") {
  CHECK_THROWS_WITH(split_global_batch(Element(Tensor(int64_t{3})), 2),
                    Contains("batch the dataset by the global batch size first"));
  CHECK_THROWS_WITH(split_global_batch(Element::tuple({Tensor::zeros({3}, DType::float32), Tensor::zeros({2}, DType::int32)}), 2),
                    Contains("components 0 and 1 of a batch have 3 and 2 rows"));
}
