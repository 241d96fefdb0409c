#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <zlib.h>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/datasets/idx.hpp>

#include "support/skip.hpp"

#include "datasets/format_test_util.hpp"

using namespace troupe;
using troupe::test::error_of;
using troupe::test::TempDir;
using troupe::test::write_file;

namespace {

/// An IDX file: magic 00 00 type rank, big-endian dims, then `body` (already big-endian).
std::string idx_bytes(unsigned char type, const std::vector<uint32_t>& dims,
                      const std::string& body) {
  std::string bytes = {'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes += static_cast<char>(d >> shift);
  return bytes + body;
}

template <class T>
std::string big_endian(const std::vector<T>& values) {
  std::string bytes;
  for (const T& v : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (std::size_t i = sizeof(T); i > 0; --i)
      bytes += static_cast<char>(raw[i - 1]);
  }
  return bytes;
}

void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  REQUIRE(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()))
          == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(file) == Z_OK);
}

/// Writes `bytes` plainly or gzip'ed (the file name says neither).
void write_idx(const std::string& path, const std::string& bytes, bool gzip) {
  if (gzip)
    write_gzip(path, bytes);
  else
    write_file(path, bytes);
}

} // namespace

TEST_CASE("read_idx reads every IDX element type, plain and gzip'ed", "[datasets][idx]") {
  TempDir dir;
  const bool gzip = GENERATE(false, true);
  INFO((gzip ? "gzip'ed" : "plain"));
  const std::string path = dir.file("data.idx");

  SECTION("ubyte -> uint8") {
    const std::vector<uint8_t> values = {0, 1, 127, 128, 200, 255};
    write_idx(path, idx_bytes(0x08, {2, 3}, big_endian(values)), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.dtype() == DType::uint8);
    CHECK(t.shape() == Shape{2, 3});
    CHECK(t.to_vector<uint8_t>() == values);
  }
  SECTION("sbyte -> int32") {
    const std::vector<int8_t> values = {-128, -1, 0, 1, 127};
    write_idx(path, idx_bytes(0x09, {5}, big_endian(values)), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.dtype() == DType::int32);
    CHECK(t.to_vector<int32_t>() == std::vector<int32_t>{-128, -1, 0, 1, 127});
  }
  SECTION("short -> int32") {
    const std::vector<int16_t> values = {-32768, -2, 0, 258, 32767, 1000};
    write_idx(path, idx_bytes(0x0b, {3, 1, 2}, big_endian(values)), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.dtype() == DType::int32);
    CHECK(t.shape() == Shape{3, 1, 2});
    CHECK(t.to_vector<int32_t>() == std::vector<int32_t>{-32768, -2, 0, 258, 32767, 1000});
  }
  SECTION("int -> int32") {
    const std::vector<int32_t> values = {INT32_MIN, -1, 0, 0x01020304, INT32_MAX};
    write_idx(path, idx_bytes(0x0c, {5}, big_endian(values)), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.dtype() == DType::int32);
    CHECK(t.to_vector<int32_t>() == values);
  }
  SECTION("float -> float32") {
    const std::vector<float> values = {0.0f, -1.5f, 3.25f, 1e30f};
    write_idx(path, idx_bytes(0x0d, {2, 2}, big_endian(values)), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.dtype() == DType::float32);
    CHECK(t.to_vector<float>() == values);
  }
  SECTION("double -> float64") {
    const std::vector<double> values = {0.1, -2.0, 1e300};
    write_idx(path, idx_bytes(0x0e, {3}, big_endian(values)), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.dtype() == DType::float64);
    CHECK(t.to_vector<double>() == values);
  }
  SECTION("an empty dimension") {
    write_idx(path, idx_bytes(0x08, {0, 28}, ""), gzip);
    const Tensor t = read_idx(path);
    CHECK(t.shape() == Shape{0, 28});
  }
}

