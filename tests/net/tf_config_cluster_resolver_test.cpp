#include <catch2/catch.hpp>

#include <support/scoped_env.hpp>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/net/tf_config_cluster_resolver.hpp>

using Catch::Contains;
using troupe::ClusterSpec;
using troupe::Errc;
using troupe::Error;
using troupe::TFConfigClusterResolver;

namespace {

using troupe::testing::ScopedEnv;

// TensorFlow's own example.
const char* const seed_config =
  R"({"cluster": {"worker": ["localhost:12345", "localhost:23456"], "ps": ["localhost:34567"]}, )"
  R"("task": {"type": "worker", "index": 0}})";

/// The message of the Error(invalid_argument) that `fn` throws.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    return e.what();
  }
  FAIL("expected troupe::Error");
  return {};
}

} // namespace

TEST_CASE("TF_CONFIG seed example resolves worker 0 of 3 tasks", "[net][tf_config]") {
  auto resolver = TFConfigClusterResolver::from_json(seed_config);
  CHECK(resolver.task_type() == "worker");
  CHECK(resolver.task_id() == 0);
  CHECK(resolver.rpc_layer().empty());
  CHECK(resolver.environment().empty());
  CHECK(resolver.cluster_spec()
        == ClusterSpec(
          {{"worker", {"localhost:12345", "localhost:23456"}}, {"ps", {"localhost:34567"}}}));
  CHECK(resolver.num_accelerators().empty());
  // TensorFlow's master(): a bare address without an rpc layer, a URL with one.
  CHECK(resolver.master() == "localhost:12345");
  CHECK(resolver.master({}, -1, "grpc") == "grpc://localhost:12345");
  CHECK(resolver.master("worker", 1) == "localhost:23456");
  CHECK(resolver.master("ps", 0, "grpc") == "grpc://localhost:34567");
  REQUIRE_THROWS_WITH(resolver.master("ps", 1), Contains("no task 1 in job \"ps\""));
}

TEST_CASE("TF_CONFIG rpc_layer, environment and session_master are read", "[net][tf_config]") {
  auto resolver = TFConfigClusterResolver::from_json(
    R"({"cluster": {"chief": ["c:1"], "worker": ["w:1", "w:2"]}, "task": {"type": "chief", "index": 0},)"
    R"( "rpc_layer": "grpc", "environment": "cloud"})");
  CHECK(resolver.task_type() == "chief");
  CHECK(resolver.rpc_layer() == "grpc");
  CHECK(resolver.environment() == "cloud");
  CHECK(resolver.master() == "grpc://c:1");
  CHECK(resolver.master("worker", 1, "rpc") == "rpc://w:2");

  auto with_session_master = TFConfigClusterResolver::from_json(
    R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": 1},)"
    R"( "session_master": "grpc://m:1"})");
  CHECK(with_session_master.master() == "grpc://m:1");
}

TEST_CASE("TF_CONFIG without a cluster is a single process", "[net][tf_config]") {
  for (const char* text : {"{}", " { } ", R"({"rpc_layer": "grpc"})"}) {
    CAPTURE(text);
    auto resolver = TFConfigClusterResolver::from_json(text);
    CHECK(resolver.cluster_spec().empty());
    CHECK(resolver.task_type().empty());
    CHECK(resolver.task_id() == -1);
    CHECK(resolver.master().empty());
  }
}

TEST_CASE("TF_CONFIG of one task needs no task and has no master", "[net][tf_config]") {
  auto bare = TFConfigClusterResolver::from_json(R"({"cluster": {"worker": ["w:1"]}})");
  CHECK(bare.task_type().empty());
  CHECK(bare.task_id() == -1);
  CHECK(bare.master().empty());
  // As TensorFlow: a task without "index" leaves task_id unknown.
  auto no_index = TFConfigClusterResolver::from_json(
    R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker"}})");
  CHECK(no_index.task_type() == "worker");
  CHECK(no_index.task_id() == -1);
  auto full = TFConfigClusterResolver::from_json(
    R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0}})");
  CHECK(full.master().empty());
}

