// A checkpoint file's bytes as Checkpoint::restore reads them: every length
// and checksum is checked before anything is allocated or copied, and a
// damaged file is Error(data_loss), never a crash.

#include <cstddef>
#include <cstdint>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/checkpoint_format.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void) troupe::internal::parse_checkpoint(bytes, "fuzz.ckpt");
  } catch (const troupe::Error&) {
  }
  return 0;
}
