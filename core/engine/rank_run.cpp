// Running the ranks: the job they are handed, smpirun's allocator, and what their ends and
// their status file tell of a failure (engine/launch.hpp).
#include "engine/launch.hpp"

#include "nn/framework_costs.hpp"
#include "nn/layer_table.hpp"
#include "comm/collective_choice.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "util/machine.hpp"
#include "util/paths.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <filesystem>
#include <algorithm>
#include <map>
#include <optional>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace wulf {

RankJobArgs::RankJobArgs(const Json& job, bool as_text) {
  const std::string text = json_line(job);
  if (as_text) {
    args_ = {"--job-text", text};
  } else {
    file_ = std::make_unique<TempFile>("job", text);
    args_ = {"--job", file_->path()};
  }
}

std::string wulf_last_message(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::size_t nl = text.rfind('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  for (const std::string prefix : {"wulf: error: ", "wulf: "})
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return line;
}

namespace {

// What the ranks wrote to the status file.
struct RanksStatus {
  std::map<int, std::pair<long long, std::string>> started;  // rank -> its pid and host
  int reported = -1;    // the first failure's code, else 0 for rank 0's end, -1 for nothing
  std::string failure;  // "rank 3: error: ..." of the first rank that failed
};

RanksStatus read_status(const std::string& path) {
  RanksStatus status;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {  // "started rank pid host" or "code rank message"
    std::istringstream fields(line);
    if (line.rfind("started ", 0) == 0) {
      std::string word, host;
      int rank = 0;
      long long pid = 0;
      if (fields >> word >> rank >> pid >> host) status.started[rank] = {pid, host};
      continue;
    }
    int c = 0, r = 0;
    if (!(fields >> c >> r)) continue;
    if (c != 0 && status.reported <= 0) {
      status.reported = c;
      std::string message;
      std::getline(fields, message);
      status.failure = "rank " + std::to_string(r) + ":" + message;
    } else if (status.reported < 0) {
      status.reported = c;
    }
  }
  return status;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// The ranks on this machine whose process is stopped (SIGSTOP, a debugger), by their pids in
// the status file: "rank 1 (pid 4242) is stopped". Empty when none is.
std::string stopped_ranks(const std::string& status_file) {
  const RanksStatus status = read_status(status_file);
  const std::string here = host_name();
  std::map<long long, std::vector<int>> ranks_of;  // under smpirun all ranks share one process
  for (const auto& [rank, where] : status.started)
    if (where.second == here) ranks_of[where.first].push_back(rank);
  std::string text;
  for (const auto& [pid, ranks] : ranks_of) {
    const char state = process_state(static_cast<int>(pid));
    if (state != 'T' && state != 't') continue;
    text += (text.empty() ? "" : "; ") + rank_list(ranks) + " (pid " + std::to_string(pid) + ") " +
            (ranks.size() == 1 ? "is" : "are") + " stopped";
  }
  return text;
}

// A rank that mpirun saw killed by a signal, from its report on its standard error
// ("process rank 1 with PID 0 on node vm exited on signal 9 (Killed)"; Open MPI 4.1 gives
// no pid there, the status file does): "rank 1 (pid 4242) was killed by SIGKILL".
std::string killed_rank(const std::string& mpirun_err, const RanksStatus& status) {
  static const std::regex report(R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+))");
  std::smatch m;
  if (!std::regex_search(mpirun_err, m, report)) return "";
  const int rank = std::stoi(m[1]), signal = std::stoi(m[2]);
  const auto it = status.started.find(rank);
  const std::string pid = it == status.started.end() ? "" : " (pid " + std::to_string(it->second.first) + ")";
  return "rank " + std::to_string(rank) + pid + " was killed by " + signal_name(signal);
}

}  // namespace

SimAllocator sim_allocator() {
  if (const char* set = std::getenv("LD_PRELOAD")) {
    if (!*set) return {"", "glibc"};
    // The loader skips an object it cannot open (with a word on stderr) and the run goes on
    // on glibc's malloc: the record says which were not there, not that they were used.
    std::string missing;
    for (const std::string& object : split_list(set, ' '))
      for (const std::string& path : split_list(object, ':'))
        if (path.find('/') != std::string::npos && ::access(path.c_str(), R_OK) != 0)
          missing += (missing.empty() ? "" : ", ") + path;
    if (!missing.empty())
      return {"", "glibc (LD_PRELOAD=" + std::string(set) + " could not be preloaded: " + missing +
                      " is no readable file)"};
    return {"", std::string("LD_PRELOAD=") + set};
  }
#if defined(__SANITIZE_ADDRESS__)
  return {"", "glibc"};
#else
  // Where Debian's multiarch packages put it (libtcmalloc-minimal4).
  static const std::string tcmalloc = [] {
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"})
      if (const std::string path = std::string(dir) + "/libtcmalloc_minimal.so.4"; ::access(path.c_str(), R_OK) == 0)
        return path;
    return std::string();
  }();
  return tcmalloc.empty() ? SimAllocator{"", "glibc"} : SimAllocator{tcmalloc, "tcmalloc"};
#endif
}

RanksOutcome run_ranks(const std::vector<std::string>& cmd, bool simulation, bool capture_output, double timeout_s,
                       const std::vector<std::string>& env) {
  // The ranks append to a file this process made (mode 0600, in $TMPDIR), which goes with
  // the object however this function ends.
  const TempFile status_file("status", "");
  ChildOptions options;
  options.capture = capture_output;
  options.keep_err = !capture_output && !simulation;  // mpirun's word on a rank it saw killed
  options.timeout_s = timeout_s;
  options.env.push_back("WULF_STATUS_FILE=" + status_file.path());
  // The ranks end should this process have ended before they start (rank_main.cpp).
  options.env.push_back("WULF_FRONT_END_PID=" + std::to_string(::getpid()));
  options.env.insert(options.env.end(), env.begin(), env.end());
  // smpirun's files (SimGrid's copies of the rank program, one per rank, which it removes
  // only when it ends well) go in a folder of this run's, which goes with the object.
  std::optional<TempDir> smpi_files;
  if (simulation) options.env.push_back("TMPDIR=" + smpi_files.emplace("smpi").str());
  // All simulated ranks live in one process, and SMPI's collectives allocate and free
  // message-sized buffers on every call: with glibc's default thresholds each one is a
  // fresh mmap and its page faults (a third of the wall time of 16 digits ranks). Keeping
  // them on the heap halves that cost; the simulated times do not change.
  if (simulation && !std::getenv("GLIBC_TUNABLES"))
    options.env.push_back(std::string("GLIBC_TUNABLES=") + sim_glibc_tunables);
  if (simulation)
    if (const SimAllocator a = sim_allocator(); !a.preload.empty()) options.env.push_back("LD_PRELOAD=" + a.preload);
  options.on_timeout = [&] { return stopped_ranks(status_file.path()); };
  // The launcher by its name, also where a wrapper starts it (the testbed's `ip netns exec`).
  for (const std::string& word : cmd)
    if (const std::string name = std::filesystem::path(word).filename().string(); name == "mpirun" || name == "smpirun") {
      options.name = name;
      break;
    }
  RanksOutcome outcome;
  ChildResult child;
  try {
    child = run_child(cmd, options);
  } catch (const std::exception& e) {  // it could not be started (Interrupted and TimedOut pass)
    throw InputError(e.what());
  }
  outcome.output = std::move(child.out);
  const RanksStatus status = read_status(status_file.path());
  outcome.failure = status.failure;
  if (outcome.failure.empty() && child.code != 0) outcome.failure = killed_rank(child.err, status);
  if (outcome.failure.empty() && capture_output && child.code != 0) outcome.failure = child.err;
  if (child.code == 0 && status.reported < 0) {
    outcome.code = 1;
    outcome.failure = "the run ended without a result: a rank ended before it finished";
  } else {
    outcome.code = child.code == 0 ? status.reported : child.code;
  }
  return outcome;
}

}  // namespace wulf
