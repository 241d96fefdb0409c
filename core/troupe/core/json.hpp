#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/core/fwd.hpp>

namespace troupe {

/// One value of a JSON document (RFC 8259), as read by JsonValue::parse.
///
/// Small and strict: enough for TF_CONFIG and cluster specs, not a general
/// JSON library. Objects keep their members in document order; a key that
/// appears twice is an error. Numbers keep their text, so an index such as
/// 3 can be told apart from 3.0.
class JsonValue {
public:
  enum class Kind : unsigned char { null, boolean, number, string, array, object };

  /// A null value.
  JsonValue() = default;

  /// Parses a whole document: one value, surrounded by optional whitespace.
  ///
  /// Rejects everything RFC 8259 rejects (trailing commas, comments, single
  /// quotes, leading zeros, NaN, raw control characters, invalid UTF-8, lone
  /// surrogates in \uXXXX escapes) and nesting deeper than 256 levels. The
  /// Error(invalid_argument) gives the byte offset and quotes about 20
  /// characters around it.
  [[nodiscard]] static JsonValue parse(std::string_view text);

  // -- factories ---------------------------------------------------------------

  [[nodiscard]] static JsonValue boolean(bool value);
  /// A number from its JSON text (e.g. "12", "-0.5e3"); the text is not checked.
  [[nodiscard]] static JsonValue number(std::string text);
  [[nodiscard]] static JsonValue string(std::string value);
  [[nodiscard]] static JsonValue array(std::vector<JsonValue> items);
  /// An object from keys and values of the same length, in that order.
  [[nodiscard]] static JsonValue object(std::vector<std::string> keys,
                                        std::vector<JsonValue> values);

  // -- properties --------------------------------------------------------------

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] bool is_null() const noexcept { return kind_ == Kind::null; }
  [[nodiscard]] bool is_bool() const noexcept { return kind_ == Kind::boolean; }
  [[nodiscard]] bool is_number() const noexcept { return kind_ == Kind::number; }
  [[nodiscard]] bool is_string() const noexcept { return kind_ == Kind::string; }
  [[nodiscard]] bool is_array() const noexcept { return kind_ == Kind::array; }
  [[nodiscard]] bool is_object() const noexcept { return kind_ == Kind::object; }

  /// The value of a boolean; Error(invalid_argument) for other kinds.
  [[nodiscard]] bool as_bool() const;

  /// The value of a number as a double; Error(invalid_argument) for other kinds.
  [[nodiscard]] double as_double() const;

  /// The value of a number written as an integer (no fraction, no exponent)
  /// that fits int64_t; nullopt for any other value.
  [[nodiscard]] std::optional<int64_t> as_integer() const;

  /// The text of a number or the decoded UTF-8 of a string; Error(invalid_argument)
  /// for other kinds.
  [[nodiscard]] const std::string& as_string() const;

  /// Elements of an array, or member values of an object in document order;
  /// empty for other kinds.
  [[nodiscard]] const std::vector<JsonValue>& items() const noexcept { return items_; }

  /// Member keys of an object in document order (parallel to items()); empty
  /// for other kinds.
  [[nodiscard]] const std::vector<std::string>& keys() const noexcept { return keys_; }

  /// Number of elements or members; 0 for scalars.
  [[nodiscard]] size_t size() const noexcept { return items_.size(); }

  /// The member `key` of an object; nullptr when absent or not an object.
  [[nodiscard]] const JsonValue* find(std::string_view key) const noexcept;

  /// "null", "boolean", "number", "string", "array" or "object", for messages.
  [[nodiscard]] std::string_view kind_name() const noexcept;

  // -- conversions -------------------------------------------------------------

  /// Serializes as Python's json.dumps does: ", " and ": " separators, members
  /// in document order, strings escaped (non-ASCII kept as UTF-8).
  [[nodiscard]] std::string to_json() const;

  friend bool operator==(const JsonValue&, const JsonValue&) = default;

private:
  Kind kind_ = Kind::null;
  bool bool_ = false;
  std::string text_; // string value or number text
  std::vector<std::string> keys_;
  std::vector<JsonValue> items_;
};

/// `text` as a JSON string literal, quotes included: a"b becomes "a\"b".
[[nodiscard]] std::string json_quote(std::string_view text);

} // namespace troupe
