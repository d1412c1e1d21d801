#include "engine/launch.hpp"

#include "nn/framework_costs.hpp"
#include "nn/layer_table.hpp"
#include "engine/collective_choice.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "util/machine.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"
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

std::string wulf_program(const std::string& name) { return helper_program(name); }

int run_wulf_platform(const std::vector<std::string>& args, std::string& out, std::string& err) {
  constexpr double GiB = 1024.0 * 1024 * 1024;
  std::vector<std::string> argv{wulf_program("wulf-platform")};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildOptions options;
  options.capture = true;
  if (const std::optional<MachineMemory> machine = machine_memory())
    options.address_space_bytes = std::max(machine->bytes, GiB) + GiB;
  // SimGrid's loader allocates a host's and a link's objects by the thousand: on transparent
  // huge pages (glibc's malloc asks for them) a million hosts load in 9.0 s against 18.3 s,
  // 1 024 GPUs of DGX-1 in 1.0 against 1.25 s, in the same memory. A GLIBC_TUNABLES of the
  // environment stands instead.
  if (!std::getenv("GLIBC_TUNABLES")) options.env.push_back("GLIBC_TUNABLES=glibc.malloc.hugetlb=1");
  ChildResult r = run_child(argv, options);
  out = std::move(r.out), err = std::move(r.err);
  return r.code;
}

std::vector<int> parse_ring_places(const std::string& text, const std::string& what) {
  std::vector<int> places;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    const std::optional<double> v = parse_number(part);
    if (!v || *v < 0 || *v != static_cast<double>(static_cast<int>(*v)) || *v > 1e6)
      throw InputError(what + " '" + text + "': '" + part + "' is not a place (a whole number from 0)");
    places.push_back(static_cast<int>(*v));
    at = end + 1;
  }
  return places;
}

namespace {

std::string platform_helper(const std::string& verb, const std::string& file,
                            const std::vector<std::string>& extra = {}) {
  check_input_file(file, "platform", platform_file_limit);  // missing, a folder, a FIFO: said before SimGrid sees it
  std::string text, errors;
  std::vector<std::string> args{verb, file};
  args.insert(args.end(), extra.begin(), extra.end());
  if (run_wulf_platform(args, text, errors) != 0) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    throw InputError("platform " + file + ": " + (errors.empty() ? "SimGrid cannot load it" : errors));
  }
  return text;
}

// `wulf-platform hosts` output: "cost-usd X" ("-": none), then "name cores speed group node
// nics device efficiency rings ddp" per host.
PlatformHosts parse_hosts(const std::string& file, const std::string& text) {
  PlatformHosts out;
  std::istringstream lines(text);
  std::string key, cost;
  if (!(lines >> key >> cost) || key != "cost-usd")
    throw InputError("platform " + file + ": wulf-platform said no price line");
  if (cost != "-") out.cost_usd = parse_number(cost).value_or(0);
  PlatformHost h;
  std::string group, node, nics, device, efficiency, rings, ddp;
  while (lines >> h.name >> h.cores >> h.speed >> group >> node >> nics >> device >> efficiency >> rings >> ddp) {
    h.group = group == "-" ? "" : group;
    // wulf:efficiency and wulf:ddp are checked before any rank starts; the ranks read them, and
    // wulf:device, from their host (sim) or the testbed's description.
    if (efficiency != "-") parse_kind_efficiency(efficiency, "platform " + file + ", host " + h.name + ": wulf:efficiency");
    if (ddp != "-") parse_framework_costs(ddp, "platform " + file + ", host " + h.name + ": wulf:ddp");
    const auto n = parse_number(node), k = parse_number(nics);
    h.node = n && *n >= 0 ? static_cast<int>(*n) : -1;
    h.nics = k && *k >= 1 ? static_cast<int>(*k) : 0;
    h.ring_places = rings == "-" ? std::vector<int>{}
                                 : parse_ring_places(rings, "platform " + file + ", host " + h.name + ": wulf:rings");
    out.hosts.push_back(h);
  }
  if (out.hosts.empty()) throw InputError("platform " + file + ": it has no hosts");
  return out;
}

// The scales that are not 1 as wulf-platform's options, appended to args: it refuses one
// that takes a platform's number out of wulf's bounds, naming the option.
void add_scales(std::vector<std::string>& args, const PlatformScales& scales) {
  for (const auto& [option, scale] : {std::pair{"--bw-scale", scales.bw}, std::pair{"--lat-scale", scales.lat},
                                      std::pair{"--speed-scale", scales.speed}})
    if (scale != 1) args.insert(args.end(), {option, fmt::format("{:.17g}", scale)});
}

}  // namespace