TEST_CASE("read_idx reads a large gzip'ed file", "[datasets][idx]") {
  TempDir dir;
  std::vector<uint8_t> values(3 * 1000 * 1000);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<uint8_t>(i * 7 + i / 251);
  const std::string path = dir.file("big.gz");
  write_gzip(path, idx_bytes(0x08, {3000, 1000}, big_endian(values)));
  const Tensor t = read_idx(path);
  CHECK(t.shape() == Shape{3000, 1000});
  CHECK(t.to_vector<uint8_t>() == values);
}

TEST_CASE("read_idx names the file and what is wrong with it", "[datasets][idx]") {
  TempDir dir;
  const std::string path = dir.file("bad.idx");

  SECTION("a missing file") {
    CHECK(error_of([&] { (void)read_idx(path); }, Errc::not_found)
          == "read_idx: cannot open \"" + path + "\": No such file or directory");
  }
  SECTION("a wrong magic number") {
    const bool gzip = GENERATE(false, true);
    write_idx(path, std::string("\x12\x34\x56\x78 and more", 13), gzip);
    CHECK(error_of([&] { (void)read_idx(path); }, Errc::invalid_argument)
          == "read_idx: \"" + path
               + "\" is not an IDX file: magic bytes 12 34 56 78, expected 00 00 <type> <rank>");
  }
  SECTION("an unknown type code") {
    write_file(path, idx_bytes(0x0a, {1}, "x"));
    CHECK_THAT(error_of([&] { (void)read_idx(path); }, Errc::invalid_argument),
               Catch::StartsWith("read_idx: \"" + path + "\" has unknown IDX type code 0x0a"));
  }
  SECTION("a file shorter than the magic number") {
    write_file(path, std::string("\0\0", 2));
    CHECK(error_of([&] { (void)read_idx(path); }, Errc::data_loss)
          == "read_idx: \"" + path
               + "\" is truncated: the IDX magic number needs 4 bytes, found 2");
  }
  SECTION("truncated dimensions") {
    write_file(path, idx_bytes(0x08, {60000, 28, 28}, "").substr(0, 10));
    CHECK(error_of([&] { (void)read_idx(path); }, Errc::data_loss)
          == "read_idx: \"" + path
               + "\" is truncated: the header (3 dimensions) needs 12 bytes, found 6");
  }
  SECTION("truncated data") {
    const bool gzip = GENERATE(false, true);
    write_idx(path, idx_bytes(0x0c, {10, 10}, std::string(17, 'x')), gzip);
    CHECK(error_of([&] { (void)read_idx(path); }, Errc::data_loss)
          == "read_idx: \"" + path
               + "\" is truncated: the data of shape (10, 10) (int) needs 400 bytes, found 17");
  }
  SECTION("bytes after the data") {
    const bool gzip = GENERATE(false, true);
    write_idx(path, idx_bytes(0x08, {2, 2}, "abcde"), gzip);
    CHECK_THAT(error_of([&] { (void)read_idx(path); }, Errc::data_loss),
               Catch::StartsWith("read_idx: \"" + path + "\" has bytes after the data of shape (2, 2) (ubyte)"));
  }
  SECTION("a corrupted rank byte: two more dimensions of 0 would read as an empty tensor") {
    // 60000 x 28 x 28 images whose rank byte says 5: the "dimensions" 4 and 5
    // are the first 8 data bytes (zeros), so the shape claims no data at all.
    write_file(path, idx_bytes(0x08, {3, 2, 2, 0, 0}, std::string(12, 'x')));
    CHECK_THAT(error_of([&] { (void)read_idx(path); }, Errc::data_loss),
               Catch::Contains("has bytes after the data of shape (3, 2, 2, 0, 0)"));
  }
  SECTION("a gzip'ed header claiming more than the file can hold") {
    write_gzip(path, idx_bytes(0x08, {60000, 60000, 60000}, "abc"));
    CHECK_THAT(error_of([&] { (void)read_idx(path); }, Errc::data_loss),
               Catch::Contains("claims the data of shape (60000, 60000, 60000) (ubyte)")
                 && Catch::Contains("the header is corrupt"));
  }
  SECTION("a cut gzip stream") {
    std::vector<uint8_t> values(100000);
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<uint8_t>(i * 131 + i / 7);
    const std::string whole = dir.file("whole.gz");
    write_gzip(whole, idx_bytes(0x08, {100000}, big_endian(values)));
    const std::string bytes = troupe::test::read_file(whole);
    write_file(path, bytes.substr(0, bytes.size() / 2));
    CHECK_THAT(error_of([&] { (void)read_idx(path); }, Errc::data_loss),
               Catch::StartsWith("read_idx: \"" + path
                                 + "\" is truncated: the data of shape "
                                   "(100000,) (ubyte) needs 100000 bytes, found "));
  }
}

