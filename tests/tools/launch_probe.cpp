// launch_probe: the program troupe-launch starts in tests/tools.
//
// Prints what troupe-launch gave it (TF_CONFIG, TROUPE_TASK_NAME,
// TROUPE_CLUSTER_TOKEN, its pid, CUDA_VISIBLE_DEVICES) on stdout and one line on stderr, then acts
// when its TROUPE_TASK_NAME matches an option's TASK ("all" matches any):
//   --lines N            N more stdout lines "<task> line <k> xxx...", written in bursts
//   --partial TEXT       TEXT on stdout without a newline, last
//   --ignore-term TASK   ignore SIGTERM (set before anything is printed)
//   --ready-file TASK P  create file P once set up
//   --wait-file TASK P   before exiting, wait (at most 30 s) until file P exists
//   --exit TASK CODE     exit with CODE
//   --signal TASK SIG    kill itself with signal SIG
//   --stop TASK P        write its pid to file P, then stop itself (SIGSTOP)
//   --wait-stopped TASK P  before exiting, wait (at most 30 s) until file P
//                        names a stopped process
//   --hang TASK          sleep until killed
//   --pid-file TASK P    write its pid to file P once set up
//   --wait-reaped TASK P before exiting, wait (at most 30 s) until the process
//                        whose pid file P holds is gone and reaped
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "support/event_wait.hpp"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "<unset>";
}

// Whether the process whose pid file `path` holds is stopped ('T' in /proc/PID/stat).
bool stopped(const std::string& path) {
  std::ifstream pid_file(path);
  int pid = 0;
  if (!(pid_file >> pid))
    return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  std::getline(stat, content);
  const size_t close = content.rfind(')');
  return close != std::string::npos && close + 2 < content.size() && content[close + 2] == 'T';
}

// Whether the process whose pid file `path` holds is gone and reaped (no /proc entry).
bool reaped(const std::string& path) {
  std::ifstream pid_file(path);
  int pid = 0;
  if (!(pid_file >> pid))
    return false;
  return !std::filesystem::exists("/proc/" + std::to_string(pid));
}

// Written under another name and renamed, so that a reader never sees half a pid.
void write_pid(const std::string& path) {
  const std::string partial_file = path + ".partial";
  std::ofstream(partial_file) << ::getpid() << "\n";
  std::filesystem::rename(partial_file, path);
}

} // namespace

int main(int argc, char** argv) {
  const std::string task = env("TROUPE_TASK_NAME");
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto matches = [&](const std::string& target) { return target == "all" || target == task; };

  int lines = 0;
  std::string partial;
  std::string ready_file;
  std::string wait_file;
  std::string stop_file;
  std::string wait_stopped_file;
  std::string pid_file;
  std::string wait_reaped_file;
  int exit_code = 0;
  int signal = 0;
  bool hang = false;
  for (size_t i = 0; i < args.size(); ++i) {
    auto next = [&]() -> const std::string& {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "launch_probe: %s needs a value\n", args[i].c_str());
        std::exit(64);
      }
      return args[++i];
    };
    const std::string& flag = args[i];
    if (flag == "--lines") {
      lines = std::stoi(next());
    } else if (flag == "--partial") {
      partial = next();
    } else if (flag == "--ignore-term") {
      if (matches(next()))
        std::signal(SIGTERM, SIG_IGN);
    } else if (flag == "--ready-file" || flag == "--wait-file") {
      const bool mine = matches(next());
      const std::string& path = next();
      if (mine)
        (flag == "--ready-file" ? ready_file : wait_file) = path;
    } else if (flag == "--stop" || flag == "--wait-stopped") {
      const bool mine = matches(next());
      const std::string& path = next();
      if (mine)
        (flag == "--stop" ? stop_file : wait_stopped_file) = path;
    } else if (flag == "--pid-file" || flag == "--wait-reaped") {
      const bool mine = matches(next());
      const std::string& path = next();
      if (mine)
        (flag == "--pid-file" ? pid_file : wait_reaped_file) = path;
    } else if (flag == "--exit") {
      const bool mine = matches(next());
      const int code = std::stoi(next());
      if (mine)
        exit_code = code;
    } else if (flag == "--signal") {
      const bool mine = matches(next());
      const int sig = std::stoi(next());
      if (mine)
        signal = sig;
    } else if (flag == "--hang") {
      if (matches(next()))
        hang = true;
    } else {
      std::fprintf(stderr, "launch_probe: unknown option %s\n", flag.c_str());
      return 64;
    }
  }

  std::printf("TF_CONFIG=%s\n", env("TF_CONFIG").c_str());
  std::printf("TROUPE_TASK_NAME=%s\n", task.c_str());
  std::printf("TROUPE_CLUSTER_TOKEN=%s\n", env("TROUPE_CLUSTER_TOKEN").c_str());
  std::printf("PID=%d\n", static_cast<int>(::getpid()));
  std::printf("CUDA_VISIBLE_DEVICES=%s\n", env("CUDA_VISIBLE_DEVICES").c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "probe stderr from %s\n", task.c_str());
  // Many lines in few writes, so that several tasks' output races.
  const std::string filler(100, 'x');
  for (int k = 0; k < lines; ++k)
    std::printf("%s line %d %s\n", task.c_str(), k, filler.c_str());
  std::printf("%s", partial.c_str());
  std::fflush(stdout);

  if (!pid_file.empty())
    write_pid(pid_file);
  if (!ready_file.empty())
    if (std::FILE* file = std::fopen(ready_file.c_str(), "w"))
      std::fclose(file);
  if (!wait_file.empty()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    (void)troupe::testing::wait_for_change_in(std::filesystem::path(wait_file).parent_path().string(), deadline,
                                              [&] { return std::filesystem::exists(wait_file); });
  }
  // Being reaped and being stopped are states of another process that no
  // event announces (a pidfd tells an exit, waitid only a child's stop):
  // these two poll /proc, with a deadline.
  if (!wait_reaped_file.empty()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!reaped(wait_reaped_file) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!stop_file.empty()) {
    write_pid(stop_file);
    std::raise(SIGSTOP);
  }
  if (!wait_stopped_file.empty()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!stopped(wait_stopped_file) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (signal != 0)
    std::raise(signal);
  while (hang)
    ::pause();
  return exit_code;
}
