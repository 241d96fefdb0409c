#include <troupe/core/json.hpp>

#include <charconv>
#include <cstdlib>
#include <set>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

// Deep enough for any configuration, shallow enough that the recursive
// descent cannot overflow a fiber stack.
constexpr int max_depth = 256;

// Bytes of context on each side of an error offset.
constexpr size_t snippet_radius = 10;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

const char* hex_digits = "0123456789abcdef";

/// `c` as it can be printed inside a one-line message: control characters
/// and non-ASCII bytes become escapes.
void append_printable(std::string& out, char c) {
  auto byte = static_cast<unsigned char>(c);
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  if (byte < 0x20 || byte >= 0x7f) {
    out += "\\x";
    out += hex_digits[byte >> 4];
    out += hex_digits[byte & 0xf];
    return;
  }
  out += c;
}

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xc0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xe0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  }
}

/// Length of the well-formed UTF-8 sequence at the start of `text`, or 0
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence_length(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0)
      low = 0xa0;
    else if (lead == 0xed)
      high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0)
      low = 0x90;
    else if (lead == 0xf4)
      high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high)
    return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf)
      return 0;
  return length;
}

/// Recursive-descent parser over one document; every error names the byte
/// offset and quotes the text around it.
class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonValue document() {
    skip_whitespace();
    auto result = value(0);
    skip_whitespace();
    if (pos_ != text_.size())
      reject("unexpected " + found() + " after the JSON value");
    return result;
  }

