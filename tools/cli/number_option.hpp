#pragma once

// A CLI11 option for a bounded number, shared by troupe's programs
// (troupe-launch, the samples, the benches): not part of the library.

#include <charconv>
#include <string>
#include <system_error>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace troupe::cli {

/// Adds `flag`, whose value must be a decimal number in [min, max], written
/// to `target`. Read with from_chars: CLI11's own conversion takes 010 as
/// octal and wraps -1 around for unsigned types. A bad value is a
/// CLI::ValidationError that names the flag, the text and `expected` ("a
/// number from <min> to <max>" when empty).
template <class T>
CLI::Option* add_number(CLI::App& app, const std::string& flag, T& target, T min, T max,
                        const std::string& help = {}, std::string expected = {}) {
  if (expected.empty())
    expected = "a number from " + std::to_string(min) + " to " + std::to_string(max);
  return app
    .add_option_function<std::string>(
      flag,
      [=, &target](const std::string& text) {
        T value{};
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc{} || ptr != end || !(value >= min && value <= max))
          throw CLI::ValidationError(flag + " \"" + text + "\" is not valid: expected " + expected);
        target = value;
      },
      help)
    ->type_name(std::is_floating_point_v<T> ? "X" : "N");
}

} // namespace troupe::cli