PlatformHosts platform_hosts(const std::string& file, long long ranks, long long ranks_per_host,
                             const PlatformScales& scales) {
  // One run of the helper: the hosts the ranks fill, in hostfile order, must reach each other.
  std::vector<std::string> which;
  if (ranks > 0) which = {"--ranks", std::to_string(ranks)};
  if (ranks > 0 && ranks_per_host > 0) which.insert(which.end(), {"--per-host", std::to_string(ranks_per_host)});
  add_scales(which, scales);
  PlatformHosts platform = parse_hosts(file, platform_helper("hosts", file, which));
  if (ranks_per_host > 0)
    for (auto& h : platform.hosts) h.cores = static_cast<int>(std::min<long long>(h.cores, ranks_per_host));
  return platform;
}

PlatformHosts placed_hosts(const std::string& file, const std::vector<std::string>& names,
                           const PlatformScales& scales) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
  // Every name a host and each pair routed, checked by the run that lists the hosts.
  std::vector<std::string> which{list};
  add_scales(which, scales);
  PlatformHosts all = parse_hosts(file, platform_helper("hosts", file, which));
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

PlatformHosts place_ranks(const std::string& file, const std::string& shown, long long np, long long ranks_per_host,
                          const std::vector<std::string>& names, const PlatformScales& scales) {
  PlatformHosts placement =
      names.empty() ? platform_hosts(file, np, ranks_per_host, scales) : placed_hosts(file, names, scales);
  long long cores = 0;
  for (const auto& h : placement.hosts) cores += h.cores;
  if (np > cores)
    throw InputError("--np " + std::to_string(np) + ": the platform " + shown + " has only " + std::to_string(cores) +
                     " cores on " + std::to_string(placement.hosts.size()) + " hosts" +
                     (ranks_per_host > 0 ? " for --ranks-per-host " + std::to_string(ranks_per_host) : ""));
  return placement;
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
  check_input_file(file, "platform", platform_file_limit);
  if (run_wulf_platform({"grow", file, std::to_string(hosts), path()}, text, errors) != 0) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    throw InputError("platform " + file + ": " + errors);
  }
}

namespace {

// One line per rank, as smpirun would unroll "name:cores" itself (into a file of its own in
// the current folder, which it leaves there when a run fails or is killed).
std::string hostfile_text(const std::vector<PlatformHost>& hosts, long long ranks) {
  std::string text;
  for (const auto& h : hosts)
    for (long long c = 0; c < h.cores && ranks > 0; ++c, --ranks) text += h.name + "\n";
  return text;
}

}  // namespace

Hostfile::Hostfile(const std::vector<PlatformHost>& hosts, long long ranks)
    : TempFile("hostfile", hostfile_text(hosts, ranks)) {}

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
                               // A progress call (MPI_Test, Comm::test) costs no time either: SMPI's
                               // default sleeps 0.1 ms a call, more with each call that fails.
                               "--cfg=smpi/test:0",
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

namespace {

// The algorithms of c that are not "default", each found; an unknown name is refused.
std::vector<std::pair<Collective, const CollectiveAlgorithm*>> chosen_algorithms(const Collectives& c) {
  std::vector<std::pair<Collective, const CollectiveAlgorithm*>> chosen;
  for (const auto& [collective, name] : {std::pair{Collective::allreduce, &c.allreduce}, {Collective::reduce, &c.reduce},
                                        {Collective::bcast, &c.bcast}, {Collective::allgather, &c.allgather},
                                        {Collective::gather, &c.gather}}) {
    if (*name == "default") continue;
    const CollectiveAlgorithm* a = find_algorithm(collective, *name);
    if (!a) throw InputError("--" + std::string(to_string(collective)) + " " + *name + ": no such algorithm");
    chosen.emplace_back(collective, a);
  }
  return chosen;
}

}  // namespace

std::vector<std::string> smpi_collective_config(const Collectives& c) {
  std::vector<std::string> cfg;
  for (const auto& [collective, a] : chosen_algorithms(c))
    if (!a->wulfs_own()) cfg.push_back("smpi/" + std::string(to_string(collective)) + ":" + std::string(a->smpi));
  return cfg;
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
  // Open MPI's tuned collectives, each forced as its fixed rules run it (collective_choice).
  std::vector<std::string> forced;
  for (const auto& [collective, a] : chosen_algorithms(c)) {
    const std::vector<std::string> mca = open_mpi_forcing(collective, *a);
    forced.insert(forced.end(), mca.begin(), mca.end());
  }
  if (!forced.empty()) cmd.insert(cmd.end(), {"--mca", "coll_tuned_use_dynamic_rules", "1"});
  cmd.insert(cmd.end(), forced.begin(), forced.end());
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  cmd.push_back(program);
  return cmd;
}