private:
  [[noreturn]] void reject_at(size_t at, const std::string& why) const {
    // About 20 characters around `at`, on one line.
    auto begin = at > snippet_radius ? at - snippet_radius : 0;
    auto end = std::min(text_.size(), at + snippet_radius);
    std::string snippet = begin > 0 ? "..." : "";
    for (auto i = begin; i < end; ++i)
      append_printable(snippet, text_[i]);
    if (end < text_.size())
      snippet += "...";
    fail(Errc::invalid_argument,
         "invalid JSON at byte " + std::to_string(at) + ": " + why + " (near `" + snippet + "`)");
  }

  [[noreturn]] void reject(const std::string& why) const { reject_at(pos_, why); }

  bool at_end() const noexcept { return pos_ >= text_.size(); }

  char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }

  /// What sits at the current position, for "expected X, got Y".
  std::string found() const {
    if (at_end())
      return "end of text";
    std::string out = "'";
    append_printable(out, text_[pos_]);
    return out + "'";
  }

  void skip_whitespace() {
    while (!at_end()) {
      auto c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return;
      ++pos_;
    }
  }

  JsonValue value(int depth) {
    switch (peek()) {
      case '{': return object(depth);
      case '[': return array(depth);
      case '"': return JsonValue::string(string_literal());
      case 't': literal("true"); return JsonValue::boolean(true);
      case 'f': literal("false"); return JsonValue::boolean(false);
      case 'n': literal("null"); return JsonValue{};
      case '\'': reject("strings and keys take double quotes, got '");
      default: break;
    }
    if (peek() == '-' || is_digit(peek()))
      return number();
    reject("expected a value (object, array, string, number, true, false or null), got " + found());
  }

  void literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      reject("expected a value (object, array, string, number, true, false or null), got "
             + found());
    pos_ += word.size();
  }

  void enter(int depth) const {
    if (depth >= max_depth)
      reject("values are nested deeper than " + std::to_string(max_depth) + " levels");
  }

  JsonValue object(int depth) {
    enter(depth);
    ++pos_; // '{'
    std::vector<std::string> keys;
    std::vector<JsonValue> values;
    std::set<std::string, std::less<>> seen;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return JsonValue::object(std::move(keys), std::move(values));
    }
    for (;;) {
      skip_whitespace();
      if (peek() != '"') {
        if (peek() == '}')
          reject("trailing comma before '}'");
        reject("expected a key in double quotes, got " + found());
      }
      const auto key_pos = pos_;
      auto key = string_literal();
      if (!seen.insert(key).second)
        reject_at(key_pos, "duplicate key " + json_quote(key) + " in object");
      skip_whitespace();
      if (peek() != ':')
        reject("expected ':' after key " + json_quote(key) + ", got " + found());
      ++pos_;
      skip_whitespace();
      values.push_back(value(depth + 1));
      keys.push_back(std::move(key));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return JsonValue::object(std::move(keys), std::move(values));
      }
      reject("expected ',' or '}' after an object member, got " + found());
    }
  }

  JsonValue array(int depth) {
    enter(depth);
    ++pos_; // '['
    std::vector<JsonValue> items;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return JsonValue::array(std::move(items));
    }
    for (;;) {
      skip_whitespace();
      if (peek() == ']')
        reject("trailing comma before ']'");
      items.push_back(value(depth + 1));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return JsonValue::array(std::move(items));
      }
      reject("expected ',' or ']' after an array element, got " + found());
    }
  }

  /// Four hex digits after "\u"; pos_ points at the first.
  uint32_t hex4() {
    uint32_t out = 0;
    for (int i = 0; i < 4; ++i) {
      auto digit = at_end() ? -1 : hex_value(text_[pos_]);
      if (digit < 0)
        reject("expected 4 hex digits after \\u, got " + found());
      out = out * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    return out;
  }

  /// The code point of a "\uXXXX" escape (two for a surrogate pair); pos_
  /// points after the 'u'.
  uint32_t unicode_escape(size_t escape_pos) {
    auto code = hex4();
    if (code >= 0xdc00 && code <= 0xdfff)
      reject_at(escape_pos, "lone low surrogate \\u" + std::string(text_.substr(escape_pos + 2, 4))
                              + " (it must follow a high surrogate \\uD800-\\uDBFF)");
    if (code < 0xd800 || code > 0xdbff)
      return code;
    if (text_.substr(pos_, 2) != "\\u")
      reject_at(escape_pos, "high surrogate \\u" + std::string(text_.substr(escape_pos + 2, 4))
                              + " is not followed by a low surrogate \\uDC00-\\uDFFF");
    pos_ += 2;
    auto low = hex4();
    if (low < 0xdc00 || low > 0xdfff)
      reject_at(escape_pos, "high surrogate \\u" + std::string(text_.substr(escape_pos + 2, 4))
                              + " is not followed by a low surrogate \\uDC00-\\uDFFF");
    return 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
  }

  std::string string_literal() {
    const auto start = pos_;
    ++pos_; // '"'
    std::string out;
    for (;;) {
      if (at_end())
        reject_at(start, "unterminated string (no closing '\"')");
      auto c = text_[pos_];
      auto byte = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\') {
        const auto escape_pos = pos_;
        ++pos_;
        auto e = peek();
        ++pos_;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': append_utf8(out, unicode_escape(escape_pos)); break;
          default:
            pos_ = escape_pos;
            reject("invalid escape in string (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
        }
        continue;
      }
      if (byte < 0x20)
        reject("raw control character in string (escape it, e.g. \\n or \\u00"
               + std::string{hex_digits[byte >> 4], hex_digits[byte & 0xf]} + ")");
      if (byte < 0x80) {
        out += c;
        ++pos_;
        continue;
      }
      auto length = utf8_sequence_length(text_.substr(pos_));
      if (length == 0)
        reject("invalid UTF-8 in string");
      out.append(text_.substr(pos_, length));
      pos_ += length;
    }
  }

  JsonValue number() {
    const auto start = pos_;
    if (peek() == '-')
      ++pos_;
    if (!is_digit(peek()))
      reject("expected a digit after '-', got " + found());
    if (peek() == '0') {
      ++pos_;
      if (is_digit(peek()))
        reject_at(start, "leading zeros are not allowed in numbers");
    } else {
      while (is_digit(peek()))
        ++pos_;
    }
    if (peek() == '.') {
      ++pos_;
      if (!is_digit(peek()))
        reject("expected a digit after '.', got " + found());
      while (is_digit(peek()))
        ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      if (!is_digit(peek()))
        reject("expected a digit in the exponent, got " + found());
      while (is_digit(peek()))
        ++pos_;
    }
    return JsonValue::number(std::string(text_.substr(start, pos_ - start)));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void append_json(std::string& out, const JsonValue& value) {
  switch (value.kind()) {
    case JsonValue::Kind::null: out += "null"; return;
    case JsonValue::Kind::boolean: out += value.as_bool() ? "true" : "false"; return;
    case JsonValue::Kind::number: out += value.as_string(); return;
    case JsonValue::Kind::string: out += json_quote(value.as_string()); return;
    case JsonValue::Kind::array:
      out += '[';
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0)
          out += ", ";
        append_json(out, value.items()[i]);
      }
      out += ']';
      return;
    case JsonValue::Kind::object:
      out += '{';
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0)
          out += ", ";
        out += json_quote(value.keys()[i]);
        out += ": ";
        append_json(out, value.items()[i]);
      }
      out += '}';
      return;
  }
}

} // namespace