TEST_CASE("TF_CONFIG accepts an index written as a string, as int() does", "[net][tf_config]") {
  auto resolver = TFConfigClusterResolver::from_json(
    R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": "1"}})");
  CHECK(resolver.task_id() == 1);
  CHECK(resolver.master() == "w:2");
}

TEST_CASE("TF_CONFIG lets the evaluator run outside the cluster", "[net][tf_config]") {
  auto resolver = TFConfigClusterResolver::from_json(
    R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "evaluator", "index": 0}})");
  CHECK(resolver.task_type() == "evaluator");
  CHECK(resolver.task_id() == 0);
  CHECK(resolver.cluster_spec().num_tasks("evaluator") == 0);
}

TEST_CASE("TF_CONFIG ignores unknown keys", "[net][tf_config]") {
  auto resolver = TFConfigClusterResolver::from_json(
    R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": 1, "trial": "7"},)"
    R"( "job": {"foo": [1]}})");
  CHECK(resolver.task_id() == 1);
  // Unknown keys may hold any kind of JSON value.
  auto every_kind = TFConfigClusterResolver::from_json(
    R"( {"a": null, "b": true, "c": false, "d": -12.5e1, "e": "x", "f": [1, [], {}], "g": {"h": 0},)"
    "\n\t\r \"task\": {\"type\": \"worker\", \"index\": 0}, \"cluster\": {\"worker\": "
    "[\"w:1\"]}} ");
  CHECK(every_kind.task_type() == "worker");
  CHECK(every_kind.task_id() == 0);
}

TEST_CASE("malformed TF_CONFIG errors quote the offending part and name the fix",
          "[net][tf_config]") {
  struct Case {
    const char* name;
    const char* config;
    std::vector<std::string> expected;
  };
  auto c = GENERATE(values<Case>({
    {"bad json",
     R"({"cluster": {"worker": ["a:1" "b:2"]}})",
     {"invalid JSON at byte 34", "unexpected string literal; expected ']'", "(near `"}},
    {"not an object", R"(["a:1"])", {"expected a JSON object", "got array [\"a:1\"]"}},
    {"cluster not an object",
     R"({"cluster": ["a:1", "b:2"]})",
     {"\"cluster\" must be an object", "got array [\"a:1\", \"b:2\"]"}},
    {"job not a list",
     R"({"cluster": {"worker": "a:1"}})",
     {"job \"worker\" in \"cluster\" must be a list of \"host:port\" strings",
      "got string \"a:1\""}},
    {"job of numbers",
     R"({"cluster": {"worker": ["a:1", 2222]}})",
     {"job \"worker\" in \"cluster\"", "task 1 is number 2222", "[\"a:1\", 2222]"}},
    {"sparse job",
     R"({"cluster": {"worker": {"1": "a:1"}}})",
     {"{\"1\": \"a:1\"}", "sparse {index: address} form", "list every task in order"}},
    {"malformed address",
     R"({"cluster": {"worker": ["localhost"]}})",
     {"worker task 0", "invalid task address \"localhost\"", "expected \"host:port\""}},
    {"duplicate address",
     R"({"cluster": {"worker": ["a:1", "b:1"], "ps": ["b:1"]}})",
     {"address \"b:1\" is used twice", "ps task 0", "worker task 1"}},
    {"two chiefs",
     R"({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}})",
     {"job \"chief\" has 2 tasks", "at most one chief"}},
    {"no task",
     R"({"cluster": {"worker": ["a:1", "b:1"], "ps": ["c:1"]}})",
     {"the cluster has 3 tasks", "no \"task\"",
      "add \"task\": {\"type\": \"worker\", \"index\": N} (0..1 for job \"worker\")"}},
    {"no type",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"index": 1}})",
     {"\"task\" {\"index\": 1} has no \"type\"", "add \"type\": \"worker\""}},
    {"no index",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker"}})",
     {"\"task\" {\"type\": \"worker\"} has no \"index\"",
      "add \"index\": N (0..1 for job \"worker\")"}},
    {"no index, task quoted in document order",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "trial": [1, {}]}})",
     {"\"task\" {\"type\": \"worker\", \"trial\": [1, {}]} has no \"index\""}},
    {"task not an object",
     R"({"cluster": {"worker": ["a:1"]}, "task": "worker"})",
     {"\"task\" must be an object", "got string \"worker\""}},
    {"unknown type",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "master", "index": 0}})",
     {"task type \"master\" is not a job of the cluster", "jobs: worker", "use one of its jobs"}},
    {"type without cluster",
     R"({"task": {"type": "worker", "index": 0}})",
     {"task type \"worker\" is not a job of the cluster", "the cluster is empty"}},
    {"type not a string",
     R"({"cluster": {"worker": ["a:1"]}, "task": {"type": 1, "index": 0}})",
     {"\"task\" \"type\" must be a string", "got number 1"}},
    {"index out of range",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 2}})",
     {"task index 2 is out of range for job \"worker\", which has 2 tasks", "0..1"}},
    {"negative index",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": -1}})",
     {"task index -1 is out of range"}},
    {"fractional index",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1.5}})",
     {"\"task\" \"index\" must be an integer, got number 1.5"}},
    {"index written as a float",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1.0}})",
     {"\"task\" \"index\" must be an integer, got number 1.0"}},
    {"index with an exponent",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1e0}})",
     {"\"task\" \"index\" must be an integer, got number 1.0"}},
    {"index beyond int64",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 99999999999999999999}})",
     {"\"task\" \"index\" must be an integer, got number 1e+20"}},
    {"index beyond int",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 9007199254740993}})",
     {"\"task\" \"index\" must be an integer, got number 9007199254740993"}},
    {"index not a number",
     R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": "one"}})",
     {"\"task\" \"index\" must be an integer, got string \"one\""}},
    {"rpc_layer not a string",
     R"({"rpc_layer": 1})",
     {"\"rpc_layer\" must be a string, got number 1"}},
    {"bad job name", R"({"cluster": {"my job": ["a:1"]}})", {"job name \"my job\" is not valid"}},
  }));
  CAPTURE(c.name);
  auto message = error_of([&] { (void) TFConfigClusterResolver::from_json(c.config); });
  CAPTURE(message);
  CHECK_THAT(message, Contains("TF_CONFIG"));
  for (const auto& part : c.expected)
    CHECK_THAT(message, Contains(part));
}

