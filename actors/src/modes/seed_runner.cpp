#include <troupe/actors/seed_runner.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

uint64_t parse_seed(std::string_view whole, std::string_view text) {
  uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end)
    fail(Errc::invalid_argument, "seed range \"" + std::string(whole)
                                   + "\": write one seed (417) or a range (1-1000) of unsigned integers");
  return value;
}

} // namespace

SeedRange SeedRange::parse(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) {
    const auto seed = parse_seed(text, text);
    return {seed, seed};
  }
  SeedRange range{parse_seed(text, text.substr(0, dash)), parse_seed(text, text.substr(dash + 1))};
  if (range.last < range.first)
    fail(Errc::invalid_argument, "seed range \"" + std::string(text) + "\": it ends before it starts");
  return range;
}

SeedRange SeedRange::from_env(SeedRange fallback) {
  if (const char* one = std::getenv("TROUPE_SIM_SEED"); one != nullptr && *one != '\0')
    return parse(one);
  if (const char* many = std::getenv("TROUPE_SIM_SEEDS"); many != nullptr && *many != '\0')
    return parse(many);
  return fallback;
}

std::string SeedRange::to_string() const {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::string SeedRunReport::summary() const {
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f s (%.1f seeds/s)", seconds, seeds_per_second());
  if (ok())
    return "seeds " + seeds.to_string() + ": all " + std::to_string(seeds_run) + " passed in " + rate;
  return "seeds " + seeds.to_string() + ": seed " + std::to_string(*failed_seed) + " failed after "
         + std::to_string(seeds_run) + " seeds in " + rate + ": " + failure + "\nreplay: " + replay;
}

SeedRunReport run_seeds(SeedRange seeds, const std::function<void(uint64_t seed)>& scenario,
                        const std::string& command) {
  SeedRunReport report;
  report.seeds = seeds;
  const auto started = std::chrono::steady_clock::now();
  for (uint64_t seed = seeds.first;; ++seed) {
    ++report.seeds_run;
    try {
      scenario(seed);
    } catch (const std::exception& e) {
      report.failed_seed = seed;
      report.failure = e.what();
    } catch (...) {
      report.failed_seed = seed;
      report.failure = "a non-standard exception";
    }
    if (report.failed_seed) {
      report.replay = "TROUPE_SIM_SEED=" + std::to_string(seed) + " " + command;
      break;
    }
    if (seed == seeds.last)
      break;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

} // namespace troupe