JsonValue JsonValue::parse(std::string_view text) {
  return Parser{text}.document();
}

JsonValue JsonValue::boolean(bool value) {
  JsonValue out;
  out.kind_ = Kind::boolean;
  out.bool_ = value;
  return out;
}

JsonValue JsonValue::number(std::string text) {
  JsonValue out;
  out.kind_ = Kind::number;
  out.text_ = std::move(text);
  return out;
}

JsonValue JsonValue::string(std::string value) {
  JsonValue out;
  out.kind_ = Kind::string;
  out.text_ = std::move(value);
  return out;
}

JsonValue JsonValue::array(std::vector<JsonValue> items) {
  JsonValue out;
  out.kind_ = Kind::array;
  out.items_ = std::move(items);
  return out;
}

JsonValue JsonValue::object(std::vector<std::string> keys, std::vector<JsonValue> values) {
  if (keys.size() != values.size())
    fail(Errc::invalid_argument, "JsonValue::object got " + std::to_string(keys.size())
                                   + " keys but " + std::to_string(values.size())
                                   + " values: pass one value per key");
  JsonValue out;
  out.kind_ = Kind::object;
  out.keys_ = std::move(keys);
  out.items_ = std::move(values);
  return out;
}

bool JsonValue::as_bool() const {
  if (kind_ != Kind::boolean)
    fail(Errc::invalid_argument,
         "expected a JSON boolean, got " + std::string(kind_name()) + " " + to_json());
  return bool_;
}

double JsonValue::as_double() const {
  if (kind_ != Kind::number)
    fail(Errc::invalid_argument,
         "expected a JSON number, got " + std::string(kind_name()) + " " + to_json());
  double out = 0;
  auto [ptr, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), out);
  (void) ptr;
  // from_chars leaves `out` alone when the magnitude is out of range; strtod
  // gives the infinity or zero that JSON readers agree on.
  if (ec == std::errc::result_out_of_range)
    out = std::strtod(text_.c_str(), nullptr);
  return out;
}

std::optional<int64_t> JsonValue::as_integer() const {
  if (kind_ != Kind::number || text_.find_first_of(".eE") != std::string::npos)
    return std::nullopt;
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), out);
  if (ec != std::errc{} || ptr != text_.data() + text_.size())
    return std::nullopt;
  return out;
}

const std::string& JsonValue::as_string() const {
  if (kind_ != Kind::string && kind_ != Kind::number)
    fail(Errc::invalid_argument,
         "expected a JSON string, got " + std::string(kind_name()) + " " + to_json());
  return text_;
}

const JsonValue* JsonValue::find(std::string_view key) const noexcept {
  for (size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i] == key)
      return &items_[i];
  return nullptr;
}

std::string_view JsonValue::kind_name() const noexcept {
  switch (kind_) {
    case Kind::null: return "null";
    case Kind::boolean: return "boolean";
    case Kind::number: return "number";
    case Kind::string: return "string";
    case Kind::array: return "array";
    case Kind::object: return "object";
  }
  return "unknown";
}

std::string JsonValue::to_json() const {
  std::string out;
  append_json(out, *this);
  return out;
}

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (auto c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20) {
          out += "\\u00";
          out += hex_digits[byte >> 4];
          out += hex_digits[byte & 0xf];
        } else {
          out += c;
        }
      }
    }
  }
  return out + "\"";
}

} // namespace troupe