TEST_CASE("read_idx_examples pairs images with labels and refuses counts that differ, naming both files",
          "[datasets][idx]") {
  TempDir dir;
  const std::string images = dir.file("train-images.idx");
  const std::string labels = dir.file("train-labels.idx");
  write_file(images, idx_bytes(0x08, {3, 2, 2}, std::string(12, 'x')));

  SECTION("equal counts") {
    write_file(labels, idx_bytes(0x08, {3}, "\x01\x02\x03"));
    const auto examples = read_idx_examples(images, labels);
    CHECK(examples.images.shape() == Shape{3, 2, 2});
    CHECK(examples.labels.to_vector<uint8_t>() == std::vector<uint8_t>{1, 2, 3});
  }
  SECTION("fewer labels than images (another split's labels)") {
    write_file(labels, idx_bytes(0x08, {2}, "\x01\x02"));
    CHECK(error_of([&] { (void)read_idx_examples(images, labels); }, Errc::invalid_argument)
          == "read_idx_examples: \"" + images + "\" holds 3 images but \"" + labels
               + "\" holds 2 labels; every image needs its label: pass the images and labels files of the same split");
  }
  SECTION("an images file as the labels") {
    CHECK_THAT(error_of([&] { (void)read_idx_examples(images, images); }, Errc::invalid_argument),
               Catch::StartsWith("read_idx_examples: the labels file \"" + images + "\" holds shape (3, 2, 2)"));
  }
}

TEST_CASE("read_idx reads Debian's Fashion-MNIST", "[datasets][idx][fashion_mnist]") {
  const std::filesystem::path dir = fashion_mnist_dir;
  if (!std::filesystem::exists(dir / "train-labels-idx1-ubyte.gz"))
    TROUPE_SKIP("Fashion-MNIST is not installed in " << dir << " (apt install dataset-fashion-mnist)");
  struct Split {
    const char* name;
    int64_t count;
  };
  for (const Split split : {Split{"train", 60000}, Split{"t10k", 10000}}) {
    INFO(split.name);
    const Tensor images =
      read_idx((dir / (std::string(split.name) + "-images-idx3-ubyte.gz")).string());
    CHECK(images.dtype() == DType::uint8);
    CHECK(images.shape() == Shape{split.count, 28, 28});
    const Tensor labels =
      read_idx((dir / (std::string(split.name) + "-labels-idx1-ubyte.gz")).string());
    CHECK(labels.dtype() == DType::uint8);
    REQUIRE(labels.shape() == Shape{split.count});
    // Ten balanced classes, 0 to 9.
    std::vector<int64_t> per_class(10, 0);
    bool in_range = true;
    for (uint8_t label : labels.to_vector<uint8_t>()) {
      in_range = in_range && label < 10;
      if (label < 10)
        ++per_class[label];
    }
    CHECK(in_range);
    CHECK(per_class == std::vector<int64_t>(10, split.count / 10));
    CHECK(labels.to_vector<uint8_t>()[0] == 9); // both splits start with an ankle boot
    // Pixels span the full byte range.
    const auto pixels = images.to_vector<uint8_t>();
    CHECK(*std::min_element(pixels.begin(), pixels.end()) == 0);
    CHECK(*std::max_element(pixels.begin(), pixels.end()) == 255);
  }
}
