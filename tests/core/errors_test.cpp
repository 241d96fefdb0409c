#include <catch2/catch.hpp>

#include <set>
#include <string>

#include <troupe/core/errors.hpp>

using troupe::Errc;
using troupe::Error;

TEST_CASE("every error code has its own snake_case name", "[core][errors]") {
  struct Case {
    Errc code;
    const char* name;
  };
  const Case cases[] = {
    {Errc::invalid_argument, "invalid_argument"},
    {Errc::out_of_range, "out_of_range"},
    {Errc::not_found, "not_found"},
    {Errc::failed_precondition, "failed_precondition"},
    {Errc::timeout, "timeout"},
    {Errc::peer_lost, "peer_lost"},
    {Errc::key_mismatch, "key_mismatch"},
    {Errc::shape_mismatch, "shape_mismatch"},
    {Errc::dtype_mismatch, "dtype_mismatch"},
    {Errc::not_supported, "not_supported"},
    {Errc::cancelled, "cancelled"},
    {Errc::data_loss, "data_loss"},
    {Errc::internal, "internal"},
    {Errc::deadlock, "deadlock"},
    {Errc::unknown, "unknown"},
  };
  std::set<std::string_view> seen;
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(troupe::name(c.code) == c.name);
    seen.insert(troupe::name(c.code));
  }
  CHECK(seen.size() == std::size(cases));
  // Code 0 means "no error" to CAF, so ours start at 1.
  CHECK(static_cast<int>(Errc::invalid_argument) == 1);
}

TEST_CASE("an unknown code still has a printable name", "[core][errors]") {
  CHECK(troupe::name(static_cast<Errc>(200)) == "unknown");
}

TEST_CASE("an Error carries its code and its message as what()", "[core][errors]") {
  const Error e(Errc::shape_mismatch, "shapes (2,) and (3,) differ");
  CHECK(e.code() == Errc::shape_mismatch);
  CHECK(std::string(e.what()) == "shapes (2,) and (3,) differ");
  const std::runtime_error& base = e;
  CHECK(std::string(base.what()) == "shapes (2,) and (3,) differ");
}

TEST_CASE("fail throws an Error with the given code and message", "[core][errors]") {
  try {
    troupe::fail(Errc::timeout, "collective 7 timed out after 60 s");
    FAIL("fail() returned");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::timeout);
    CHECK(std::string(e.what()) == "collective 7 timed out after 60 s");
  }
}
