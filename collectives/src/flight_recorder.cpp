#include <troupe/collectives/flight_recorder.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <unistd.h>

#include <troupe/collectives/tensor_packing.hpp>

namespace troupe::internal {

std::string flight_record_milliseconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

FlightRecorder::FlightRecorder(std::size_t capacity) : ring_(capacity) {}

void FlightRecorder::begin(const CollectiveKey& key, const CollectiveFingerprint& fp, int64_t now_ns) {
  if (ring_.empty())
    return;
  auto& e = ring_[next_];
  e = Entry{};
  e.key = key;
  e.kind = fp.kind;
  e.op = fp.op;
  e.tensors = static_cast<uint32_t>(fp.shapes.size());
  e.bytes = block_bytes(fp);
  e.start_ns = now_ns;
  next_ = (next_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

FlightRecorder::Entry* FlightRecorder::open_entry(const CollectiveKey& key) {
  // The newest entry of `key` that is still open (collectives end soon after they begin).
  for (std::size_t i = 0; i < count_; ++i) {
    auto& e = ring_[(next_ + ring_.size() - 1 - i) % ring_.size()];
    if (e.key == key && e.state == State::open)
      return &e;
  }
  return nullptr;
}

void FlightRecorder::set_algorithm(const CollectiveKey& key, const char* algorithm) {
  if (auto* e = open_entry(key))
    e->algorithm = algorithm;
}

void FlightRecorder::end(const CollectiveKey& key, int64_t now_ns, std::optional<Errc> failure) {
  if (auto* e = open_entry(key)) {
    e->end_ns = now_ns;
    e->state = failure ? State::failed : State::done;
    if (failure)
      e->code = *failure;
  }
}

std::string FlightRecorder::render(const std::string& why,
                                   const std::function<std::string(const CollectiveKey&)>& waiting_for,
                                   int64_t now_ns, const std::string& task) const {
  std::string out = "flight recorder" + (task.empty() ? std::string{} : " of " + task) + " (" + why + "): the last "
                    + std::to_string(count_) + " collectives, oldest first";
  for (std::size_t i = 0; i < count_; ++i) {
    const auto& e = ring_[(next_ + ring_.size() - count_ + i) % ring_.size()];
    out += "\n  " + to_string(e.key) + " " + std::string(name(e.kind));
    if (e.kind == CollectiveKind::all_reduce)
      out += "(" + std::string(name(e.op)) + ")";
    out += " of " + std::to_string(e.tensors) + " tensor" + (e.tensors == 1 ? "" : "s") + ", "
           + std::to_string(e.bytes) + " bytes" + (e.algorithm ? std::string(", ") + e.algorithm : "") + ": ";
    switch (e.state) {
      case State::done:
        out += "done in " + flight_record_milliseconds(e.end_ns - e.start_ns);
        break;
      case State::failed:
        out += "failed (" + to_string(e.code) + ") after " + flight_record_milliseconds(e.end_ns - e.start_ns);
        break;
      case State::open:
        out += "open for " + flight_record_milliseconds(now_ns - e.start_ns);
        if (waiting_for)
          out += ", waiting for " + waiting_for(e.key);
        break;
    }
  }
  return out;
}

std::string write_flight_record(const std::string& dir, const std::string& task, const std::string& block) {
  if (dir.empty())
    return {};
  std::string name = task;
  for (auto& c : name)
    if (c == ':' || c == '/')
      c = '-';
  const std::string path = dir + "/flight-" + name + "-" + std::to_string(::getpid()) + ".txt";
  std::ofstream out(path, std::ios::app);
  if (!out)
    return "cannot open " + path + ": " + std::strerror(errno);
  out << block << "\n";
  if (!out)
    return "cannot write " + path;
  return {};
}

} // namespace troupe::internal
