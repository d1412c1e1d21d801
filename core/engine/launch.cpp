// The launch of the ranks: the hostfile, smpirun's and mpirun's commands with the collectives
// and eager limit they run with, and what mpirun may be given (engine/launch.hpp).
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

}  // namespace wulf