TEST_CASE("TF_CONFIG strings decode every JSON escape", "[net][tf_config]") {
  auto resolver =
    TFConfigClusterResolver::from_json(R"({"rpc_layer": "a\"b\\c\/d", "environment": "\b\f\n\r\t",)"
                                       R"( "session_master": "\u0041\u00e9\u20AC\ud83d\ude00\u0000)"
                                       "h\xc3\xa9llo\"}");
  CHECK(resolver.rpc_layer() == "a\"b\\c/d");
  CHECK(resolver.environment() == "\b\f\n\r\t");
  // Surrogate pairs become one code point; raw UTF-8 passes through.
  CHECK(resolver.master()
        == std::string("A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") + '\0' + "h\xc3\xa9llo");
}

TEST_CASE("TF_CONFIG messages quote values as Python's json.dumps writes them",
          "[net][tf_config]") {
  auto message = error_of([] {
    (void)TFConfigClusterResolver::from_json(
      R"({"rpc_layer": [ "q\"\n\u0001" , {"b": [true,false,null,-1.5], "a": 0}, [ ], { } ]})");
  });
  CHECK_THAT(message,
             Contains(R"("rpc_layer" must be a string, got array )"
                      R"(["q\"\n\u0001", {"b": [true, false, null, -1.5], "a": 0}, [], {}])"));
}

