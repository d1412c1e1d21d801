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
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace wulf {

std::string wulf_program(const std::string& name) { return helper_program(name); }

namespace {

std::string platform_helper(const std::string& verb, const std::string& file, const std::string& extra = "") {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw InputError("platform " + file + ": no such file");
  std::string text, errors;
  std::vector<std::string> cmd{wulf_program("wulf-platform"), verb, file};
  if (!extra.empty()) cmd.push_back(extra);
  if (run_program_captured(cmd, text, errors) != 0) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    throw InputError("platform " + file + ": " + (errors.empty() ? "SimGrid cannot load it" : errors));
  }
  return text;
}

// The hosts in `wulf-platform hosts` output: "name cores speed group node nics" per line.
std::vector<PlatformHost> parse_hosts(const std::string& file, const std::string& text) {
  std::vector<PlatformHost> hosts;
  std::istringstream lines(text);
  PlatformHost h;
  std::string group, node, nics;
  while (lines >> h.name >> h.cores >> h.speed >> group >> node >> nics) {
    h.group = group == "-" ? "" : group;
    const auto n = parse_number(node), k = parse_number(nics);
    h.node = n && *n >= 0 ? static_cast<int>(*n) : -1;
    h.nics = k && *k >= 1 ? static_cast<int>(*k) : 0;
    hosts.push_back(h);
  }
  if (hosts.empty()) throw InputError("platform " + file + ": it has no hosts");
  return hosts;
}

}  // namespace

std::vector<PlatformHost> platform_hosts(const std::string& file, long long ranks, long long ranks_per_host) {
  std::vector<PlatformHost> hosts = parse_hosts(file, platform_helper("hosts", file));
  if (ranks_per_host > 0)
    for (auto& h : hosts) h.cores = static_cast<int>(std::min<long long>(h.cores, ranks_per_host));
  if (ranks > 0) {  // the hosts the ranks fill, in hostfile order, must reach each other
    std::size_t used = 0;
    for (long long cores = 0; used < hosts.size() && cores < ranks; ++used) cores += hosts[used].cores;
    platform_helper("hosts", file, std::to_string(used));
  }
  return hosts;
}

std::vector<PlatformHost> placed_hosts(const std::string& file, const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
  // Every name a host and each pair routed, checked by the run that lists the hosts.
  const std::vector<PlatformHost> all = parse_hosts(file, platform_helper("hosts", file, list));
  std::map<std::string, int> ranks_on;
  std::vector<PlatformHost> placed;
  for (const std::string& n : names) {
    const auto h = std::find_if(all.begin(), all.end(), [&](const PlatformHost& p) { return p.name == n; });
    if (h == all.end()) throw InputError("--hosts: the platform " + file + " has no host '" + n + "'");
    if (++ranks_on[n] > h->cores)
      throw InputError("--hosts: " + std::to_string(ranks_on[n]) + " ranks on host " + n + ", which has " +
                       std::to_string(h->cores) + (h->cores == 1 ? " core" : " cores"));
    PlatformHost one = *h;
    one.cores = 1;
    placed.push_back(one);
  }
  return placed;
}

