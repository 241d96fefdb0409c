#include <catch2/catch.hpp>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/core/crc32c.hpp>
#include <troupe/datasets/file_reader.hpp>
#include <troupe/datasets/tfrecord_dataset.hpp>
#include <troupe/datasets/tfrecord_writer.hpp>

#include "datasets/format_test_util.hpp"

using namespace troupe;
using troupe::test::error_of;
using troupe::test::read_file;
using troupe::test::strings_of;
using troupe::test::TempDir;
using troupe::test::write_file;

namespace {

std::string random_bytes(std::size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes)
    c = static_cast<char>(generator());
  return bytes;
}

void write_records(const std::string& path, const std::vector<std::string>& records) {
  TFRecordWriter writer(path);
  for (const auto& record : records)
    writer.write(record);
  writer.close();
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08" PRIx32, value);
  return text;
}

uint32_t masked_crc(const std::string& bytes) {
  return internal::crc32c_mask(internal::crc32c(bytes.data(), bytes.size()));
}

uint32_t load_le32(const std::string& bytes, std::size_t at) {
  uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value |= uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return value;
}

/// Reads `path` as TFRecords, returning the records read before an error and the error's message.
std::pair<std::vector<std::string>, std::string> read_until_error(const std::string& path,
                                                                  Errc code) {
  std::vector<std::string> records;
  std::string message = error_of(
    [&] {
      for (const Element& e : TFRecordDataset(path))
        records.push_back(bytes_to_string(e));
    },
    code);
  return {records, message};
}

} // namespace

// -- CRC-32C -------------------------------------------------------------------------------------

TEST_CASE("crc32c matches the standard check values", "[datasets][tfrecord][crc32c]") {
  CHECK(internal::crc32c("123456789", 9) == 0xe3069283u);
  const std::vector<unsigned char> zeros(32, 0);
  CHECK(internal::crc32c(zeros.data(), zeros.size()) == 0x8a9136aau);
  const std::vector<unsigned char> ones(32, 0xff);
  CHECK(internal::crc32c(ones.data(), ones.size()) == 0x62a8ab43u);
  std::vector<unsigned char> ascending(32);
  for (std::size_t i = 0; i < ascending.size(); ++i)
    ascending[i] = static_cast<unsigned char>(i);
  CHECK(internal::crc32c(ascending.data(), ascending.size()) == 0x46dd794eu);
  CHECK(internal::crc32c(nullptr, 0) == 0);
  CHECK(internal::crc32c_extend_portable(0, "123456789", 9) == 0xe3069283u);
}

TEST_CASE("crc32c gives the same value in every implementation, length and alignment",
          "[datasets][tfrecord][crc32c]") {
  const std::string data = random_bytes(3 * 8192 * 2 + 3 * 256 * 3 + 2000, 7);
  for (const auto& implementation : internal::crc32c_implementations()) {
    INFO("implementation " << implementation.name);
    CHECK(implementation.extend(0, "123456789", 9) == 0xe3069283u);
    for (std::size_t offset = 0; offset < 9; ++offset) {
      for (std::size_t size : {0,
                               1,
                               7,
                               8,
                               9,
                               15,
                               16,
                               17,
                               63,
                               255,
                               256,
                               767,
                               768,
                               769,
                               1000,
                               1023,
                               1024,
                               1025,
                               1039,
                               1040,
                               1279,
                               1280,
                               4096 + 48 + 3,
                               24575,
                               24576,
                               24577,
                               49152 + 768 + 5,
                               50000,
                               51000}) {
        if (offset + size > data.size())
          continue;
        INFO("offset " << offset << ", size " << size);
        const char* p = data.data() + offset;
        const uint32_t portable = internal::crc32c_extend_portable(0, p, size);
        CHECK(implementation.extend(0, p, size) == portable);
        // Extending in two pieces gives the CRC of the whole.
        const std::size_t split = size / 3;
        CHECK(implementation.extend(implementation.extend(0, p, split), p + split, size - split)
              == portable);
      }
    }
  }
  CHECK(internal::crc32c_extend(0, data.data(), data.size())
        == internal::crc32c_extend_portable(0, data.data(), data.size()));
}

