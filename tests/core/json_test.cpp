#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/core/json.hpp>

using Catch::Contains;
using troupe::Errc;
using troupe::Error;
using troupe::JsonValue;

namespace {

/// The message of the Error(invalid_argument) that parsing `text` throws.
std::string parse_error(const std::string& text) {
  try {
    (void) JsonValue::parse(text);
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    return e.what();
  }
  FAIL("JsonValue::parse(" << text << ") did not throw");
  return {};
}

} // namespace

TEST_CASE("json parses every kind of value", "[net][json]") {
  auto doc = JsonValue::parse(
    R"( {"a": null, "b": true, "c": false, "d": -12.5e1, "e": "x", "f": [1, [], {}], "g": {"h": 0}} )");
  REQUIRE(doc.is_object());
  CHECK(doc.size() == 7);
  CHECK(doc.keys() == std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g"});
  CHECK(doc.find("a")->is_null());
  CHECK(doc.find("b")->as_bool());
  CHECK_FALSE(doc.find("c")->as_bool());
  CHECK(doc.find("d")->as_double() == -125.0);
  CHECK(doc.find("d")->as_string() == "-12.5e1");
  CHECK(doc.find("e")->as_string() == "x");
  const auto& f = *doc.find("f");
  REQUIRE(f.is_array());
  REQUIRE(f.size() == 3);
  CHECK(f.items()[0].as_integer() == 1);
  CHECK(f.items()[1].is_array());
  CHECK(f.items()[1].size() == 0);
  CHECK(f.items()[2].is_object());
  CHECK(doc.find("g")->find("h")->as_integer() == 0);
  CHECK(doc.find("missing") == nullptr);
}

TEST_CASE("json numbers keep their text and tell integers apart", "[net][json]") {
  CHECK(JsonValue::parse("0").as_integer() == 0);
  CHECK(JsonValue::parse("-7").as_integer() == -7);
  CHECK(JsonValue::parse("9007199254740993").as_integer() == 9007199254740993);
  CHECK_FALSE(JsonValue::parse("3.0").as_integer());
  CHECK_FALSE(JsonValue::parse("1e2").as_integer());
  CHECK_FALSE(JsonValue::parse("99999999999999999999").as_integer());
  CHECK(JsonValue::parse("1e2").as_double() == 100.0);
  CHECK(JsonValue::parse("0.25").as_double() == 0.25);
  CHECK(JsonValue::parse("1e999").as_double() == std::numeric_limits<double>::infinity());
  CHECK_FALSE(JsonValue::parse("\"3\"").as_integer());
}

TEST_CASE("json decodes every string escape including surrogate pairs", "[net][json]") {
  CHECK(JsonValue::parse(R"("a\"b\\c\/d")").as_string() == "a\"b\\c/d");
  CHECK(JsonValue::parse(R"("\b\f\n\r\t")").as_string() == "\b\f\n\r\t");
  CHECK(JsonValue::parse(R"("\u0041\u00e9\u20AC")").as_string() == "A\xc3\xa9\xe2\x82\xac");
  CHECK(JsonValue::parse(R"("\ud83d\ude00")").as_string() == "\xf0\x9f\x98\x80");
  CHECK(JsonValue::parse(R"("\u0000")").as_string() == std::string(1, '\0'));
  // Raw UTF-8 passes through.
  CHECK(JsonValue::parse("\"h\xc3\xa9llo\"").as_string() == "h\xc3\xa9llo");
}

TEST_CASE("json serializes as Python json.dumps and round-trips", "[net][json]") {
  const std::string text =
    R"({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}, "x": [true, false, null, -1.5]})";
  auto doc = JsonValue::parse(text);
  CHECK(doc.to_json() == text);
  CHECK(JsonValue::parse(doc.to_json()) == doc);
  CHECK(JsonValue::parse("[ ]").to_json() == "[]");
  CHECK(JsonValue::parse("{ }").to_json() == "{}");
  CHECK(JsonValue::parse(R"("q\"\n\u0001")").to_json() == R"("q\"\n\u0001")");
  CHECK(troupe::json_quote("a\"b\\") == R"("a\"b\\")");
}

TEST_CASE("json accessors of the wrong kind name the kind", "[net][json]") {
  auto doc = JsonValue::parse("[1]");
  REQUIRE_THROWS_WITH(doc.as_string(), Contains("expected a JSON string, got array [1]"));
  REQUIRE_THROWS_WITH(doc.as_bool(), Contains("expected a JSON boolean, got array"));
  REQUIRE_THROWS_WITH(JsonValue::parse("\"x\"").as_double(),
                      Contains("expected a JSON number, got string \"x\""));
}

TEST_CASE("json errors give the byte offset and quote the text around it", "[net][json]") {
  struct Case {
    const char* text;
    const char* message; // expected in the error
  };
  auto c = GENERATE(values<Case>({
    {"", "at byte 0: expected a value"},
    {"   ", "at byte 3: expected a value (object, array, string, number, true, false or null), "
            "got end of text"},
    {"[1, 2,]", "at byte 6: trailing comma before ']'"},
    {R"({"a": 1,})", "at byte 8: trailing comma before '}'"},
    {R"({"a" 1})", "at byte 5: expected ':' after key \"a\", got '1'"},
    {R"({"a": 1 "b": 2})", "at byte 8: expected ',' or '}' after an object member, got '\"'"},
    {"[1 2]", "at byte 3: expected ',' or ']' after an array element, got '2'"},
    {R"({'a': 1})", "at byte 1: expected a key in double quotes, got '''"},
    {"['a']", "at byte 1: strings and keys take double quotes"},
    {R"({"a": 1, "a": 2})", "at byte 9: duplicate key \"a\" in object"},
    {"01", "at byte 0: leading zeros are not allowed"},
    {"-", "at byte 1: expected a digit after '-', got end of text"},
    {"1.", "at byte 2: expected a digit after '.'"},
    {"1e+", "at byte 3: expected a digit in the exponent"},
    {"NaN", "at byte 0: expected a value"},
    {"True", "at byte 0: expected a value"},
    {"tru", "at byte 0: expected a value"},
    {"nul", "at byte 0: expected a value"},
    {"[1] x", "at byte 4: unexpected 'x' after the JSON value"},
    {"{} {}", "at byte 3: unexpected '{' after the JSON value"},
    {R"("abc)", "at byte 0: unterminated string"},
    {"\"a\nb\"", "at byte 2: raw control character in string (escape it, e.g. \\n or \\u000a)"},
    {R"("\x")", "at byte 1: invalid escape in string"},
    {R"("\u12G4")", "at byte 5: expected 4 hex digits after \\u, got 'G'"},
    {R"("\udc00")", "at byte 1: lone low surrogate \\udc00"},
    {R"("\ud800x")", "at byte 1: high surrogate \\ud800 is not followed by a low surrogate"},
    {R"("\ud800\u0041")", "at byte 1: high surrogate \\ud800 is not followed by a low surrogate"},
    {"\"\xff\"", "at byte 1: invalid UTF-8 in string"},
    {"\"\xc0\xaf\"", "at byte 1: invalid UTF-8 in string"},
    {"\"\xed\xa0\x80\"", "at byte 1: invalid UTF-8 in string"},
    {"[1, 2", "at byte 5: expected ',' or ']' after an array element, got end of text"},
  }));
  CAPTURE(c.text);
  auto message = parse_error(c.text);
  CHECK_THAT(message, Contains("invalid JSON ") && Contains(c.message));
}

TEST_CASE("json error snippets show about 20 characters around the offset on one line",
          "[net][json]") {
  auto message = parse_error("{\"cluster\": {\"worker\": [\"a:1\"\n \"b:2\"]}}");
  // The error sits at byte 31 (the second string); the snippet escapes the newline.
  CHECK_THAT(message, Contains("at byte 31"));
  CHECK_THAT(message, Contains("(near `...: [\"a:1\"\\n \"b:2\"]}}`)"));
  auto start = parse_error("[1 2]");
  CHECK_THAT(start, Contains("(near `[1 2]`)"));
}

TEST_CASE("json refuses nesting deeper than 256 levels", "[net][json]") {
  CHECK_NOTHROW(JsonValue::parse(std::string(256, '[') + std::string(256, ']')));
  auto message = parse_error(std::string(300, '[') + std::string(300, ']'));
  CHECK_THAT(message, Contains("at byte 256: values are nested deeper than 256 levels"));
}
