// Input pipeline throughput: what a training job's input costs.
//
// 1. Fashion-MNIST training images (Debian's dataset-fashion-mnist): IDX ->
//    from_tensor_slices((images, labels)) -> shuffle(10000, seed) -> batch(256)
//    -> experimental_distribute_dataset over 4 replicas; one epoch, every step
//    checked for shape and example count.
// 2. A TFRecord file of >= 256 MiB written here: TFRecordDataset (both CRCs
//    checked on every record) against a raw sequential read of the same file
//    in the same run (the limit). Target: >= 0.7 of the raw speed.
//
// Run: input_pipeline [--quick] [--tfrecord-mib N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

#include "bench_support.hpp"

namespace {

using troupe::Tensor;
using troupe::bench::Clock;
using troupe::bench::seconds_between;

struct Options {
  bool quick = false;
  std::size_t tfrecord_mib = 256;
  std::size_t record_kib = 100;
};

Options parse(int argc, char** argv) {
  Options opts;
  CLI::App app("Input pipeline throughput: Fashion-MNIST through a distributed dataset, and "
               "TFRecordDataset against a raw read of the same file.",
               "input_pipeline");
  app.add_flag("--quick", opts.quick, "a smoke test: an 8 MiB TFRecord file (not a measurement)");
  app.add_option("--tfrecord-mib", opts.tfrecord_mib, "size of the TFRecord file (default 256)")
    ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20))
    ->type_name("N");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e)); // prints the help or the error
  }
  if (opts.quick && app.count("--tfrecord-mib") == 0)
    opts.tfrecord_mib = 8;
  return opts;
}

// -- Fashion-MNIST -------------------------------------------------------------------

void fashion_mnist(const Options& opts) {
  const std::string dir = troupe::fashion_mnist_dir;
  const std::string images_path = dir + "/train-images-idx3-ubyte.gz";
  const std::string labels_path = dir + "/train-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(images_path)) {
    std::cout << "# FASHION_MNIST skipped: " << images_path
              << " is missing (Debian package dataset-fashion-mnist installs it)\n";
    return;
  }
  const auto t0 = Clock::now();
  Tensor images = troupe::read_idx(images_path);
  Tensor labels = troupe::read_idx(labels_path);
  const double read_s = seconds_between(t0, Clock::now());
  const int64_t examples = images.shape()[0];
  std::printf("FASHION_MNIST_READ,examples=%ld,image_bytes=%zu,seconds=%.3f,MBps=%.1f  # gunzip + parse of the "
              "IDX files\n",
              static_cast<long>(examples), images.nbytes(), read_s, images.nbytes() / read_s / 1e6);

  const int replicas = 4;
  troupe::Runtime rt({.logical_cpu_devices = replicas});
  troupe::MirroredStrategy strategy(rt, {"CPU:0", "CPU:1", "CPU:2", "CPU:3"});
  const int64_t batch = 256;
  auto dataset = troupe::Dataset::from_tensor_slices(troupe::Element::tuple({images, labels}))
                   .shuffle(10000, 42)
                   .batch(batch);
  if (opts.quick)
    dataset = dataset.take(20);
  auto dist = strategy.experimental_distribute_dataset(dataset);
  const int epochs = opts.quick ? 1 : 3;
  std::vector<double> epoch_seconds;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    int64_t seen = 0;
    int64_t steps = 0;
    const auto e0 = Clock::now();
    for (const auto& step : dist) {
      for (const auto& replica : step.values()) {
        const auto& x = replica[0];
        if (x.rank() != 3 || x.shape()[1] != 28 || x.shape()[2] != 28 || replica[1].shape()[0] != x.shape()[0])
          throw std::runtime_error("unexpected per-replica batch " + x.shape().to_string());
        seen += x.shape()[0];
      }
      ++steps;
    }
    epoch_seconds.push_back(seconds_between(e0, Clock::now()));
    const int64_t expected = opts.quick ? 20 * batch : examples;
    if (seen != expected)
      throw std::runtime_error("an epoch delivered " + std::to_string(seen) + " examples, expected " +
                               std::to_string(expected));
    std::printf("# epoch %d: %ld steps, %ld examples, %.3f s\n", epoch, static_cast<long>(steps),
                static_cast<long>(seen), epoch_seconds.back());
  }
  const double s = troupe::bench::median(epoch_seconds);
  const double bytes = static_cast<double>(images.nbytes() + labels.nbytes()) * (opts.quick ? 20.0 * batch / examples : 1.0);
  std::printf("FASHION_MNIST_PIPELINE,replicas=%d,batch=%ld,examples_per_s=%.0f,MBps=%.1f,epoch_s=%.3f  # "
              "shuffle(10000) + batch(256) + split over 4 replicas, median of %d epochs\n",
              replicas, static_cast<long>(batch), (opts.quick ? 20.0 * batch : examples) / s, bytes / s / 1e6, s,
              epochs);
}