TEST_CASE("crc32c_mask is TensorFlow's rotation and crc32c_unmask undoes it",
          "[datasets][tfrecord][crc32c]") {
  CHECK(internal::crc32c_mask(0) == 0xa282ead8u);
  CHECK(internal::crc32c_mask(0xe3069283u)
        == ((0xe3069283u >> 15 | 0xe3069283u << 17) + 0xa282ead8u));
  for (uint32_t crc : {0u, 1u, 0xe3069283u, 0xffffffffu, 0x8a9136aau})
    CHECK(internal::crc32c_unmask(internal::crc32c_mask(crc)) == crc);
}

// -- the buffered reader -------------------------------------------------------------------------

TEST_CASE("FileReader returns the same bytes with any buffer size and read size",
          "[datasets][tfrecord]") {
  TempDir dir;
  const std::string path = dir.file("bytes.bin");
  const std::string data = random_bytes(300000, 3);
  write_file(path, data);
  for (std::size_t buffer : {1, 3, 64, 4096, 1 << 20}) {
    // 70000 and 400000 bytes read past the buffer, straight into the destination.
    for (std::size_t step : {1, 5, 100, 3000, 70000, 400000}) {
      if (buffer < 64 && step < 100)
        continue; // slow and nothing new
      internal::FileReader reader("test", path, buffer);
      std::string got;
      std::string chunk(step, '\0');
      for (;;) {
        const std::size_t n = reader.read(chunk.data(), step);
        got.append(chunk, 0, n);
        if (n < step)
          break;
      }
      INFO("buffer " << buffer << ", step " << step);
      CHECK(got == data);
      CHECK(reader.offset() == data.size());
      CHECK(reader.read(chunk.data(), 1) == 0);
    }
  }
  internal::FileReader reader("test", path, 64);
  REQUIRE(reader.size() == data.size());
  const auto first = reader.peek();
  REQUIRE(first.size() == 64);
  reader.consume(10);
  CHECK(reader.offset() == 10);
  CHECK(reader.peek().size() == 54);
  // Mixed peeks and direct reads keep the offset and the bytes in step.
  std::string big(100000, '\0');
  REQUIRE(reader.read(big.data(), 54 + 100000 - 54) == 100000);
  CHECK(big == data.substr(10, 100000));
  CHECK(reader.offset() == 100010);
  const auto after = reader.peek();
  REQUIRE_FALSE(after.empty());
  CHECK(std::string(reinterpret_cast<const char*>(after.data()), after.size())
        == data.substr(100010, after.size()));
}

// -- round trips ---------------------------------------------------------------------------------

TEST_CASE("TFRecordDataset reads back what TFRecordWriter wrote, empty and large records included",
          "[datasets][tfrecord]") {
  TempDir dir;
  const std::string path = dir.file("data.tfrecord");
  std::vector<std::string> records = {"",
                                      "a",
                                      "hello",
                                      random_bytes(1000, 1),
                                      "",
                                      random_bytes((1 << 20) + 17, 2), // larger than the buffer
                                      random_bytes(3 << 20, 3),
                                      "tail"};
  {
    TFRecordWriter writer(path);
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (i % 2 == 0)
        writer.write(records[i]);
      else
        writer.write(bytes_tensor(records[i])); // the tensor overload
    }
  } // the destructor closes
  std::size_t expected_size = 0;
  for (const auto& r : records)
    expected_size += 16 + r.size();
  CHECK(std::filesystem::file_size(path) == expected_size);

  const TFRecordDataset dataset(path);
  std::vector<Tensor> tensors;
  for (const Element& e : dataset)
    tensors.push_back(e.tensor());
  REQUIRE(tensors.size() == records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    INFO("record " << i);
    CHECK(tensors[i].dtype() == DType::uint8);
    CHECK(tensors[i].shape() == Shape{static_cast<int64_t>(records[i].size())});
    CHECK(bytes_to_string(tensors[i]) == records[i]);
  }
  // A second pass starts again from the first record.
  CHECK(strings_of(dataset) == records);
}

