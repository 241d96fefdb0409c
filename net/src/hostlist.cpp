#include <troupe/net/hostlist.hpp>

#include <charconv>
#include <cstdint>
#include <optional>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

// Far above any real allocation; stops "n[0-999999999]" from eating memory.
constexpr uint64_t max_hosts = 1'000'000;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// A non-empty run of at most 9 digits, or nullopt.
std::optional<uint64_t> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 9)
    return std::nullopt;
  for (auto c : text)
    if (!is_digit(c))
      return std::nullopt;
  uint64_t out = 0;
  std::from_chars(text.data(), text.data() + text.size(), out);
  return out;
}

std::string pad(uint64_t value, size_t width) {
  auto out = std::to_string(value);
  if (out.size() < width)
    out.insert(0, width - out.size(), '0');
  return out;
}

/// Parses one hostlist; every error quotes the whole list and the bad part.
class HostlistParser {
public:
  explicit HostlistParser(std::string_view hostlist) : hostlist_(hostlist) {}

  [[noreturn]] void reject(std::string_view part, const std::string& why) const {
    fail(Errc::invalid_argument, "invalid Slurm hostlist \"" + std::string(hostlist_) + "\": " + why
                                   + " in \"" + std::string(part) + "\"");
  }

  std::vector<std::string> expand() {
    std::vector<std::string> hosts;
    for (auto part : split()) {
      for (auto& host : expand_part(part, hosts.size()))
        hosts.push_back(std::move(host));
    }
    return hosts;
  }

private:
  /// Splits at the commas outside brackets.
  std::vector<std::string_view> split() const {
    std::vector<std::string_view> parts;
    size_t begin = 0;
    bool in_brackets = false;
    for (size_t i = 0; i <= hostlist_.size(); ++i) {
      const char c = i < hostlist_.size() ? hostlist_[i] : ',';
      if (c == '[') {
        if (in_brackets)
          reject(hostlist_.substr(begin, i + 1 - begin), "nested '['");
        in_brackets = true;
      } else if (c == ']') {
        if (!in_brackets)
          reject(hostlist_.substr(begin, i + 1 - begin), "']' without '['");
        in_brackets = false;
      } else if (c == ',' && (!in_brackets || i == hostlist_.size())) {
        auto part = hostlist_.substr(begin, i - begin);
        if (in_brackets)
          reject(part, "'[' without ']'");
        if (part.empty())
          reject(hostlist_, "an empty host name (two commas in a row, or one at an end)");
        parts.push_back(part);
        begin = i + 1;
      }
    }
    return parts;
  }

  /// The hosts of one comma-free part such as "rack[1-2]n[01-04]x".
  std::vector<std::string> expand_part(std::string_view part, size_t hosts_so_far) const {
    std::vector<std::string> names{""};
    size_t pos = 0;
    while (pos < part.size()) {
      auto open = part.find('[', pos);
      auto literal = part.substr(pos, open == std::string_view::npos ? part.npos : open - pos);
      for (auto& name : names)
        name += literal;
      if (open == std::string_view::npos)
        break;
      auto close = part.find(']', open);
      auto values = expand_group(part, part.substr(open + 1, close - open - 1));
      if (hosts_so_far + names.size() * values.size() > max_hosts)
        reject(part, "more than " + std::to_string(max_hosts) + " hosts");
      std::vector<std::string> next;
      next.reserve(names.size() * values.size());
      for (const auto& name : names)
        for (const auto& value : values)
          next.push_back(name + value);
      names = std::move(next);
      pos = close + 1;
    }
    return names;
  }

  /// The numbers of a bracket group such as "01-03,07", as text.
  std::vector<std::string> expand_group(std::string_view part, std::string_view group) const {
    if (group.empty())
      reject(part, "an empty range \"[]\"");
    std::vector<std::string> values;
    size_t begin = 0;
    while (begin <= group.size()) {
      auto end = group.find(',', begin);
      if (end == std::string_view::npos)
        end = group.size();
      auto range = group.substr(begin, end - begin);
      auto dash = range.find('-');
      auto low_text = range.substr(0, dash);
      auto high_text = dash == std::string_view::npos ? low_text : range.substr(dash + 1);
      auto low = parse_number(low_text);
      auto high = parse_number(high_text);
      if (!low || !high)
        reject(part, "range \"" + std::string(range)
                       + "\" is not N or N-M with N and M of at most 9 digits");
      if (*high < *low)
        reject(part,
               "range \"" + std::string(range) + "\" counts down: write the lower bound first");
      if (values.size() + (*high - *low + 1) > max_hosts)
        reject(part, "more than " + std::to_string(max_hosts) + " hosts");
      for (auto value = *low; value <= *high; ++value)
        values.push_back(pad(value, low_text.size()));
      begin = end + 1;
    }
    return values;
  }

  std::string_view hostlist_;
};

} // namespace

std::vector<std::string> expand_hostlist(std::string_view hostlist) {
  if (hostlist.empty())
    fail(Errc::invalid_argument, "invalid Slurm hostlist \"\": it names no host");
  return HostlistParser{hostlist}.expand();
}

std::vector<int> expand_tasks_per_node(std::string_view tasks_per_node) {
  auto reject = [&](std::string_view part, const std::string& why) {
    fail(Errc::invalid_argument,
         "invalid Slurm tasks-per-node list \"" + std::string(tasks_per_node) + "\": " + why
           + " in \"" + std::string(part) + "\" (expected counts such as \"2(x3),1\")");
  };
  std::vector<int> out;
  size_t begin = 0;
  while (begin <= tasks_per_node.size()) {
    auto end = tasks_per_node.find(',', begin);
    if (end == std::string_view::npos)
      end = tasks_per_node.size();
    auto part = tasks_per_node.substr(begin, end - begin);
    auto paren = part.find('(');
    auto count = parse_number(part.substr(0, paren));
    std::optional<uint64_t> repeat = 1;
    if (paren != std::string_view::npos) {
      auto rest = part.substr(paren);
      if (rest.size() < 4 || rest.substr(0, 2) != "(x" || rest.back() != ')')
        reject(part, "a repeat that is not \"(xN)\"");
      repeat = parse_number(rest.substr(2, rest.size() - 3));
    }
    if (!count || !repeat)
      reject(part, "a count that is not a number");
    if (*count == 0 || *repeat == 0)
      reject(part, "a zero count");
    if (out.size() + *repeat > max_hosts)
      reject(part, "more than " + std::to_string(max_hosts) + " nodes");
    out.insert(out.end(), *repeat, static_cast<int>(*count));
    begin = end + 1;
  }
  return out;
}

} // namespace troupe
