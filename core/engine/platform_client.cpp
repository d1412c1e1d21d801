// The platform's hosts, routes and price through wulf-platform (sim/platform_*.cpp), the ranks
// placed on them, seed 002's four-stage layout, and a grown platform (engine/launch.hpp).
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
    if (!v || *v < 0 || *v != static_cast<double>(static_cast<int>(*v)) ||
        *v > static_cast<double>(kMostRanks))
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
// nics device efficiency rings ddp memory speed16" per host.
PlatformHosts parse_hosts(const std::string& file, const std::string& text) {
  PlatformHosts out;
  std::istringstream lines(text);
  std::string key, cost;
  if (!(lines >> key >> cost) || key != "cost-usd")
    throw InputError("platform " + file + ": wulf-platform said no price line");
  if (cost != "-") out.cost_usd = parse_number(cost).value_or(0);
  PlatformHost h;
  std::string group, node, nics, device, efficiency, rings, ddp, memory, speed16;
  while (lines >> h.name >> h.cores >> h.speed >> group >> node >> nics >> device >> efficiency >> rings >> ddp >>
         memory >> speed16) {
    h.group = group == "-" ? "" : group;
    // wulf:efficiency and wulf:ddp are checked before any rank starts; the ranks read them, and
    // wulf:device, from their host (sim) or the testbed's description.
    if (efficiency != "-") parse_kind_efficiency(efficiency, "platform " + file + ", host " + h.name + ": wulf:efficiency");
    if (ddp != "-") parse_framework_costs(ddp, "platform " + file + ", host " + h.name + ": wulf:ddp");
    const auto n = parse_number(node), k = parse_number(nics);
    h.node = n && *n >= 0 ? static_cast<int>(*n) : -1;
    h.nics = k && *k >= 1 ? static_cast<int>(*k) : 0;
    h.memory = 0;
    if (memory != "-") {
      const std::optional<double> bytes = parse_number(memory);
      if (!bytes || !(*bytes >= 1) || !std::isfinite(*bytes) || *bytes > kMostDeviceMemory)
        throw InputError("platform " + file + ", host " + h.name + ": wulf:memory \"" + memory +
                         "\": expected the device's memory in bytes, from 1 to " + fmt::format("{:g}", kMostDeviceMemory));
      h.memory = *bytes;
    }
    h.speed16 = 0;
    if (speed16 != "-") {  // the sim ranks read it from their host
      const std::optional<double> rate = parse_number(speed16);
      if (!rate || !(*rate > 0) || !std::isfinite(*rate) || *rate > 1e21)
        throw InputError("platform " + file + ", host " + h.name + ": wulf:speed16 \"" + speed16 +
                         "\": expected the host's 16-bit tensor rate in flop/s, above 0 and at most 1e21");
      h.speed16 = *rate;
    }
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

}  // namespace wulf