TEST_CASE("TFRecordWriter frames a record as TensorFlow does", "[datasets][tfrecord]") {
  TempDir dir;
  const std::string path = dir.file("one.tfrecord");
  write_records(path, {"abc"});
  const std::string bytes = read_file(path);
  REQUIRE(bytes.size() == 8 + 4 + 3 + 4);
  CHECK(bytes.substr(0, 8) == std::string("\x03\0\0\0\0\0\0\0", 8));
  CHECK(load_le32(bytes, 8) == masked_crc(bytes.substr(0, 8)));
  CHECK(bytes.substr(12, 3) == "abc");
  CHECK(load_le32(bytes, 15) == masked_crc("abc"));
}

TEST_CASE("TFRecordDataset reads several files in the order given", "[datasets][tfrecord]") {
  TempDir dir;
  write_records(dir.file("b.tfrecord"), {"b0", "b1"});
  write_records(dir.file("a.tfrecord"), {"a0"});
  write_records(dir.file("empty.tfrecord"), {});
  write_records(dir.file("c.tfrecord"), {"c0", "", "c2"});
  const TFRecordDataset dataset({dir.file("b.tfrecord"), dir.file("empty.tfrecord"),
                                 dir.file("a.tfrecord"), dir.file("c.tfrecord")});
  CHECK(strings_of(dataset) == std::vector<std::string>{"b0", "b1", "a0", "c0", "", "c2"});
  CHECK(strings_of(TFRecordDataset(std::vector<std::string>{})).empty());
}

TEST_CASE("TFRecordDataset describes itself and shards by file", "[datasets][tfrecord]") {
  TempDir dir;
  write_records(dir.file("a.tfrecord"), {"a0", "a1"});
  write_records(dir.file("b.tfrecord"), {"b0"});
  const std::vector<std::string> files = {dir.file("a.tfrecord"), dir.file("b.tfrecord")};
  const TFRecordDataset dataset(files);
  const auto& node = dataset.node();
  CHECK(node->describe() == "TFRecordDataset([\"" + files[0] + "\", \"" + files[1] + "\"])");
  CHECK(dataset.element_spec() == ElementSpec{{TensorSpec{Shape{-1}, DType::uint8}}, false});
  CHECK(node->source_files() == files);
  CHECK(node->input() == nullptr);
  CHECK(node->with_input(nullptr) == node);
  const auto second = node->with_source_files({files[1]});
  REQUIRE(second != nullptr);
  CHECK(second->source_files() == std::vector<std::string>{files[1]});
  CHECK(strings_of(Dataset(second)) == std::vector<std::string>{"b0"});
  CHECK(strings_of(Dataset(node)) == std::vector<std::string>{"a0", "a1", "b0"});
  // A braced list of names, as in TensorFlow; nothing is opened until iteration.
  CHECK(TFRecordDataset({"x.tfrecord", "y.tfrecord"}).node()->source_files()
        == std::vector<std::string>{"x.tfrecord", "y.tfrecord"});
}

// -- errors --------------------------------------------------------------------------------------

TEST_CASE("TFRecordDataset names a missing file when iteration reaches it",
          "[datasets][tfrecord]") {
  TempDir dir;
  write_records(dir.file("a.tfrecord"), {"a0"});
  const std::string missing = dir.file("missing.tfrecord");
  const TFRecordDataset dataset({dir.file("a.tfrecord"), missing}); // no error yet
  std::vector<std::string> seen;
  const std::string message = error_of(
    [&] {
      for (const Element& e : dataset)
        seen.push_back(bytes_to_string(e));
    },
    Errc::not_found);
  CHECK(seen == std::vector<std::string>{"a0"});
  CHECK(message == "TFRecordDataset: cannot open \"" + missing + "\": No such file or directory");
  CHECK_THAT(
    error_of([&] { (void)strings_of(TFRecordDataset(dir.path().string())); }, Errc::not_found),
    Catch::Contains("Is a directory"));
}