namespace {

// Open MPI 4.1's mpirun options (`mpirun --help all`) by name without their dashes (mpirun
// takes one dash or two for each), with the values each takes.
struct MpirunOption {
  std::string_view name;
  int values;
};
constexpr MpirunOption mpirun_options[] = {
    {"allow-run-as-root", 0}, {"am", 1}, {"app", 1}, {"bind-to", 1}, {"bind-to-core", 0}, {"bind-to-socket", 0},
    {"bycore", 0}, {"bynode", 0}, {"byslot", 0}, {"c", 1}, {"np", 1}, {"cf", 1}, {"cartofile", 1}, {"continuous", 0},
    {"cpu-list", 1}, {"cpu-set", 1}, {"cpus-per-proc", 1}, {"cpus-per-rank", 1}, {"d", 0}, {"debug-devel", 0},
    {"debug", 0}, {"debug-daemons", 0}, {"debug-daemons-file", 0}, {"debugger", 1}, {"default-hostfile", 1},
    {"disable-recovery", 0}, {"display-allocation", 0}, {"display-devel-allocation", 0}, {"display-devel-map", 0},
    {"display-diffable-map", 0}, {"display-map", 0}, {"display-topo", 0}, {"do-not-launch", 0},
    {"do-not-resolve", 0}, {"dvm", 0}, {"enable-instant-on-support", 0}, {"enable-recovery", 0},
    {"fwd-mpirun-port", 0}, {"get-stack-traces", 0}, {"gmca", 2}, {"h", 0}, {"help", 0}, {"H", 1}, {"host", 1},
    {"hnp", 1}, {"hostfile", 1}, {"index-argv-by-rank", 0}, {"launch-agent", 1}, {"leave-session-attached", 0},
    {"machinefile", 1}, {"map-by", 1}, {"max-restarts", 1}, {"max-vm-size", 1}, {"mca", 2},
    {"merge-stderr-to-stdout", 0}, {"N", 1}, {"n", 1}, {"nolocal", 0}, {"nooversubscribe", 0}, {"noprefix", 0},
    {"novm", 0}, {"npernode", 1}, {"npersocket", 1}, {"ompi-server", 1}, {"output-filename", 1},
    {"output-proctable", 0}, {"oversubscribe", 0}, {"path", 1}, {"pernode", 0}, {"personality", 1}, {"ppr", 1},
    {"prefix", 1}, {"preload-files", 1}, {"q", 0}, {"quiet", 0}, {"rank-by", 1}, {"report-bindings", 0},
    {"report-child-jobs-separately", 0}, {"report-events", 1}, {"report-pid", 1}, {"report-state-on-timeout", 0},
    {"report-uri", 1}, {"rf", 1}, {"rankfile", 1}, {"s", 0}, {"preload-binary", 0}, {"set-cwd-to-session-dir", 0},
    {"show-progress", 0}, {"stdin", 1}, {"tag-output", 0}, {"timeout", 1}, {"timestamp-output", 0}, {"tune", 1},
    {"tv", 0}, {"use-hwthread-cpus", 0}, {"use-regexp", 0}, {"v", 0}, {"verbose", 0}, {"V", 0}, {"version", 0},
    {"wd", 1}, {"wdir", 1}, {"x", 1}, {"xml", 0}, {"xml-file", 1}, {"xterm", 1}};

// The options wulf sets itself, and what the user gives instead.
struct WulfsOwn {
  std::initializer_list<std::string_view> names;
  std::string_view instead;
};
const WulfsOwn wulfs_own[] = {
    {{"c", "np", "n", "N", "npernode", "npersocket", "pernode", "ppr"},
     "sets the number of processes, which wulf's --np does"},
    {{"H", "host", "hostfile", "machinefile", "default-hostfile", "rf", "rankfile"},
     "sets the hosts, which wulf's --hostfile does"},
    {{"oversubscribe", "nooversubscribe"}, "sets oversubscription, which wulf's --oversubscribe on|off does"},
    {{"app"}, "sets the program; wulf starts its own rank program"},
    {{"h", "help", "V", "version", "do-not-launch"}, "starts no ranks"}};

[[noreturn]] void refuse_mpirun_word(const std::string& word, std::string_view why) {
  throw InputError(fmt::format("--mpirun-args: '{}' {}", printable(word), why));
}

}  // namespace

