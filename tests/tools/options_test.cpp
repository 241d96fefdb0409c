#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include <troupe_launch/options.hpp>

using troupe::launch::Options;
using troupe::launch::parse_options;

namespace {

std::string error_of(const std::vector<std::string>& args) {
  try {
    (void)parse_options(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("troupe-launch options default to 2 workers on 127.0.0.1 with a 10 s grace period",
          "[launch]") {
  const Options opts = parse_options({"prog"});
  CHECK(opts.workers == 2);
  CHECK(opts.ps == 0);
  CHECK_FALSE(opts.chief);
  CHECK_FALSE(opts.evaluator);
  CHECK_FALSE(opts.tls);
  CHECK(opts.host == "127.0.0.1");
  CHECK(opts.grace_seconds == 10);
  CHECK(opts.timeout_seconds == 0);
  CHECK_FALSE(opts.attach);
  CHECK(opts.base_port == 23456);
  CHECK(opts.program == std::vector<std::string>{"prog"});
}

TEST_CASE("troupe-launch options stop at the program and leave its arguments alone", "[launch]") {
  const Options opts =
    parse_options({"--workers", "3", "--ps=1", "--chief", "--tls", "prog", "--workers", "7", "--", "x"});
  CHECK(opts.workers == 3);
  CHECK(opts.ps == 1);
  CHECK(opts.chief);
  CHECK(opts.tls);
  CHECK(opts.program == std::vector<std::string>{"prog", "--workers", "7", "--", "x"});

  const Options after_dashes = parse_options({"--grace-seconds", "0.5", "--", "-prog", "--help"});
  CHECK(after_dashes.grace_seconds == 0.5);
  CHECK(after_dashes.program == std::vector<std::string>{"-prog", "--help"});
}

TEST_CASE("troupe-launch options read numbers in decimal and let the last repeat win", "[launch]") {
  const Options opts = parse_options({"--workers", "010", "--workers=3", "--ps", "07", "prog"});
  CHECK(opts.workers == 3);
  CHECK(opts.ps == 7);
  CHECK(parse_options({"--workers", "010", "prog"}).workers == 10);
  CHECK_THAT(error_of({"--workers", "0x10", "prog"}),
             Catch::Contains("--workers \"0x10\" is not valid"));
  CHECK_THAT(error_of({"--base-port", "-1", "--attach", "prog"}),
             Catch::Contains("--base-port \"-1\" is not valid"));
}

TEST_CASE("troupe-launch rank mode options take hosts and a base port", "[launch]") {
  const Options opts = parse_options({"--attach", "--chief", "--base-port", "30000", "--hosts",
                                      "a,b,c", "--workers-per-node", "4", "--", "prog"});
  CHECK(opts.attach);
  CHECK(opts.chief);
  CHECK(opts.base_port == 30000);
  CHECK(opts.hosts == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("troupe-launch option errors name the flag and the fix", "[launch]") {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const auto c = GENERATE(values<Case>({
    {{"--workers", "two", "prog"}, "--workers \"two\" is not valid"},
    {{"--workers", "-1", "prog"}, "--workers"},
    {{"--ps", "1.5", "prog"}, "--ps"},
    {{"--grace-seconds", "-1", "prog"}, "--grace-seconds"},
    {{"--timeout-seconds", "soon", "prog"}, "--timeout-seconds"},
    {{"--ps"}, "--ps: 1 required VALUE missing; see troupe-launch --help"},
    {{"--frobnicate", "prog"}, "unknown option \"--frobnicate\""},
    {{"--chief=yes", "prog"}, "--chief: takes no value: write --chief alone"},
    {{"--workers", "0", "prog"}, "--workers 0 leaves the cluster without a worker or chief"},
    {{"--hosts", "a,b", "prog"}, "--hosts is only used with --attach"},
    {{"--base-port", "70000", "--attach", "prog"}, "--base-port \"70000\" is not valid"},
    {{"--attach", "--ps", "1", "prog"}, "--ps does not apply with --attach"},
    {{"--attach", "--workers", "4", "prog"}, "mpirun -n or srun -n"},
    {{"--attach", "--hosts", "a,,b", "prog"}, "--hosts \"a,,b\" has an empty host name"},
    {{"--workers", "2"}, "no program to launch"},
    {{"--workers", "0", "--ps", "1", "prog"}, "--ps 1 with --workers 0 leaves the parameter servers without a worker"},
  }));
  INFO("args: " << Catch::Detail::stringify(c.args));
  CHECK_THAT(error_of(c.args), Catch::Contains(c.expected));
}

TEST_CASE("troupe-launch options with --ps add the chief, the coordinator of a ps cluster", "[launch]") {
  CHECK(parse_options({"--ps", "1", "prog"}).chief);
  CHECK(parse_options({"--ps", "2", "--chief", "prog"}).chief);
  CHECK_FALSE(parse_options({"--ps", "0", "prog"}).chief);
}

TEST_CASE("troupe-launch option --help stops parsing", "[launch]") {
  CHECK(parse_options({"--help"}).help);
  CHECK(parse_options({"-h", "--bogus"}).help);
}