TEST_CASE("TFRecordDataset reports each corrupted byte with the file, offset and CRC",
          "[datasets][tfrecord]") {
  TempDir dir;
  const std::string good = dir.file("good.tfrecord");
  const std::vector<std::string> records = {"first record", random_bytes(300, 9), "third"};
  write_records(good, records);
  const std::string bytes = read_file(good);
  const std::size_t start = 16 + records[0].size(); // the second record
  const std::size_t length = records[1].size();

  struct Case {
    const char* name;
    std::size_t at; // the byte flipped, from the record's start
    const char* crc;
  };
  const Case cases[] = {{"length", 0, "length"},
                        {"length high byte", 7, "length"},
                        {"length CRC", 8, "length"},
                        {"length CRC last byte", 11, "length"},
                        {"data", 12, "data"},
                        {"data last byte", 11 + length, "data"},
                        {"data CRC", 12 + length, "data"},
                        {"data CRC last byte", 15 + length, "data"}};
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::string corrupt = bytes;
      corrupt[start + c.at] = static_cast<char>(corrupt[start + c.at] ^ 0x40);
      const std::string path = dir.file("corrupt.tfrecord");
      write_file(path, corrupt);
      uint32_t stored = 0;
      uint32_t computed = 0;
      if (std::string(c.crc) == "length") {
        stored = load_le32(corrupt, start + 8);
        computed = masked_crc(corrupt.substr(start, 8));
      } else {
        stored = load_le32(corrupt, start + 12 + length);
        computed = masked_crc(corrupt.substr(start + 12, length));
      }
      const auto [seen, message] = read_until_error(path, Errc::data_loss);
      CHECK(seen == std::vector<std::string>{records[0]});
      CHECK(message
            == "TFRecordDataset: corrupted record at byte offset " + std::to_string(start)
                 + " of \"" + path + "\": " + c.crc + " CRC mismatch (stored " + hex32(stored)
                 + ", computed " + hex32(computed) + ")");
    }
  }

  SECTION("the first record's data") {
    std::string corrupt = bytes;
    corrupt[12] = 'F';
    const std::string path = dir.file("corrupt.tfrecord");
    write_file(path, corrupt);
    const auto [seen, message] = read_until_error(path, Errc::data_loss);
    CHECK(seen.empty());
    CHECK_THAT(message, Catch::StartsWith("TFRecordDataset: corrupted record at byte offset 0 of \""
                                          + path + "\": data CRC mismatch (stored 0x"));
  }
}

TEST_CASE("TFRecordDataset reports a file cut at any byte of a record as truncated",
          "[datasets][tfrecord]") {
  TempDir dir;
  const std::string good = dir.file("good.tfrecord");
  const std::vector<std::string> records = {"first", "the second record"};
  write_records(good, records);
  const std::string bytes = read_file(good);
  const std::size_t start = 16 + records[0].size();
  const std::size_t length = records[1].size();
  const std::string path = dir.file("cut.tfrecord");
  for (std::size_t cut = 0; cut < 16 + length; ++cut) {
    INFO("cut " << cut << " bytes into the second record");
    write_file(path, bytes.substr(0, start + cut));
    if (cut == 0) {
      CHECK(strings_of(TFRecordDataset(path)) == std::vector<std::string>{records[0]});
      continue;
    }
    std::string expected;
    if (cut < 12)
      expected =
        "expected 12 bytes of record header (length and its CRC), found " + std::to_string(cut);
    else if (cut < 12 + length)
      expected =
        "expected " + std::to_string(length) + " bytes of data, found " + std::to_string(cut - 12);
    else
      expected = "expected 4 bytes of data CRC, found " + std::to_string(cut - 12 - length);
    const auto [seen, message] = read_until_error(path, Errc::data_loss);
    CHECK(seen == std::vector<std::string>{records[0]});
    CHECK_THAT(message,
               Catch::StartsWith("TFRecordDataset: truncated record at byte offset "
                                 + std::to_string(start) + " of \"" + path + "\": " + expected));
  }
}

TEST_CASE("TFRecordDataset reports a truncated record larger than its buffer",
          "[datasets][tfrecord]") {
  TempDir dir;
  const std::string good = dir.file("good.tfrecord");
  const std::string big = random_bytes(3 << 20, 5);
  write_records(good, {big});
  const std::string path = dir.file("cut.tfrecord");
  write_file(path, read_file(good).substr(0, 12 + (2 << 20) + 1));
  const auto [seen, message] = read_until_error(path, Errc::data_loss);
  CHECK(seen.empty());
  CHECK_THAT(message, Catch::Contains("truncated record at byte offset 0 of \"" + path
                                      + "\": expected 3145728 bytes of data, found 2097153"));
}