// -- TFRecord --------------------------------------------------------------------------

double raw_read_MBps(const std::string& path, std::size_t& bytes_read) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw std::runtime_error("cannot open " + path);
  std::vector<char> buffer(std::size_t{1} << 20);
  bytes_read = 0;
  const auto t0 = Clock::now();
  while (auto n = std::fread(buffer.data(), 1, buffer.size(), f))
    bytes_read += n;
  const double s = seconds_between(t0, Clock::now());
  std::fclose(f);
  return bytes_read / s / 1e6;
}

void tfrecord(const Options& opts) {
  const auto path = (std::filesystem::temp_directory_path() /
                     ("troupe_bench_" + std::to_string(::getpid()) + ".tfrecord")).string();
  const std::size_t record_bytes = opts.record_kib << 10;
  const std::size_t records = (opts.tfrecord_mib << 20) / record_bytes + 1;
  {
    troupe::TFRecordWriter writer(path);
    std::string record(record_bytes, '\0');
    for (std::size_t r = 0; r < records; ++r) {
      for (std::size_t i = 0; i < record.size(); i += 4096)
        record[i] = static_cast<char>(r + i);
      writer.write(record);
    }
    writer.close();
  }
  const auto file_bytes = std::filesystem::file_size(path);
  std::printf("# TFRecord file: %zu records of %zu KiB, %.1f MiB (page cache warm for both reads)\n", records,
              opts.record_kib, file_bytes / 1048576.0);
  std::vector<double> raw;
  std::vector<double> troupe_rates;
  const int reps = opts.quick ? 1 : 5;
  std::size_t bytes_read = 0;
  (void)raw_read_MBps(path, bytes_read); // warm the page cache
  for (int rep = 0; rep < reps; ++rep) {
    raw.push_back(raw_read_MBps(path, bytes_read));
    std::size_t payload = 0;
    std::size_t count = 0;
    const auto t0 = Clock::now();
    for (const auto& record : troupe::TFRecordDataset(path)) {
      payload += record.tensor().nbytes();
      ++count;
    }
    const double s = seconds_between(t0, Clock::now());
    if (count != records || payload != records * record_bytes)
      throw std::runtime_error("TFRecordDataset read " + std::to_string(count) + " records");
    troupe_rates.push_back(file_bytes / s / 1e6);
  }
  std::filesystem::remove(path);
  const double limit = troupe::bench::median(raw);
  const double got = troupe::bench::median(troupe_rates);
  std::printf("TFRECORD,file_MiB=%.0f,record_KiB=%zu,MBps=%.0f,raw_read_MBps=%.0f,ratio=%.2f,target=0.7  # "
              "TFRecordDataset with both CRC-32C checks vs fread of the same file, median of %d\n",
              file_bytes / 1048576.0, opts.record_kib, got, limit, got / limit, reps);
}

} // namespace

int main(int argc, char** argv) {
  try {
    const auto opts = parse(argc, argv);
    std::cout << "# input_pipeline" << (opts.quick ? " --quick (smoke test: not a measurement)" : "") << "\n";
    fashion_mnist(opts);
    tfrecord(opts);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "input_pipeline: " << e.what() << "\n";
    return 1;
  }
}
