// IDX files (the MNIST family's format), plain or gzip'ed: read_idx returns
// the tensor the header describes or refuses the file with Error.

#include <cstddef>
#include <cstdint>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/idx.hpp>

#include "fuzz_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static troupe::fuzz::FuzzFile file;
  try {
    (void) troupe::read_idx(file.hold(data, size));
  } catch (const troupe::Error&) {
  }
  return 0;
}