TEST_CASE("a TFRecord stream whose length field claims a terabyte is truncation, not a terabyte allocation",
          "[datasets][tfrecord]") {
  // A pipe has no size to check the length against before allocating, and
  // the length's CRC is no secret: the reader must grow the record only by
  // the bytes that come.
  TempDir dir;
  const std::string path = dir.file("stream.tfrecord");
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  std::string header(8, '\0');
  const uint64_t length = uint64_t{1} << 40;
  for (int i = 0; i < 8; ++i)
    header[static_cast<std::size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  const uint32_t crc = masked_crc(header);
  for (int i = 0; i < 4; ++i)
    header.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  header += "only a few bytes follow";
  std::thread writer([&] {
    std::FILE* out = std::fopen(path.c_str(), "wb"); // blocks until the reader opens it
    if (out != nullptr) {
      std::fwrite(header.data(), 1, header.size(), out);
      std::fclose(out);
    }
  });
  const auto [seen, message] = read_until_error(path, Errc::data_loss);
  writer.join();
  CHECK(seen.empty());
  CHECK_THAT(message, Catch::Contains("expected 1099511627776 bytes of data, found 23"));
}

TEST_CASE("TFRecordDataset suggests a reason when a file is not TFRecords",
          "[datasets][tfrecord]") {
  TempDir dir;
  const std::string path = dir.file("notes.txt");
  write_file(path, "just some text, not a TFRecord file at all\n");
  const auto [seen, message] = read_until_error(path, Errc::data_loss);
  CHECK(seen.empty());
  CHECK_THAT(message, Catch::Contains("corrupted record at byte offset 0 of \"" + path
                                      + "\": length CRC mismatch"));
  CHECK_THAT(message, Catch::Contains("is it a TFRecord file?"));
}

TEST_CASE("TFRecordDataset goes on with the next file after an error", "[datasets][tfrecord]") {
  TempDir dir;
  write_records(dir.file("b.tfrecord"), {"b0"});
  const std::string missing = dir.file("missing.tfrecord");
  const TFRecordDataset dataset({missing, dir.file("b.tfrecord")});
  auto iterator = dataset.node()->iterator();
  CHECK_THROWS_AS(iterator->next(), Error);
  auto next = iterator->next();
  REQUIRE(next);
  CHECK(bytes_to_string(*next) == "b0");
  CHECK_FALSE(iterator->next());
}

TEST_CASE("TFRecordWriter names the file it cannot create or write", "[datasets][tfrecord]") {
  TempDir dir;
  const std::string nowhere = dir.file("no/such/dir/x.tfrecord");
  CHECK(error_of([&] { TFRecordWriter writer(nowhere); }, Errc::not_found)
        == "TFRecordWriter: cannot create \"" + nowhere + "\": No such file or directory");

  const std::string path = dir.file("x.tfrecord");
  TFRecordWriter writer(path);
  writer.write("one");
  writer.flush();
  CHECK(std::filesystem::file_size(path) == 19);
  CHECK_THAT(
    error_of([&] { writer.write(Tensor::from_vector<float>({1.0f})); }, Errc::invalid_argument),
    Catch::Contains("rank-1 uint8 tensor"));
  writer.close();
  writer.close(); // a second close is a no-op
  CHECK_THAT(error_of([&] { writer.write("two"); }, Errc::failed_precondition),
             Catch::Contains("after close()"));
  CHECK(strings_of(TFRecordDataset(path)) == std::vector<std::string>{"one"});

  if (std::filesystem::exists("/dev/full")) {
    CHECK_THAT(error_of(
                 [&] {
                   TFRecordWriter full("/dev/full");
                   full.write(random_bytes(4 << 20, 1));
                   full.close();
                 },
                 Errc::data_loss),
               Catch::Contains("cannot write to \"/dev/full\": No space left on device"));
  }
}
