#include <troupe/datasets/dataset.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/batch_dataset.hpp>
#include <troupe/datasets/enumerate_dataset.hpp>
#include <troupe/datasets/filter_dataset.hpp>
#include <troupe/datasets/map_dataset.hpp>
#include <troupe/datasets/options_dataset.hpp>
#include <troupe/datasets/pipeline_util.hpp>
#include <troupe/datasets/prefetch_dataset.hpp>
#include <troupe/datasets/range_dataset.hpp>
#include <troupe/datasets/repeat_dataset.hpp>
#include <troupe/datasets/shard_dataset.hpp>
#include <troupe/datasets/shuffle_dataset.hpp>
#include <troupe/datasets/take_skip_dataset.hpp>
#include <troupe/datasets/tensor_dataset.hpp>
#include <troupe/datasets/tensor_slices_dataset.hpp>

namespace troupe {

Dataset::Dataset(std::shared_ptr<const detail::DatasetNode> node) : node_(std::move(node)) {
  if (!node_)
    fail(Errc::invalid_argument,
         "Dataset: the node is null; build datasets with Dataset::range, from_tensor_slices, ...");
}

// -- sources --------------------------------------------------------------------------

Dataset Dataset::range(int64_t stop) {
  return range(0, stop, 1);
}

Dataset Dataset::range(int64_t start, int64_t stop, int64_t step) {
  return Dataset(std::make_shared<internal::RangeDataset>(start, stop, step));
}

Dataset Dataset::from_tensors(Element element) {
  return Dataset(std::make_shared<internal::TensorDataset>(std::move(element)));
}

Dataset Dataset::from_tensor_slices(Element element) {
  return Dataset(std::make_shared<internal::TensorSlicesDataset>(std::move(element)));
}

// -- transformations ----------------------------------------------------------------------

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder) const {
  return Dataset(std::make_shared<internal::BatchDataset>(node_, batch_size, drop_remainder));
}

Dataset Dataset::shard(int64_t num_shards, int64_t index) const {
  return Dataset(std::make_shared<internal::ShardDataset>(node_, num_shards, index));
}

Dataset Dataset::repeat(int64_t count) const {
  return Dataset(std::make_shared<internal::RepeatDataset>(node_, count));
}

Dataset Dataset::shuffle(int64_t buffer_size, std::optional<uint64_t> seed,
                         bool reshuffle_each_iteration) const {
  return Dataset(
    std::make_shared<internal::ShuffleDataset>(node_, buffer_size, seed, reshuffle_each_iteration));
}

Dataset Dataset::take(int64_t count) const {
  return Dataset(std::make_shared<internal::TakeDataset>(node_, count));
}

Dataset Dataset::skip(int64_t count) const {
  return Dataset(std::make_shared<internal::SkipDataset>(node_, count));
}

Dataset Dataset::enumerate(int64_t start) const {
  return Dataset(std::make_shared<internal::EnumerateDataset>(node_, start));
}

Dataset Dataset::prefetch(int64_t buffer_size) const {
  return Dataset(std::make_shared<internal::PrefetchDataset>(node_, buffer_size));
}

Dataset Dataset::with_options(const DatasetOptions& options) const {
  return Dataset(std::make_shared<internal::OptionsDataset>(node_, options));
}

Dataset Dataset::map_element(MapFunction fn) const {
  return Dataset(std::make_shared<internal::MapDataset>(node_, std::move(fn)));
}

Dataset Dataset::filter_element(Predicate predicate) const {
  return Dataset(std::make_shared<internal::FilterDataset>(node_, std::move(predicate)));
}

// -- properties -------------------------------------------------------------------------

ElementSpec Dataset::element_spec() const {
  return node_->element_spec();
}

DatasetOptions Dataset::options() const {
  return node_->options();
}

std::string Dataset::describe() const {
  return internal::describe_pipeline(*node_);
}

// -- iteration ----------------------------------------------------------------------------

Dataset::Iterator::Iterator(std::shared_ptr<detail::ElementIterator> source)
  : source_(std::move(source)) {
  if (source_)
    ++*this;
}

Dataset::Iterator& Dataset::Iterator::operator++() {
  current_.reset();
  if (source_) {
    current_ = source_->next();
    if (!current_)
      source_.reset();
  }
  return *this;
}

Dataset::Iterator Dataset::begin() const {
  return Iterator(node_->iterator());
}

namespace detail {

bool predicate_value(const Tensor& value) {
  if (!value.valid() || value.dtype() != DType::bool_ || value.rank() != 0) {
    const std::string got = value.valid() ? "a tensor of dtype " + std::string(name(value.dtype()))
                                              + " and shape " + value.shape().to_string()
                                          : std::string("an empty Tensor handle");
    fail(Errc::invalid_argument,
         "filter: the predicate must return a bool or a bool scalar tensor (dtype bool, shape "
         "()), but returned "
           + got + "; reduce it to one bool, e.g. Tensor(x.item<int64_t>() < 3)");
  }
  return value.item<bool>();
}

} // namespace detail

} // namespace troupe