void check_mpirun_launch(int np, const std::string& hostfile, const std::string& oversubscribe,
                         const std::vector<std::string>& mpirun_args) {
  for (std::size_t i = 0; i < mpirun_args.size(); ++i) {
    const std::string& word = mpirun_args[i];
    if (word == ":") refuse_mpirun_word(word, "starts a second program; wulf starts its own rank program");
    if (word.size() < 2 || word[0] != '-')
      refuse_mpirun_word(word, "is no option's value, so mpirun would take it for the program to start; wulf "
                               "starts its own rank program");
    const std::string name = word.substr(word[1] == '-' ? 2 : 1);
    for (const WulfsOwn& own : wulfs_own)
      if (std::find(own.names.begin(), own.names.end(), name) != own.names.end()) refuse_mpirun_word(word, own.instead);
    const auto known = std::find_if(std::begin(mpirun_options), std::end(mpirun_options),
                                    [&](const MpirunOption& o) { return o.name == name; });
    if (known == std::end(mpirun_options))
      refuse_mpirun_word(word, "is no option of Open MPI 4.1's mpirun (mpirun --help all lists them)");
    if (i + static_cast<std::size_t>(known->values) >= mpirun_args.size())
      refuse_mpirun_word(word, fmt::format("takes {} value{}", known->values, known->values == 1 ? "" : "s"));
    if (name == "map-by") {
      std::string policy = mpirun_args[i + 1];
      std::transform(policy.begin(), policy.end(), policy.begin(), [](unsigned char c) { return std::tolower(c); });
      if (policy.rfind("ppr", 0) == 0)
        refuse_mpirun_word(word + " " + mpirun_args[i + 1], "sets the number of processes, which wulf's --np does");
      if (policy.find("oversubscribe") != std::string::npos)
        refuse_mpirun_word(word + " " + mpirun_args[i + 1],
                           "sets oversubscription, which wulf's --oversubscribe on|off does");
    }
    i += static_cast<std::size_t>(known->values);
  }
  if (hostfile.empty()) return;
  const long long slots = hostfile_slots(hostfile);
  if (slots > 0 && slots < np && oversubscribe != "on")
    throw InputError(fmt::format("--hostfile {}: it gives {} slot{}, fewer than --np {} ranks (give more slots, or "
                                 "--oversubscribe on)",
                                 hostfile, slots, slots == 1 ? "" : "s", np));
}

long long hostfile_slots(const std::string& path) {
  const std::string text = read_text_file(path, "--hostfile");
  static const std::regex around_equals(R"(\s*=\s*)");
  long long total = 0;
  bool every_line_counts = true, any_host = false;
  int number = 0;
  for (const std::string& raw : split_list(text, '\n')) {
    ++number;
    const std::string line = std::regex_replace(raw.substr(0, raw.find('#')), around_equals, "=");
    std::istringstream words(line);
    std::string host, setting;
    if (!(words >> host)) continue;
    const auto fault = [&](const std::string& what) {
      return InputError(fmt::format("--hostfile {}:{}: '{}' {}", path, number, printable(trim(raw)), what));
    };
    if (host.find('=') != std::string::npos) throw fault("begins with a setting, not a host");
    any_host = true;
    bool counted = false;
    while (words >> setting) {
      const std::size_t eq = setting.find('=');
      if (eq == std::string::npos) throw fault("holds '" + printable(setting) + "' after the host, not key=value");
      std::string key = setting.substr(0, eq);
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      const std::string value = setting.substr(eq + 1);
      if (key == "username" || key == "user") {
        if (value.empty()) throw fault(key + ": no name");
        continue;
      }
      static const std::regex count_key(R"((slots|count|cpu)|((slots|count|cpu)[-_]max|max[-_](slots|count|cpu))|port|boards|sockets|cores)");
      if (!std::regex_match(key, count_key))
        throw fault("'" + printable(key) + "' is no setting of an Open MPI hostfile (slots, max_slots, port, "
                    "username, boards, sockets, cores)");
      if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos)
        throw fault(key + "=" + printable(value) + " is not a whole number (up to 999999999)");
      if (key == "slots" || key == "count" || key == "cpu") total += std::stoll(value), counted = true;
    }
    if (!counted) every_line_counts = false;
  }
  if (!any_host) throw InputError("--hostfile " + path + ": it names no host");
  return every_line_counts ? total : 0;
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
