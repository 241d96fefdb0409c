#include <troupe/actors/replicas/settings_agreement.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

void put_u32(std::string& out, uint32_t value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out.append(bytes, sizeof value);
}

void put_text(std::string& out, const std::string& text) {
  if (text.size() > UINT32_MAX)
    fail(Errc::invalid_argument, "a setting compared across workers is longer than 4 GiB");
  put_u32(out, static_cast<uint32_t>(text.size()));
  out += text;
}

/// Reads what put_u32/put_text wrote, failing (data_loss, naming the sender) past the end.
class Reader {
public:
  Reader(const std::string& bytes, const std::string& from) : bytes_(bytes), from_(from) {}

  uint32_t u32() {
    uint32_t value = 0;
    need(sizeof value);
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string text() {
    const uint32_t length = u32();
    need(length);
    std::string out = bytes_.substr(at_, length);
    at_ += length;
    return out;
  }
  [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - at_; }

  [[noreturn]] void corrupt() const {
    fail(Errc::data_loss, "the settings task " + from_ + " sent to compare across workers are not well "
                            "formed; does it run another version of troupe?");
  }

private:
  void need(std::size_t n) const {
    if (left() < n)
      corrupt();
  }

  const std::string& bytes_;
  const std::string& from_;
  std::size_t at_ = 0;
};

std::optional<std::string> value_of(const Settings& settings, const std::string& name) {
  for (const auto& [n, v] : settings)
    if (n == name)
      return v;
  return std::nullopt;
}

std::string shown(const std::optional<std::string>& value) {
  if (!value)
    return "not given";
  return value->empty() ? "\"\"" : *value;
}

} // namespace

std::string encode_settings(const Settings& settings) {
  std::string out;
  put_u32(out, static_cast<uint32_t>(settings.size()));
  for (const auto& [name, value] : settings) {
    put_text(out, name);
    put_text(out, value);
  }
  return out;
}

Settings decode_settings(const std::string& bytes, const std::string& from) {
  Reader in(bytes, from);
  const uint32_t count = in.u32();
  // Each setting takes at least its two lengths: bound the count before reserving.
  if (count > in.left() / (2 * sizeof(uint32_t)))
    in.corrupt();
  Settings settings;
  settings.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    auto name = in.text();
    auto value = in.text();
    settings.emplace_back(std::move(name), std::move(value));
  }
  if (in.left() != 0)
    in.corrupt();
  return settings;
}

void require_same_settings(const std::vector<WorkerSettings>& workers, const std::string& what,
                           const std::string& fix, const std::string& who) {
  if (workers.size() < 2)
    return;
  // Every name any worker gave, the chief's first, in the order given.
  std::vector<std::string> names;
  for (const auto& worker : workers)
    for (const auto& [name, value] : worker.settings)
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
  std::string differences;
  for (const auto& name : names) {
    const auto reference = value_of(workers.front().settings, name);
    std::string others;
    for (size_t w = 1; w < workers.size(); ++w) {
      const auto value = value_of(workers[w].settings, name);
      if (value != reference)
        others += (others.empty() ? "" : " and ") + shown(value) + " on " + workers[w].task;
    }
    if (!others.empty())
      differences += (differences.empty() ? "" : "; ") + ("\"" + name + "\" is ") + shown(reference) + " on "
                     + workers.front().task + ", but " + others;
  }
  if (!differences.empty())
    fail(Errc::failed_precondition, what + ": the " + who + " differ: " + differences + ". " + fix);
}

} // namespace troupe::internal