TEST_CASE("TF_CONFIG JSON errors give the byte offset and quote the text around it",
          "[net][tf_config]") {
  struct Case {
    std::string text;
    const char* message; // expected in the error
  };
  // The offset is that of the last byte read when the error was found.
  auto c = GENERATE(values<Case>({
    {"", "at byte 0: syntax error while parsing value - unexpected end of input"},
    {"   ", "at byte 3: syntax error while parsing value - unexpected end of input; expected '[', "
            "'{', or a literal"},
    {"[1, 2,]", "at byte 6: syntax error while parsing value - unexpected ']'"},
    {R"({"a": 1,})", "at byte 8: syntax error while parsing object key - unexpected '}'"},
    {R"({"a" 1})", "at byte 5: syntax error while parsing object separator - unexpected number "
                   "literal; expected ':'"},
    {R"({"a": 1 "b": 2})", "at byte 10: syntax error while parsing object - unexpected string "
                           "literal; expected '}'"},
    {"[1 2]",
     "at byte 3: syntax error while parsing array - unexpected number literal; expected ']'"},
    {R"({'a': 1})", "at byte 1: syntax error while parsing object key - invalid literal"},
    {"['a']", "at byte 1: syntax error while parsing value - invalid literal"},
    {"01", "at byte 1: syntax error while parsing value - unexpected number literal; expected end "
           "of input"},
    {"-", "at byte 1: syntax error while parsing value - invalid number; expected digit after '-'"},
    {"1.",
     "at byte 2: syntax error while parsing value - invalid number; expected digit after '.'"},
    {"1e+", "at byte 3: syntax error while parsing value - invalid number; expected digit after "
            "exponent sign"},
    {"[1e999]", "at byte 6: number overflow parsing '1e999'"},
    {"NaN", "at byte 0: syntax error while parsing value - invalid literal"},
    {"True", "at byte 0: syntax error while parsing value - invalid literal"},
    {"tru", "at byte 3: syntax error while parsing value - invalid literal"},
    {"nul", "at byte 3: syntax error while parsing value - invalid literal"},
    {"[1] x", "at byte 4: syntax error while parsing value - invalid literal"},
    {"{} {}",
     "at byte 3: syntax error while parsing value - unexpected '{'; expected end of input"},
    {R"("abc)",
     "at byte 4: syntax error while parsing value - invalid string: missing closing quote"},
    {"\"a\nb\"", "at byte 2: syntax error while parsing value - invalid string: control character "
                 "U+000A (LF) must be escaped to \\u000A or \\n"},
    {R"("\x")", "at byte 2: syntax error while parsing value - invalid string: forbidden character "
                "after backslash"},
    {R"("\u12G4")", "at byte 5: syntax error while parsing value - invalid string: '\\u' must be "
                    "followed by 4 hex digits"},
    {R"("\udc00")", "at byte 6: syntax error while parsing value - invalid string: surrogate "
                    "U+DC00..U+DFFF must follow U+D800..U+DBFF"},
    {R"("\ud800x")", "at byte 7: syntax error while parsing value - invalid string: surrogate "
                     "U+D800..U+DBFF must be followed by U+DC00..U+DFFF"},
    {R"("\ud800\u0041")", "at byte 12: syntax error while parsing value - invalid string: "
                          "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF"},
    {"\"\xff\"",
     "at byte 1: syntax error while parsing value - invalid string: ill-formed UTF-8 byte"},
    {"\"\xc0\xaf\"", "at byte 1: syntax error while parsing value - invalid string: ill-formed "
                     "UTF-8 byte"},
    {"\"\xed\xa0\x80\"", "at byte 2: syntax error while parsing value - invalid string: "
                         "ill-formed UTF-8 byte"},
    {"[1, 2",
     "at byte 5: syntax error while parsing array - unexpected end of input; expected ']'"},
  }));
  CAPTURE(c.text);
  auto message = error_of([&] { (void)TFConfigClusterResolver::from_json(c.text); });
  CHECK_THAT(message, Contains("invalid TF_CONFIG: invalid JSON ") && Contains(c.message));
}

TEST_CASE("TF_CONFIG JSON error snippets show about 20 characters around the offset on one line",
          "[net][tf_config]") {
  auto message = error_of([] {
    (void)TFConfigClusterResolver::from_json("{\"cluster\": {\"worker\": [\"a:1\"\n \"b:2\"]}}");
  });
  // The error sits at byte 35 (the end of the second string); the snippet
  // escapes the newline.
  CHECK_THAT(message, Contains("at byte 35"));
  CHECK_THAT(message, Contains("(near `...a:1\"\\n \"b:2\"]}}`)"));
  auto whole = error_of([] { (void)TFConfigClusterResolver::from_json("[1 2]"); });
  CHECK_THAT(whole, Contains("(near `[1 2]`)"));
}

