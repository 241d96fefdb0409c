// A cluster beyond this machine's loopback does not start without a cluster
// token unless told to (net/auth/token_policy.hpp).

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/net/auth/token_policy.hpp>

using namespace troupe::internal::auth;

TEST_CASE("loopback hosts are localhost, 127.0.0.0/8 and IPv6's loopback", "[net][auth]") {
  for (const char* host : {"localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "0:0:0:0:0:0:0:1",
                           "::ffff:127.0.0.1"}) {
    CAPTURE(host);
    CHECK(is_loopback_host(host));
  }
  for (const char* host : {"10.0.0.5", "node1", "128.0.0.1", "0.0.0.0", "localhost.example.com", "::2",
                           "::ffff:10.0.0.5", ""}) {
    CAPTURE(host);
    CHECK_FALSE(is_loopback_host(host));
  }
}

TEST_CASE("a cluster beyond loopback needs a token or an explicit allowance", "[net][auth]") {
  const std::vector<std::string> local{"127.0.0.1", "localhost"};
  const std::vector<std::string> spread{"127.0.0.1", "10.0.0.5"};
  CHECK(check_token_policy("", local, false).empty());
  CHECK(check_token_policy("0123456789abcdef0123456789abcdef", spread, false).empty());
  CHECK(check_token_policy("short", local, false).empty()); // on loopback any token goes
  try {
    (void)check_token_policy("", spread, false);
    FAIL("an unauthenticated cluster on 10.0.0.5 started");
  } catch (const troupe::Error& e) {
    CHECK(e.code() == troupe::Errc::failed_precondition);
    CHECK_THAT(e.what(), Catch::Contains("10.0.0.5") && Catch::Contains("TROUPE_CLUSTER_TOKEN")
                           && Catch::Contains("TROUPE_ALLOW_UNAUTHENTICATED=1"));
  }
  try {
    (void)check_token_policy("secret", spread, true); // allowing no token does not allow a weak one
    FAIL("a 6-character token was accepted beyond loopback");
  } catch (const troupe::Error& e) {
    CHECK(e.code() == troupe::Errc::failed_precondition);
    CHECK_THAT(e.what(), Catch::Contains("only 6 characters") && Catch::Contains("at least 16"));
  }
  CHECK_THAT(check_token_policy("", spread, true),
             Catch::Contains("without TROUPE_CLUSTER_TOKEN on 10.0.0.5") && Catch::Contains("anyone"));
}
