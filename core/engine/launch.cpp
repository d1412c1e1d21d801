#include "engine/launch.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"
#include "util/text.hpp"

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

std::string wulf_program(const std::string& name) { return helper_program(name); }

namespace {

std::string platform_helper(const std::string& verb, const std::string& file,
                            const std::vector<std::string>& extra = {}) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw InputError("platform " + file + ": no such file");
  std::string text, errors;
  std::vector<std::string> cmd{wulf_program("wulf-platform"), verb, file};
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  if (run_program_captured(cmd, text, errors) != 0) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    throw InputError("platform " + file + ": " + (errors.empty() ? "SimGrid cannot load it" : errors));
  }
  return text;
}

// `wulf-platform hosts` output: "cost-usd X" ("-": none), then "name cores speed group node
// nics" per host.
PlatformHosts parse_hosts(const std::string& file, const std::string& text) {
  PlatformHosts out;
  std::istringstream lines(text);
  std::string key, cost;
  if (!(lines >> key >> cost) || key != "cost-usd")
    throw InputError("platform " + file + ": wulf-platform said no price line");
  if (cost != "-") out.cost_usd = parse_number(cost).value_or(0);
  PlatformHost h;
  std::string group, node, nics;
  while (lines >> h.name >> h.cores >> h.speed >> group >> node >> nics) {
    h.group = group == "-" ? "" : group;
    const auto n = parse_number(node), k = parse_number(nics);
    h.node = n && *n >= 0 ? static_cast<int>(*n) : -1;
    h.nics = k && *k >= 1 ? static_cast<int>(*k) : 0;
    out.hosts.push_back(h);
  }
  if (out.hosts.empty()) throw InputError("platform " + file + ": it has no hosts");
  return out;
}

}  // namespace

PlatformHosts platform_hosts(const std::string& file, long long ranks, long long ranks_per_host) {
  // One run of the helper: the hosts the ranks fill, in hostfile order, must reach each other.
  std::vector<std::string> which;
  if (ranks > 0) which = {"--ranks", std::to_string(ranks)};
  if (ranks > 0 && ranks_per_host > 0) which.insert(which.end(), {"--per-host", std::to_string(ranks_per_host)});
  PlatformHosts platform = parse_hosts(file, platform_helper("hosts", file, which));
  if (ranks_per_host > 0)
    for (auto& h : platform.hosts) h.cores = static_cast<int>(std::min<long long>(h.cores, ranks_per_host));
  return platform;
}

PlatformHosts placed_hosts(const std::string& file, const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
  // Every name a host and each pair routed, checked by the run that lists the hosts.
  PlatformHosts all = parse_hosts(file, platform_helper("hosts", file, {list}));
  std::map<std::string, int> ranks_on;
  std::vector<PlatformHost> placed;
  for (const std::string& n : names) {
    const auto h = std::find_if(all.hosts.begin(), all.hosts.end(), [&](const PlatformHost& p) { return p.name == n; });
    if (h == all.hosts.end()) throw InputError("--hosts: the platform " + file + " has no host '" + n + "'");
    if (++ranks_on[n] > h->cores)
      throw InputError("--hosts: " + std::to_string(ranks_on[n]) + " ranks on host " + n + ", which has " +
                       std::to_string(h->cores) + (h->cores == 1 ? " core" : " cores"));
    PlatformHost one = *h;
    one.cores = 1;
    placed.push_back(one);
  }
  all.hosts = std::move(placed);
  return all;
}

std::string reduce_layout_of(const std::vector<PlatformHost>& hosts, int np) {
  std::map<std::string, int> group_index;  // group names in sorted order: A, B, C, D
  std::vector<const PlatformHost*> used;
  for (long long filled = 0; filled < np && used.size() < hosts.size(); filled += used.back()->cores)
    used.push_back(&hosts[used.size()]);
  int fan_in = 0;
  for (const PlatformHost* h : used)
    if (!h->group.empty()) {
      group_index[h->group] = 0;
      if (h->nics > 0) fan_in = fan_in == 0 ? h->nics : std::min(fan_in, h->nics);
    }
  if (group_index.empty()) return "";
  int next = 0;
  for (auto& [name, index] : group_index) index = next++;
  std::map<std::string, int> seen;  // nodes of a group without wulf:node: their order
  std::string places;
  int rank = 0;
  for (std::size_t i = 0; i < used.size() && rank < np; ++i) {
    const PlatformHost& h = *used[i];
    const int group = h.group.empty() ? -1 : group_index[h.group];
    const int node = h.group.empty() ? static_cast<int>(i) : h.node >= 0 ? h.node : seen[h.group]++;
    for (int c = 0; c < h.cores && rank < np; ++c, ++rank)
      places += (rank ? "/" : "") + std::to_string(group) + ":" + std::to_string(node);
  }
  return "fan-in=" + std::to_string(std::max(1, fan_in)) + ",places=" + places;
}

Json platform_info(const std::string& file) {
  return parse_json(platform_helper("info", file), "wulf-platform info " + file);
}

