// Reading another process's memory: a forked child holds the same bytes at
// the same addresses as this process did when it forked.

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/node_id.hpp>

#include <troupe/net/link/cross_memory.hpp>

using namespace troupe::internal;
using Catch::Matchers::Contains;

TEST_CASE("a member's memory is read whole while it lives, and not once it ended", "[net][cross-memory]") {
  REQUIRE(cross_memory_attach_works());
  std::vector<uint32_t> bytes(1 << 18);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint32_t>(i * 2654435761u);
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) { // holds its copy of `bytes` until the parent writes (or closes the pipe)
    ::close(go[1]);
    char c;
    (void)::read(go[0], &c, 1);
    ::_exit(0);
  }
  ::close(go[0]);
  const auto address = reinterpret_cast<uintptr_t>(bytes.data());
  const auto size = bytes.size() * sizeof(uint32_t);
  std::vector<uint32_t> got(bytes.size());
  // Not registered: refused before anything is read.
  CHECK_THAT(read_cross_memory(child, address, got.data(), size), Contains("no member this process may read"));
  CrossMemoryPeers::set({{caf::node_id{}, static_cast<int32_t>(child)}});
  CHECK(CrossMemoryPeers::pid_of(caf::node_id{}) == child);
  std::fill(bytes.begin(), bytes.end(), 0u); // the child's copy keeps the old values
  REQUIRE(read_cross_memory(child, address, got.data(), size).empty());
  CHECK(got[12345] == static_cast<uint32_t>(12345 * 2654435761u));
  // The child ends: nothing is read from it any more.
  ::close(go[1]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK_FALSE(read_cross_memory(child, address, got.data(), size).empty());
  CrossMemoryPeers::clear();
  CHECK_FALSE(CrossMemoryPeers::pid_of(caf::node_id{}).has_value());
}