TEST_CASE("TF_CONFIG refuses a key twice in one object", "[net][tf_config]") {
  CHECK_THAT(error_of([] { (void)TFConfigClusterResolver::from_json(R"({"a": 1, "a": 2})"); }),
             Contains("invalid JSON at byte 11: duplicate key \"a\" in object"));
  // Deep inside, as at the top.
  auto nested = error_of([] {
    (void)TFConfigClusterResolver::from_json(
      R"({"cluster": {"worker": ["w:1"]}, "x": {"a": 1, "b": [{"a": 2}], "a": 3}})");
  });
  CHECK_THAT(nested, Contains("at byte 66: duplicate key \"a\" in object"));
  // The same key in sibling objects is no duplicate.
  CHECK_NOTHROW(
    TFConfigClusterResolver::from_json(R"({"x": [{"a": 1}, {"a": 2}], "a": {"a": 3}})"));
}

TEST_CASE("TF_CONFIG refuses JSON nested deeper than 256 levels", "[net][tf_config]") {
  // TF_CONFIG's object is the first level.
  CHECK_NOTHROW(TFConfigClusterResolver::from_json(R"({"x": )" + std::string(255, '[')
                                                   + std::string(255, ']') + "}"));
  auto message = error_of([] {
    (void)TFConfigClusterResolver::from_json(R"({"x": )" + std::string(300, '[')
                                             + std::string(300, ']') + "}");
  });
  CHECK_THAT(message, Contains("at byte 261: values are nested deeper than 256 levels"));
}

TEST_CASE("TF_CONFIG is read from the environment", "[net][tf_config]") {
  {
    ScopedEnv env("TF_CONFIG", seed_config);
    TFConfigClusterResolver resolver;
    CHECK(resolver.task_type() == "worker");
    CHECK(resolver.task_id() == 0);
    CHECK(resolver.cluster_spec().num_tasks_total() == 3);
    CHECK(resolver.master() == "localhost:12345");
  }
  for (std::optional<std::string> unset :
       {std::optional<std::string>{}, std::optional<std::string>{""}}) {
    ScopedEnv env("TF_CONFIG", unset);
    TFConfigClusterResolver resolver;
    CHECK(resolver.cluster_spec().empty());
    CHECK(resolver.task_type().empty());
    CHECK(resolver.task_id() == -1);
  }
  {
    ScopedEnv env("TF_CONFIG", "{not json");
    REQUIRE_THROWS_WITH(TFConfigClusterResolver(),
                        Contains("invalid TF_CONFIG: invalid JSON at byte 2"));
  }
}

TEST_CASE("TF_CONFIG overrides win and are checked like TF_CONFIG", "[net][tf_config]") {
  ScopedEnv env("TF_CONFIG", seed_config);
  TFConfigClusterResolver resolver("ps", 0, "grpc", "google");
  CHECK(resolver.task_type() == "ps");
  CHECK(resolver.task_id() == 0);
  CHECK(resolver.rpc_layer() == "grpc");
  CHECK(resolver.environment() == "google");
  CHECK(resolver.master() == "grpc://localhost:34567");

  TFConfigClusterResolver only_id(std::nullopt, 1);
  CHECK(only_id.task_type() == "worker");
  CHECK(only_id.task_id() == 1);

  auto message = error_of([] { (void) TFConfigClusterResolver("ps", 3); });
  CHECK_THAT(message,
             Contains("task_type/task_id passed to TFConfigClusterResolver")
               && Contains("task index 3 is out of range for job \"ps\", which has 1 task"));
}

TEST_CASE("TF_CONFIG overrides can name the task that TF_CONFIG leaves out", "[net][tf_config]") {
  ScopedEnv env("TF_CONFIG", R"({"cluster": {"worker": ["a:1", "b:1"]}})");
  TFConfigClusterResolver resolver("worker", 1);
  CHECK(resolver.master() == "b:1");
  REQUIRE_THROWS_WITH(TFConfigClusterResolver(), Contains("no \"task\""));
}