GrownPlatform::GrownPlatform(const std::string& file, long long hosts) : TempFile("platform", "") {
  if (hosts < 1) throw InputError("--grow: " + std::to_string(hosts) + " must be at least 1");
  check_in_range(static_cast<double>(hosts), kGrowRange, "grow");
  std::string text, errors;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw InputError("platform " + file + ": no such file");
  if (run_program_captured({wulf_program("wulf-platform"), "grow", file, std::to_string(hosts), path()}, text, errors) !=
      0) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    throw InputError("platform " + file + ": " + errors);
  }
}

namespace {

// One line per core, as smpirun would unroll "name:cores" itself, into a file of its own in
// the current folder, which it leaves there when a run fails or is killed.
std::string hostfile_text(const std::vector<PlatformHost>& hosts) {
  std::string text;
  for (const auto& h : hosts)
    for (int c = 0; c < h.cores; ++c) text += h.name + "\n";
  return text;
}

}  // namespace

Hostfile::Hostfile(const std::vector<PlatformHost>& hosts) : TempFile("hostfile", hostfile_text(hosts)) {}

void check_eager_limit(long long bytes, const std::string& what) {
  if (const auto b = static_cast<double>(bytes); b < kEagerLimitRange.lo || b > kEagerLimitRange.hi)
    throw InputError(what + " " + std::to_string(bytes) + ": must be a number of bytes from 1024 to 1073741824");
}

std::vector<std::string> smpi_eager_config(long long bytes) {
  if (bytes == 0) return {};
  return {"smpi/async-small-thresh:" + std::to_string(bytes), "smpi/send-is-detached-thresh:" + std::to_string(bytes)};
}

std::vector<std::string> smpirun_command(const std::string& platform, const Hostfile& hosts, int np,
                                         const std::vector<std::string>& extra_cfg, const std::string& program) {
  const std::string smpirun = find_program("smpirun");
  if (smpirun.empty()) throw InputError("--engine sim: smpirun is not on PATH (install libsimgrid-dev)");
  std::vector<std::string> cmd{smpirun, "-np", std::to_string(np), "-platform", platform, "-hostfile", hosts.path(),
                               // Only wulf charges compute; reading the clock costs nothing (SMPI's
                               // default adds 10 ns per MPI_Wtime, which would land in the phase times).
                               "--cfg=smpi/simulate-computation:no", "--cfg=smpi/wtime:0",
                               // One copy of the rank program for all ranks: it keeps no state of a
                               // rank in globals (test ranks.no_rank_state_in_globals). SMPI's
                               // default loads a private copy per rank, 2.7 MB each.
                               "--cfg=smpi/privatization:no", "--log=root.thres:warning",
                               "--log=smpi_config.thres:error"};
  for (const auto& c : extra_cfg) cmd.push_back("--cfg=" + c);
  cmd.push_back(program);
  return cmd;
}

std::vector<std::string> mpirun_command(int np, const std::string& oversubscribe, const Collectives& c,
                                        const std::string& program, const MpiSessionDir& session) {
  return mpirun_command(np, oversubscribe, c, program, session, "", {});
}

std::vector<std::string> mpirun_command(int np, const std::string& oversubscribe, const Collectives& c,
                                        const std::string& program, const MpiSessionDir& session,
                                        const std::string& hostfile, const std::vector<std::string>& extra) {
  const std::string mpirun = find_program("mpirun");
  if (mpirun.empty()) throw InputError("--engine real: mpirun is not on PATH (install openmpi-bin)");
  std::vector<std::string> cmd{mpirun, "-np", std::to_string(np), "--mca", "orte_tmpdir_base", session.str()};
  if (::geteuid() == 0) cmd.push_back("--allow-run-as-root");
  if (!hostfile.empty()) cmd.insert(cmd.end(), {"--hostfile", hostfile});
  const bool over = oversubscribe == "on" || (oversubscribe == "auto" && hostfile.empty() &&
                                              np > static_cast<int>(std::thread::hardware_concurrency()));
  if (over) cmd.push_back("--oversubscribe");
  // Open MPI's tuned collectives: allreduce 2 reduce + bcast, 3 recursive doubling;
  // reduce 5 binomial; bcast 6 binomial.
  if (c.allreduce != "default" || c.reduce != "default" || c.bcast != "default")
    cmd.insert(cmd.end(), {"--mca", "coll_tuned_use_dynamic_rules", "1"});
  if (c.allreduce != "default")
    cmd.insert(cmd.end(), {"--mca", "coll_tuned_allreduce_algorithm", c.allreduce == "rdb" ? "3" : "2"});
  if (c.reduce != "default") cmd.insert(cmd.end(), {"--mca", "coll_tuned_reduce_algorithm", "5"});
  if (c.bcast != "default") cmd.insert(cmd.end(), {"--mca", "coll_tuned_bcast_algorithm", "6"});
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  cmd.push_back(program);
  return cmd;
}

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
    options.env.push_back(
        "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824");
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