std::string reduce_layout_of(const std::vector<PlatformHost>& hosts, int np) {
  std::map<std::string, int> group_index;  // group names in sorted order: A, B, C, D
  std::vector<const PlatformHost*> used;
  for (long long filled = 0; filled < np && used.size() < hosts.size(); filled += hosts[used.size()].cores)
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

namespace {

const Json* zone_property(const Json& zone, const std::string& key) {
  if (const auto props = zone.find("properties"); props != zone.end())
    if (const auto v = props->find(key); v != props->end()) return &*v;
  if (const auto children = zone.find("zones"); children != zone.end())
    for (const Json& child : *children)
      if (const Json* v = zone_property(child, key)) return v;
  return nullptr;
}

}  // namespace

double platform_cost_usd(const std::string& file) {
  const Json info = platform_info(file);
  const Json* v = zone_property(info.at("zone"), "wulf:cost-usd");
  if (!v) return 0;
  const auto cost = parse_number(v->get<std::string>());
  if (!cost || !(*cost > 0) || !std::isfinite(*cost))
    throw InputError("platform " + file + ": wulf:cost-usd '" + v->get<std::string>() +
                     "' is not a positive number of USD");
  return *cost;
}

GrownPlatform::GrownPlatform(const std::string& file, long long hosts) : TempFile("platform", "") {
  if (hosts < 1 || hosts > 100000) throw InputError("--grow: " + std::to_string(hosts) + " hosts is out of 1..100000");
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

std::string hostfile_text(const std::vector<PlatformHost>& hosts) {
  std::string text;
  for (const auto& h : hosts) text += h.name + ":" + std::to_string(h.cores) + "\n";
  return text;
}

}  // namespace

Hostfile::Hostfile(const std::vector<PlatformHost>& hosts) : TempFile("hostfile", hostfile_text(hosts)) {}

std::vector<std::string> smpirun_command(const std::string& platform, const Hostfile& hosts, int np,
                                         const std::vector<std::string>& extra_cfg, const std::string& program) {
  const std::string smpirun = find_program("smpirun");
  if (smpirun.empty()) throw InputError("--engine sim: smpirun is not on PATH (install libsimgrid-dev)");
  std::vector<std::string> cmd{smpirun, "-np", std::to_string(np), "-platform", platform, "-hostfile", hosts.path(),
                               // Only wulf charges compute; reading the clock costs nothing (SMPI's
                               // default adds 10 ns per MPI_Wtime, which would land in the phase times).
                               "--cfg=smpi/simulate-computation:no", "--cfg=smpi/wtime:0", "--log=root.thres:warning",
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

WulfRun run_wulf_for_record(std::vector<std::string> args, const std::string& path) {
  WulfRun run;
  run.command = "wulf";
  for (const auto& a : args) run.command += " " + a;
  args.insert(args.end(), {"--out", path});
  std::vector<std::string> cmd{wulf_program("wulf")};
  cmd.insert(cmd.end(), args.begin(), args.end());
  run.code = run_program_captured(cmd, run.out, run.err);
  return run;
}

void report_rank_status(int code, int rank, const std::string& message) {
  const char* path = std::getenv("WULF_STATUS_FILE");
  if (!path || !*path) return;
  std::string line = std::to_string(code) + " " + std::to_string(rank) + " " + message;
  for (char& c : line)
    if (c == '\n') c = ' ';
  line += '\n';
  // Appends of one short line do not interleave.
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
}

RanksOutcome run_ranks(const std::vector<std::string>& cmd, bool simulation, bool capture_output) {
  char status_name[] = "/tmp/wulf-status-XXXXXX";
  const int status_fd = ::mkstemp(status_name);
  if (status_fd < 0) throw InputError("cannot create a status file in /tmp");
  ::close(status_fd);
  const std::string status_file = status_name;
  std::filesystem::remove(status_file);
  ::setenv("WULF_STATUS_FILE", status_file.c_str(), 1);
  // All simulated ranks live in one process, and SMPI's collectives allocate and free
  // message-sized buffers on every call: with glibc's default thresholds each one is a
  // fresh mmap and its page faults (a third of the wall time of 16 digits ranks). Keeping
  // them on the heap halves that cost; the simulated times do not change.
  const bool set_tunables = simulation && !std::getenv("GLIBC_TUNABLES");
  if (set_tunables)
    ::setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824", 1);
  RanksOutcome outcome;
  int code = 0;
  try {
    std::string errors;
    code = capture_output ? run_program_captured(cmd, outcome.output, errors) : run_program(cmd);
    if (capture_output && code != 0 && outcome.failure.empty()) outcome.failure = errors;
  } catch (const std::exception& e) {
    ::unsetenv("WULF_STATUS_FILE");
    if (set_tunables) ::unsetenv("GLIBC_TUNABLES");
    throw InputError(e.what());
  }
  ::unsetenv("WULF_STATUS_FILE");
  if (set_tunables) ::unsetenv("GLIBC_TUNABLES");

  std::ifstream status(status_file);
  int reported = -1;
  std::string line;
  while (std::getline(status, line)) {  // "code rank message", one line per rank that ended
    std::istringstream fields(line);
    int c = 0, r = 0;
    if (!(fields >> c >> r)) continue;
    if (c != 0 && reported <= 0) {
      reported = c;
      std::string message;
      std::getline(fields, message);
      outcome.failure = "rank " + std::to_string(r) + ":" + message;
    } else if (reported < 0) {
      reported = c;
    }
  }
  status.close();
  std::filesystem::remove(status_file);
  if (code == 0 && reported < 0) {
    outcome.code = 1;
    outcome.failure = "the run ended without a result: a rank ended before it finished";
  } else {
    outcome.code = code == 0 ? reported : code;
  }
  return outcome;
}

}  // namespace wulf
