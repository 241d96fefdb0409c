// The input actor's messages (input_pipeline_messages.hpp): they print, and
// the fetch, which points to a caller's slot in this process, refuses to be
// serialised, naming itself, rather than being dropped silently.

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/actors/replicas/input_pipeline_messages.hpp>

using namespace troupe::internal;
using Catch::Matchers::Contains;

TEST_CASE("an input fetch prints the steps it wants and cannot be serialised", "[actors][messages]") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto slot = std::make_shared<FetchSlot>();
  slot->wanted = 3;
  InputFetchMsg fetch{slot};
  CHECK(caf::deep_to_string(fetch) == "troupe::InputFetchMsg(3)");
  InputFillMsg fill;
  CHECK(caf::deep_to_string(fill) == "troupe::InputFillMsg()");

  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  const auto error = sink(fetch);
  REQUIRE(error);
  CHECK(error.code() == static_cast<uint8_t>(troupe::Errc::not_supported));
  CHECK_THAT(sys.render(error), Contains("troupe::InputFetchMsg holds pointers into its process"));
  // The fill carries nothing, so it would travel.
  std::vector<char> fill_bytes;
  caf::binary_serializer fill_sink(sys, fill_bytes);
  CHECK_FALSE(fill_sink(fill));
}
