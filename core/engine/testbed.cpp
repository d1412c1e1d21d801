#include "engine/testbed.hpp"

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/machine.hpp"
#include "util/paths.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <sys/stat.h>
#include <unistd.h>

namespace wulf {
namespace {

// Namespaces of wulf's testbed runs: wulf-tb-<pid>.<start time>-<role>.
constexpr const char* kPrefix = "wulf-tb-";
// Open MPI's and the hosts' subnet (inside 198.18.0.0/15, RFC 2544); the veth pairs' are
// in 198.19.0.0/16 (testbed_network.cpp).
constexpr const char* kSubnet = "198.18.0.0/16";

// Shaping: a tbf bucket of kBurstSeconds of the port's rate, at least one frame; bytes
// charged on the wire (Ethernet's preamble, FCS and gap: 24 bytes, and its 84-byte minimum);
// the switch's ports kSwitchFaster than the hosts' with deeper queues, so that a host's own
// port is the bottleneck a single flow sees and converging flows queue at the switch
// instead of being dropped. Why these values: experiments/testbed/shaping.md.
constexpr double kBurstSeconds = 256e-6;
constexpr double kFrameBytes = 1600;  // the largest frame with the wire's overhead (1 538), rounded up
double burst_bytes(double rate_Bps) { return std::ceil(std::max(kFrameBytes, rate_Bps * kBurstSeconds)); }
constexpr double kMinRtoSeconds = 0.2;  // Linux's TCP_RTO_MIN
constexpr const char* kStab[] = {"stab", "overhead", "24", "mpu", "84"};

std::string first_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const std::size_t nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

// Runs one command of the set-up; its failure is an InputError naming it and what it said.
// sessions_outlive: the processes it leaves in sessions of their own are not ended with it.
void must(const std::vector<std::string>& argv, bool sessions_outlive = false) {
  ChildOptions options;
  options.capture = true;
  options.sessions_outlive = sessions_outlive;
  const ChildResult r = run_child(argv, options);
  if (r.code != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw InputError("the testbed's set-up failed at `" + cmd + "`: " + first_line(r.err.empty() ? r.out : r.err));
  }
}

bool quiet_ok(const std::vector<std::string>& argv) {
  std::string out, err;
  return run_program_captured(argv, out, err) == 0;
}

// The namespaces there are, by name.
std::vector<std::string> all_namespaces() {
  std::string out, err;
  run_program_captured({"ip", "netns", "list"}, out, err);
  std::vector<std::string> names;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string name = line.substr(0, line.find(' '));  // "name (id: 3)"
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// Ends every process inside namespace ns (all of them started by a testbed run: nothing
// else enters wulf's namespaces), SIGTERM then SIGKILL, and deletes the namespace.
void remove_namespace(const std::string& ns) {
  for (const int signal : {SIGTERM, SIGKILL}) {
    std::string out, err;
    run_cleanup_captured({"ip", "netns", "pids", ns}, out, err);
    std::istringstream pids(out);
    bool any = false;
    for (long pid = 0; pids >> pid;)
      if (pid > 1 && ::kill(static_cast<pid_t>(pid), signal) == 0) any = true;
    if (!any) break;
    for (int i = 0; i < 20 && signal == SIGTERM; ++i) {  // up to 1 s for them to end
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::string still;
      run_cleanup_captured({"ip", "netns", "pids", ns}, still, err);
      if (trim(still).empty()) break;
    }
  }
  std::string out, err;
  run_cleanup_captured({"ip", "netns", "del", ns}, out, err);
}

std::string rate_text(double bytes_per_s) { return fmt::format("{:.0f}bit", std::max(8.0, bytes_per_s * 8)); }

// A hostname for the namespace: the platform's host name where it is a usable one.
std::string host_label(const std::string& name, std::size_t index) {
  const bool usable = !name.empty() && name.size() <= 63 &&
                      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") ==
                          std::string::npos;
  return usable ? name : "host" + std::to_string(index);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

PathLoad path_load(const std::vector<TestbedHost>& hosts, unsigned cores, std::size_t most_hops,
                   std::size_t most_delayed_hops) {
  const double c = std::max(1u, cores);
  PathLoad load;
  for (const TestbedHost& h : hosts) load.links_Bps += h.up_Bps;
  const double hops = std::max(1.0, static_cast<double>(most_hops) / 2);
  const double carried = load.links_Bps * hops / (kSwitchedBytesPerCore * c);
  const double forwarded = load.links_Bps * static_cast<double>(most_delayed_hops) / (kForwardedBytesPerCore * c);
  load.dilation = std::max(carried, forwarded);
  return load;
}

double default_dilation(const std::vector<TestbedHost>& hosts, int np, unsigned cores, std::size_t most_hops,
                        std::size_t most_delayed_hops, double busy_cores) {
  cores = std::max(1u, cores);
  const bool busy = busy_cores >= 0.5;
  const double left = busy ? std::max(0.5, cores - busy_cores) : static_cast<double>(cores);
  const double per_core = std::ceil(static_cast<double>(np) / ((busy ? 2.0 : 4.0) * left));
  const double path = std::ceil(path_load(hosts, cores, most_hops, most_delayed_hops).dilation);
  return std::max({10.0, 10.0 * per_core, path});
}

double collective_overhead_s(const Json& host, const std::string& platform) {
  const std::string overhead = host.at("collective_overhead").get<std::string>();
  return overhead.empty() ? 0 : parse_duration(overhead, "platform " + platform + ": wulf:collective_overhead");
}

PlatformNetwork read_network(const std::string& platform, const std::string& list, double bw_scale, Json& hosts,
                             const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  std::string text, errors, lines;
  for (const auto& [i, j] : pairs) lines += std::to_string(i) + " " + std::to_string(j) + "\n";
  std::optional<TempFile> file;
  if (!pairs.empty()) file.emplace("pairs", lines);
  std::vector<std::string> args{"network", platform, list};
  if (file) args.insert(args.end(), {"--pairs", file->path()});
  if (run_wulf_platform(args, text, errors) != 0)
    throw InputError("platform " + platform + ": " + first_line(errors));
  const Json j = parse_json(text, "wulf-platform network " + platform);
  PlatformNetwork net;
  hosts = j.at("hosts");
  for (const Json& h : hosts) net.hosts.push_back(h.at("name").get<std::string>());
  for (const Json& l : j.at("links"))
    net.links.push_back({l.at("name").get<std::string>(), l.at("bandwidth_Bps").get<double>() * bw_scale,
                         l.at("latency_s").get<double>(), l.at("sharing").get<std::string>()});
  for (const Json& r : j.at("routes"))
    net.routes.push_back({r.at("from").get<std::size_t>(), r.at("to").get<std::size_t>(),
                          r.at("links").get<std::vector<std::size_t>>(), r.at("latency_s").get<double>()});
  net.bw_factor = j.value("smpi/bw-factor", "");
  net.lat_factor = j.value("smpi/lat-factor", "");
  return net;
}

namespace {

// What the simulation charges a message that the emulated links do not: SMPI's piecewise
// factors of its latency and bandwidth, the platform's or SimGrid's defaults where it sets
// none ("" where they are all 1).
std::string unemulated_factors(const PlatformNetwork& net) {
  const SizeFactors bw = parse_size_factors(net.bw_factor, "smpi/bw-factor");
  const SizeFactors lat = parse_size_factors(net.lat_factor, "smpi/lat-factor");
  if (bw.all_one() && lat.all_one()) return "";
  double most_lat = 1, least_bw = 1;
  for (const auto& t : lat.thresholds) most_lat = std::max(most_lat, t.second);
  for (const auto& t : bw.thresholds) least_bw = std::min(least_bw, t.second);
  return fmt::format("the simulation scales a message's latency by up to {:.3g} and its bandwidth by down to {:.3g} "
                     "by its size (smpi/lat-factor, smpi/bw-factor: the platform's, or SimGrid's defaults where it "
                     "sets none); the emulated links do not, so the two differ by that much on this platform (a "
                     "<config> setting both to 0:1 makes them the same model)",
                     most_lat, least_bw);
}

// The plan's hosts, network and ranks, as the platform's routes give them, with the network's
// notes; no dilation yet.
TestbedPlan plan_hosts_and_network(const std::string& platform, const std::vector<PlatformHost>& placed, int np,
                                   double bw_scale) {
  TestbedPlan plan;
  plan.platform = platform;
  std::vector<std::string> names;
  for (const PlatformHost& h : placed)
    if (std::find(names.begin(), names.end(), h.name) == names.end()) names.push_back(h.name);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
  Json hosts;
  const PlatformNetwork net = read_network(platform, list, bw_scale, hosts);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const Json& h = hosts[i];
    TestbedHost t;
    t.name = h.at("name").get<std::string>();
    t.address = fmt::format("198.18.{}.{}", (i + 1) / 256, (i + 1) % 256);
    t.speed_flops = h.at("speed_flops").get<double>();
    t.collective_overhead_s = collective_overhead_s(h, platform);
    t.device = h.value("device", "");
    t.efficiency = h.value("efficiency", "");
    plan.hosts.push_back(std::move(t));
  }
  for (const NetworkRoute& r : net.routes) {
    plan.route_latency_s = std::max(plan.route_latency_s, r.latency_s);
    if (r.links.empty()) continue;
    TestbedHost &from = plan.hosts.at(r.from), &to = plan.hosts.at(r.to);
    from.up_Bps = std::max(from.up_Bps, net.links.at(r.links.front()).bandwidth_Bps);
    to.down_Bps = std::max(to.down_Bps, net.links.at(r.links.back()).bandwidth_Bps);
  }
  std::vector<std::string> addresses;
  for (const TestbedHost& h : plan.hosts) addresses.push_back(h.address);
  plan.network = plan_network(net, addresses, platform);
  for (const Veth& v : plan.network.veths)
    for (const VethEnd* e : {&v.a, &v.b})
      if (e->node < plan.hosts.size()) plan.hosts[e->node].ports += 1;
  for (const PlatformHost& p : placed) {
    const auto at = std::find(names.begin(), names.end(), p.name) - names.begin();
    for (int c = 0; c < p.cores && static_cast<int>(plan.rank_host.size()) < np; ++c) {
      plan.rank_host.push_back(static_cast<int>(at));
      plan.hosts[static_cast<std::size_t>(at)].ranks += 1;
    }
  }
  plan.notes = plan.network.notes;
  if (std::string note = unemulated_factors(net); !note.empty()) plan.notes.push_back(std::move(note));
  return plan;
}

}  // namespace

PlanMachine PlanMachine::here() {
  const MachineSample sample = sample_machine();
  return {std::max(1u, std::thread::hardware_concurrency()), sample.load ? (*sample.load)[0] : 0.0};
}

TestbedPlan plan_testbed(const std::string& platform, const std::vector<PlatformHost>& placed, int np,
                         double dilation, double bw_scale, bool drop_latencies, const PlanMachine& machine) {
  TestbedPlan plan = plan_hosts_and_network(platform, placed, np, bw_scale);
  const unsigned cores = machine.cores;
  const double busy = machine.busy_cores;
  TestbedNetwork& network = plan.network;
  // The dilation the links' forwarders need, and what is done where it is more than D may be.
  const double held = default_dilation(plan.hosts, np, cores, network.most_hops, network.most_delayed_hops, busy);
  const double unheld = default_dilation(plan.hosts, np, cores, network.most_hops, 0, busy);
  if (network.most_delayed_hops > 0 &&
      (drop_latencies || (dilation <= 0 && held > kDilationRange.hi && unheld <= kDilationRange.hi))) {
    for (Veth& v : network.veths) v.a.latency_s = v.b.latency_s = 0;
    network.most_delayed_hops = 0;
    plan.notes.push_back(fmt::format("link latencies are not emulated: the forwarders that would hold them need a "
                                     "time dilation of {:g} here, more than {:g}; the platform's host-to-host {:.4g} us "
                                     "is the software path's own instead",
                                     held, kDilationRange.hi, plan.route_latency_s * 1e6));
  } else if (network.most_delayed_hops > 0 && dilation > 0 && dilation < held) {
    plan.notes.push_back(fmt::format("the forwarders that hold the links' latencies need a time dilation of {:g} "
                                     "here for their own time not to show; at --dilation {:g} it may",
                                     held, dilation));
  }
  plan.latencies_held = network.most_delayed_hops > 0;
  plan.dilation = dilation > 0 ? dilation : network.most_delayed_hops > 0 ? held : unheld;
  if (dilation <= 0 && plan.dilation > kDilationRange.hi)
    throw InputError(fmt::format("the testbed of {} ranks on {} cores would need a time dilation of {:g}, more than "
                                 "the {:g} it can have (--dilation): fewer ranks, or a machine with more cores",
                                 np, cores, plan.dilation, kDilationRange.hi));
  check_in_range(plan.dilation, kDilationRange, "dilation");
  plan.dilation_from =
      dilation > 0 ? "--dilation"
                   : fmt::format("default for {} ranks on {} cores{} and these links", np, cores,
                                 busy >= 0.5 ? fmt::format(" ({:.2g} of them busy with other work: the load average)", busy)
                                             : std::string());
  return plan;
}

TestbedPlan plan_program_testbed(const std::string& platform, const std::vector<PlatformHost>& placed, int np,
                                 double bw_scale) {
  TestbedPlan plan = plan_hosts_and_network(platform, placed, np, bw_scale);
  plan.latencies_held = plan.network.most_delayed_hops > 0;
  plan.dilation = 1;
  plan.dilation_from = "1: a program's own compute cannot be dilated";
  return plan;
}

std::string real_time_note(const TestbedPlan& plan, unsigned cores, double bw_scale) {
  const TestbedNetwork& net = plan.network;
  const PathLoad load = path_load(plan.hosts, cores, net.most_hops, net.most_delayed_hops);
  if (load.dilation <= 1) return "";
  // The --bw-scale that fits, rounded down to two significant digits.
  const double fits = bw_scale / load.dilation;
  const double unit = std::pow(10.0, std::floor(std::log10(fits)) - 1);
  const std::string through =
      net.most_delayed_hops > 0
          ? fmt::format(", through up to {} latency forwarder{} a route", net.most_delayed_hops,
                        net.most_delayed_hops == 1 ? "" : "s")
          : fmt::format(", across up to {} hops a route", net.most_hops);
  cores = std::max(1u, cores);
  return fmt::format("these links carry {:.4g} MB/s (the {} hosts' links summed{}); this machine's {} core{} hold "
                     "about {:.3g} MB/s at dilation 1: expect the network slower than the platform's, or run with "
                     "--bw-scale {:g}",
                     load.links_Bps * 1e-6, plan.hosts.size(), through, cores, cores == 1 ? "" : "s",
                     load.links_Bps / load.dilation * 1e-6, std::floor(fits / unit) * unit);
}

std::string shared_cores_note(int np, unsigned cores) {
  cores = std::max(1u, cores);
  if (np <= static_cast<int>(cores)) return "";
  return fmt::format("{} ranks on this machine's {} core{}: their compute, and their communication's threads, share "
                     "the cores, so each rank computes as if its host had {:.2g} of a core (a program's compute "
                     "cannot be dilated): its times are not the platform's hosts'",
                     np, cores, cores == 1 ? "" : "s", static_cast<double>(cores) / np);
}

void print_testbed(std::ostream& out, const TestbedPlan& plan) {
  const TestbedNetwork& net = plan.network;
  std::size_t switches = 0;
  for (const NetworkNode& node : net.nodes) switches += node.kind == NetworkNode::Kind::junction;
  fmt::print(out, "testbed: {} hosts of {}, {} switch{} between them, time dilation {:g} ({})\n", plan.hosts.size(),
             plan.platform, switches, switches == 1 ? "" : "es", plan.dilation, plan.dilation_from);
  for (const TestbedHost& h : plan.hosts)
    fmt::print(out, "  {:<16} {:<14} {} rank{}, {} port{}, link {:.4g} Mbit/s (shaped to {:.4g}), {:.4g} Gflop/s\n",
               h.name, h.address, h.ranks, h.ranks == 1 ? "" : "s", h.ports, h.ports == 1 ? "" : "s", h.up_Bps * 8e-6,
               h.up_Bps * 8e-6 / plan.dilation, h.speed_flops * 1e-9);
  // The links that do not start at a host: between switches (trunks, uplinks, backbones).
  for (const Veth& v : net.veths)
    for (const VethEnd* e : {&v.a, &v.b})
      if (e->rate_Bps > 0 && net.nodes[e->node].kind != NetworkNode::Kind::host &&
          net.nodes[(e == &v.a ? v.b : v.a).node].kind != NetworkNode::Kind::host)
        fmt::print(out, "  link {} between switches, {:.4g} Mbit/s (shaped to {:.4g})\n", e->link, e->rate_Bps * 8e-6,
                   e->rate_Bps * 8e-6 / plan.dilation);
  for (const std::string& note : plan.notes) out << "  note: " << note << "\n";
  out.flush();
}

Json TestbedPlan::to_json() const {
  Json hosts_json = Json::array();
  for (const TestbedHost& h : hosts)
    hosts_json.push_back({{"name", h.name},
                          {"address", h.address},
                          {"ranks", h.ranks},
                          {"ports", h.ports},
                          {"platform_up_Bps", h.up_Bps},
                          {"platform_down_Bps", h.down_Bps},
                          {"speed_flops", h.speed_flops},
                          {"collective_overhead_s", h.collective_overhead_s},
                          {"device", h.device},
                          {"efficiency", h.efficiency}});
  Json ranks = Json::array();
  for (const int h : rank_host) ranks.push_back(h);
  return {{"platform", platform},
          {"dilation", dilation},
          {"dilation_from", dilation_from},
          {"topology", "the platform's routes: a namespace per host and per switch, each link a veth pair shaped by "
                       "tc tbf at its sending end"},
          {"network", network.to_json(dilation)},
          {"shaping", {{"burst_s", kBurstSeconds},
                       {"burst_min_bytes", kFrameBytes},
                       {"wire_overhead_bytes", 24},
                       {"minimum_frame_bytes", 84},
                       {"switch_ports_faster_by", kSwitchFaster},
                       {"offloads", "tso, gso, gro off"},
                       {"congestion_control", "reno"},
                       {"slow_start_after_idle", false},
                       {"rto_min_s", kMinRtoSeconds * dilation},
                       {"tail_loss_probe", false}}},
          {"open_mpi", {{"btl", "tcp,self"}, {"pml", "ob1"}, {"btl_tcp_eager_limit", eager_bytes},
                        {"btl_tcp_max_send_size", std::max(eager_bytes, kDefaultMaxSendBytes)},
                        {"btl_tcp_sndbuf", kSocketBufferBytes},
                        {"btl_tcp_rcvbuf", kSocketBufferBytes}, {"mpi_yield_when_idle", 1},
                        {"reachable", "weighted"}}},
          {"hosts", std::move(hosts_json)},
          {"rank_host", std::move(ranks)},
          {"latency", {{"largest_route_s", route_latency_s},
                       {"emulated", "each link's latency times the dilation, by a forwarder between the link's ends "
                                    "(wulf testbed delay) that holds every frame that long after the kernel received "
                                    "it; the software path's own time comes on top"}}},
          {"notes", notes}};
}

std::string testbed_unavailable() {
  if (::geteuid() != 0) {
    // CAP_NET_ADMIN (bit 12) and CAP_SYS_ADMIN (bit 21, for the namespaces) in the
    // effective set would do as well.
    std::ifstream status("/proc/self/status");
    std::string line;
    unsigned long long caps = 0;
    while (std::getline(status, line))
      if (line.rfind("CapEff:", 0) == 0) caps = std::strtoull(line.c_str() + 7, nullptr, 16);
    if (!(caps & (1ULL << 12)) || !(caps & (1ULL << 21)))
      return "it needs root, or CAP_NET_ADMIN and CAP_SYS_ADMIN, to make network namespaces";
  }
  for (const char* program : {"ip", "tc", "ethtool", "unshare", "hostname"})
    if (find_program(program).empty())
      return std::string(program) + " is not installed (apt-get install iproute2 ethtool util-linux hostname)";
  // What the kernel can do, tried in a namespace of this check's own.
  const std::string ns = kPrefix + owner_tag() + "-check";
  std::string reason;
  std::string out, err;
  if (run_program_captured({"ip", "netns", "add", ns}, out, err) != 0)
    return "network namespaces cannot be made here: " + first_line(err);
  const std::vector<std::pair<std::vector<std::string>, std::string>> steps = {
      {{"ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1"}, "the kernel has no veth"},
      {{"tc", "-n", ns, "qdisc", "add", "dev", "v0", "root", "tbf", "rate", "1mbit", "burst", "3200", "limit",
        "10000"},
       "the kernel has no tbf queueing discipline"}};
  for (const auto& [argv, fault] : steps)
    if (run_program_captured(argv, out, err) != 0) {
      reason = fault + ": " + first_line(err);
      break;
    }
  remove_namespace(ns);
  return reason;
}

void ready_testbed(const std::string& command, std::ostream& err) {
  if (const std::string why = testbed_unavailable(); !why.empty())
    throw InputError(command + ": this machine cannot build the testbed: " + why);
  if (const int removed = remove_testbed_leftovers(); removed > 0)
    err << command << ": removed " << removed << " namespaces left by testbed runs that were killed\n";
}

std::vector<PlatformHost> hosts_of_ranks(const std::vector<PlatformHost>& placed, long long np) {
  std::vector<PlatformHost> used;
  for (std::size_t i = 0; i < placed.size() && np > 0; ++i) {
    PlatformHost h = placed[i];
    h.cores = static_cast<int>(std::min<long long>(h.cores, np));
    np -= h.cores;
    used.push_back(std::move(h));
  }
  return used;
}

std::vector<std::string> rank_node_keys(const std::vector<PlatformHost>& placed, long long np) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < placed.size() && np > 0; ++i) {  // as hosts_of_ranks fills them
    const PlatformHost& h = placed[i];
    const long long ranks = std::min<long long>(h.cores, np);
    np -= ranks;
    keys.insert(keys.end(), static_cast<std::size_t>(std::max(ranks, 0LL)),
                h.node >= 0 ? h.group + ":" + std::to_string(h.node) : "host " + h.name);
  }
  return keys;
}

std::vector<std::vector<int>> rank_rings_of(const std::vector<PlatformHost>& placed, long long np,
                                            const std::string& platform) {
  const std::vector<std::string> keys = rank_node_keys(placed, np);
  const std::string where = "the rings allreduce on " + platform + ": ";
  // The hosts of the ranks: a host of more than one core fails below, at its first rank.
  std::vector<const PlatformHost*> host_of;
  std::vector<std::size_t> ranks_on;  // rank r's host's ranks
  for (std::size_t i = 0; i < placed.size() && host_of.size() < keys.size(); ++i) {
    const std::size_t taken =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(placed[i].cores, 0)), keys.size() - host_of.size());
    host_of.insert(host_of.end(), taken, &placed[i]);
    ranks_on.insert(ranks_on.end(), taken, taken);
  }
  std::unordered_map<std::string, std::size_t> nodes;  // each node's index, in the order of their first rank
  std::vector<std::vector<int>> ranks_of;              // each node's ranks
  for (std::size_t r = 0; r < keys.size(); ++r) {
    const PlatformHost& h = *host_of[r];
    if (ranks_on[r] != 1)
      throw InputError(where + "host " + h.name + " holds " + std::to_string(ranks_on[r]) +
                       " ranks; it needs one rank on each host (--ranks-per-host 1)");
    if (h.ring_places.empty())
      throw InputError(where + "host " + h.name + " has no wulf:rings (its place in each of its node's rings; "
                       "platforms/gpu/generate.py writes them)");
    if (h.ring_places.size() != host_of[0]->ring_places.size())
      throw InputError(where + "host " + h.name + " is in " + std::to_string(h.ring_places.size()) + " rings, host " +
                       host_of[0]->name + " in " + std::to_string(host_of[0]->ring_places.size()));
    const auto [at, added] = nodes.emplace(keys[r], nodes.size());
    if (added) ranks_of.emplace_back();
    ranks_of[at->second].push_back(static_cast<int>(r));
  }
  std::vector<std::vector<int>> rings(host_of.empty() ? 0 : host_of[0]->ring_places.size());
  for (std::size_t c = 0; c < rings.size(); ++c)
    for (const std::vector<int>& node : ranks_of) {
      std::vector<int> order(node.size(), -1);
      for (const int r : node) {
        const PlatformHost& h = *host_of[static_cast<std::size_t>(r)];
        const int place = h.ring_places[c];
        if (place >= static_cast<int>(node.size()) || order[static_cast<std::size_t>(place)] >= 0)
          throw InputError(where + "host " + h.name + " has place " + std::to_string(place) + " in ring " +
                           std::to_string(c) + ", which its node's " + std::to_string(node.size()) +
                           " ranks need to be 0 to " + std::to_string(node.size() - 1) + ", each once");
        order[static_cast<std::size_t>(place)] = r;
      }
      rings[c].insert(rings[c].end(), order.begin(), order.end());
    }
  return rings;
}

int remove_testbed_namespaces(const std::string& tag) {
  int removed = 0;
  const std::string prefix = kPrefix + tag + "-";
  for (const std::string& ns : all_namespaces())
    if (ns.rfind(prefix, 0) == 0) remove_namespace(ns), ++removed;
  return removed;
}

int remove_testbed_leftovers() {
  int removed = 0;
  for (const std::string& ns : all_namespaces()) {
    if (ns.rfind(kPrefix, 0) != 0) continue;
    // wulf-tb-<owner tag>-<role>: left over when that process is gone or is another one.
    const std::string id = ns.substr(std::string(kPrefix).size());
    const std::size_t dash = id.find('-');
    if (dash == std::string::npos || !is_owner_tag(id.substr(0, dash))) continue;  // not a run's
    if (owner_alive(id.substr(0, dash))) continue;                                     // its run is still going
    remove_namespace(ns);
    ++removed;
  }
  return removed;
}

Testbed::Testbed(TestbedPlan plan) : plan_(std::move(plan)) {
  prefix_ = kPrefix + owner_tag();
  guardian_ = start_guardian({wulf_program("wulf"), "testbed", "guard", owner_tag()});
  try {
    build();
  } catch (...) {
    remove();
    end_guardian(guardian_);
    throw;
  }
}

Testbed::~Testbed() {
  remove();
  end_guardian(guardian_);
}

void Testbed::remove() noexcept {
  try {
    for (auto ns = namespaces_.rbegin(); ns != namespaces_.rend(); ++ns) remove_namespace(*ns);
  } catch (...) {  // a destructor must not throw; leftovers go with the next run
  }
  namespaces_.clear();
}

void Testbed::build() {
  add_namespaces();
  // The veth pairs: addresses, no offloads (segments the size of frames on the wire, so that
  // tbf shapes what a NIC would send), and each sending end of a link shaped to its rate.
  std::size_t delays = 0;
  for (const Veth& v : plan_.network.veths) add_veth(v, delays);
  add_routes();
  tune_tcp();
  write_launch_files();
}

void Testbed::add_namespaces() {
  std::size_t switches = 0;
  for (std::size_t i = 0; i < plan_.network.nodes.size(); ++i) {
    const bool host = i < plan_.hosts.size();
    const std::string ns = prefix_ + (host ? "-h" + std::to_string(i) : "-n" + std::to_string(switches++));
    must({"ip", "netns", "add", ns});
    namespaces_.push_back(ns);
    must({"ip", "-n", ns, "link", "set", "lo", "up"});
    // Every node forwards: switches by their role, hosts where a route passes through them.
    must({"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"});
  }
}

// A pair whose link has a latency is two, with a namespace between them where a forwarder
// holds each frame for the latency times D (engine/delay_link.hpp); the ends facing it
// compute their checksums themselves (tx off), since the forwarder copies frames as they are.
void Testbed::add_veth(const Veth& v, std::size_t& delays) {
  const std::string na = namespaces_.at(v.a.node), nb = namespaces_.at(v.b.node);  // copies: delays are added
  const bool delayed = (v.a.latency_s > 0 || v.b.latency_s > 0) && plan_.hosts.size() > 1;
  if (delayed) {
    const std::string nd = prefix_ + "-d" + std::to_string(delays++);
    must({"ip", "netns", "add", nd});
    namespaces_.push_back(nd);
    quiet_ok({"ip", "netns", "exec", nd, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"});
    must({"ip", "-n", na, "link", "add", v.a.ifname, "type", "veth", "peer", "name", "da", "netns", nd});
    must({"ip", "-n", nb, "link", "add", v.b.ifname, "type", "veth", "peer", "name", "db", "netns", nd});
    for (const char* port : {"da", "db"}) {
      must({"ip", "-n", nd, "link", "set", port, "up"});
      must({"ip", "netns", "exec", nd, "ethtool", "-K", port, "tso", "off", "gso", "off", "gro", "off"});
    }
    // It leaves the forwarder, in a session of its own, and returns once it is there.
    must({"ip", "netns", "exec", nd, wulf_program("wulf"), "testbed", "delay", "da", "db",
          fmt::format("{:.9g}", v.a.latency_s * plan_.dilation), fmt::format("{:.9g}", v.b.latency_s * plan_.dilation)},
         true);
  } else {
    must({"ip", "-n", na, "link", "add", v.a.ifname, "type", "veth", "peer", "name", v.b.ifname, "netns", nb});
  }
  for (const VethEnd* e : {&v.a, &v.b}) shape_end(*e, delayed);
}

// An end's address, its offloads off, and its sending side shaped to the link's rate over D.
void Testbed::shape_end(const VethEnd& e, bool delayed) {
  const std::string& ns = namespaces_.at(e.node);
  if (!e.address.empty()) must({"ip", "-n", ns, "addr", "add", e.address + "/31", "dev", e.ifname});
  must({"ip", "-n", ns, "link", "set", e.ifname, "up"});
  std::vector<std::string> offloads{"ip", "netns", "exec", ns, "ethtool", "-K", e.ifname, "tso", "off", "gso",
                                    "off", "gro", "off"};
  if (delayed) offloads.insert(offloads.end(), {"tx", "off"});
  must(offloads);
  if (e.rate_Bps <= 0 || plan_.hosts.size() < 2) return;
  std::vector<std::string> tbf{"tc", "-n", ns, "qdisc", "add", "dev", e.ifname, "root"};
  tbf.insert(tbf.end(), std::begin(kStab), std::end(kStab));
  const double rate = e.rate_Bps / plan_.dilation;
  tbf.insert(tbf.end(), {"tbf", "rate", rate_text(rate), "burst", fmt::format("{:.0f}", burst_bytes(rate)), "limit",
                         fmt::format("{:.0f}", e.queue_bytes)});
  must(tbf);
}

// Each host's address on its first port (the one Open MPI's TCP uses, in kSubnet), and every
// node's route to every host, as the platform's routes go.
void Testbed::add_routes() {
  const TestbedNetwork& net = plan_.network;
  const double d = plan_.dilation;
  for (std::size_t i = 0; i < plan_.hosts.size(); ++i) {
    if (plan_.hosts[i].ports == 0) {  // one host alone: a port to hold its address
      must({"ip", "-n", namespaces_[i], "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p"});
      must({"ip", "-n", namespaces_[i], "link", "set", "eth0", "up"});
    }
    must({"ip", "-n", namespaces_[i], "addr", "add", plan_.hosts[i].address + "/16", "dev", "eth0"});
  }
  std::vector<std::string> batches(net.nodes.size());
  for (const NodeRoute& r : net.routes) {
    const Veth& v = net.veths.at(r.veth);
    const VethEnd &out = r.end == 0 ? v.a : v.b, &peer = r.end == 0 ? v.b : v.a;
    // To the next node's port, or to a host's address, which is on the link (onlink) to
    // whichever of its ports the route reaches.
    const bool to_host = peer.node < plan_.hosts.size();
    std::string line = "route add " + r.destination + "/32 via " +
                       (to_host ? plan_.hosts[peer.node].address : peer.address) + " dev " + out.ifname + " onlink";
    // From a host: from its address, with TCP's least retransmission timeout dilated too,
    // 200 ms times D. Messages take D times longer on the wire, so undilated timers fire
    // while a message still waits in a queue: no packet is lost (tbf drops none), but the
    // spurious retransmission cuts the window. Back-to-back allreduces at p = 8 (Bat Cave,
    // D = 10) counted up to 5 retransmitted segments, 8 tail-loss probes and a timeout per
    // host, all spurious (D-SACKed); with these settings, none.
    if (r.node < plan_.hosts.size())
      line += " src " + plan_.hosts[r.node].address + fmt::format(" rto_min {:.0f}ms", kMinRtoSeconds * d * 1e3);
    // A route for one source's packets (the platform routes by source there): in a table of
    // that source's, which a rule sends its packets to.
    if (!r.source.empty()) {
      const auto source = std::find_if(plan_.hosts.begin(), plan_.hosts.end(),
                                       [&](const TestbedHost& h) { return h.address == r.source; });
      const std::string table = std::to_string(100 + (source - plan_.hosts.begin()));
      line += " table " + table;
      const std::string rule = "rule add from " + r.source + "/32 lookup " + table + " pref " + table + "\n";
      if (batches[r.node].find(rule) == std::string::npos) batches[r.node] = rule + batches[r.node];
    }
    batches[r.node] += line + "\n";
  }
  for (std::size_t i = 0; i < batches.size(); ++i)
    if (!batches[i].empty()) {
      const std::string file = files_.file("routes-" + std::to_string(i));
      write_file_atomically(file, batches[i]);
      must({"ip", "-n", namespaces_[i], "-batch", file});
    }
}

void Testbed::tune_tcp() {
  for (std::size_t i = 0; i < plan_.hosts.size(); ++i) {
    const std::string& ns = namespaces_[i];
    // Reno in every host: the same congestion control whatever the machine's default.
    quiet_ok({"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_congestion_control=reno"});
    // No slow start again after an idle spell: a connection between two ranks idles between
    // collective calls, and the simulator's TCP model has no such restart. Without this the
    // allreduce of 54 912 doubles at p = 8 took 1.4-1.6 times the simulated 131 ms, 1.2 with it.
    quiet_ok({"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_slow_start_after_idle=0"});
    // No tail-loss probe (a timer of twice the smoothed round trip): see rto_min above.
    quiet_ok({"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_early_retrans=0"});
  }
}

// The hostfile (addresses, a slot per rank), the rsh agent and the ranks' description.
void Testbed::write_launch_files() {
  std::string hostfile;
  for (const TestbedHost& h : plan_.hosts) hostfile += h.address + " slots=" + std::to_string(h.ranks) + "\n";
  write_file_atomically(files_.file("hostfile"), hostfile);
  // Open MPI runs `agent HOST COMMAND...` as it would ssh: the command is words for the
  // remote shell. The agent starts that shell in the host's namespace, under its hostname.
  std::string agent =
      "#!/bin/sh\n# Open MPI's rsh agent of a wulf testbed run: HOST COMMAND... in HOST's namespace.\n"
      "host=$1; shift\ncase \"$host\" in\n";
  for (std::size_t i = 0; i < plan_.hosts.size(); ++i)
    agent += "  " + plan_.hosts[i].address + ") exec ip netns exec " + shell_quote(namespaces_[i]) +
             " unshare --uts -- sh -c \"hostname " + shell_quote(host_label(plan_.hosts[i].name, i)) +
             " && $*\" ;;\n";
  agent += "esac\necho \"wulf testbed: no host has the address $host\" >&2\nexit 255\n";
  write_file_atomically(files_.file("agent"), agent);
  ::chmod(files_.file("agent").c_str(), 0700);
  write_file_atomically(files_.file("testbed.json"), plan_.to_json().dump() + "\n");
}

std::vector<std::string> Testbed::command(const std::string& program, const MpiSessionDir& session,
                                          const Collectives& collectives) const {
  int np = 0;
  for (const TestbedHost& h : plan_.hosts) np += h.ranks;
  const std::vector<std::string> mca{
      "--mca", "plm_rsh_agent", files_.file("agent"),
      "--mca", "btl", "tcp,self",
      "--mca", "pml", "ob1",
      "--mca", "btl_tcp_if_include", kSubnet,
      "--mca", "oob_tcp_if_include", kSubnet,
      // Whether a peer is reachable by its subnet: Open MPI's netlink component would ask the
      // kernel for the route and refuse a peer reached through another port than the one
      // holding the host's address, as a host with several NICs reaches most peers.
      "--mca", "reachable", "weighted",
      // Ranks that wait yield the CPU: 8 ranks on 2 cores would otherwise spin each other out.
      "--mca", "mpi_yield_when_idle", "1",
      // Messages up to the eager limit (default 4 MiB) go eagerly, in one piece. With Open
      // MPI's rendezvous beyond 64 KiB, the handshake of each side of a two-way exchange
      // waits behind the other side's data on their one TCP connection: a recursive-doubling
      // step of 54 912 doubles took twice the simulated time (86 ms against 44 at p = 2, Bat
      // Cave, D = 10). With a handshake of 256 bytes (btl_tcp_rndv_eager_limit) p = 2 kept
      // the simulated time, but p = 8 did not: 16 768 doubles took 49 ms against 40.3, the
      // handshakes queued behind other partners' data, which SMPI's rendezvous does not model.
      "--mca", "btl_tcp_eager_limit", std::to_string(plan_.eager_bytes),
      "--mca", "btl_tcp_max_send_size", std::to_string(std::max(plan_.eager_bytes, kDefaultMaxSendBytes)),
      // Socket buffers of a fixed 4 MiB, which turns the kernel's autotuning off. Autotuning
      // starts a receive buffer at tcp_rmem's 128 KiB, less than one message of 16 768 doubles
      // (134 144 bytes): such a message then waits for the receiving rank to read and open the
      // window, and when the ranks drift apart (calls back to back, as in training) each step
      // waits on the other. Back-to-back allreduces of 16 768 doubles took 52 and 112 ms at
      // p = 4 and 8 against 27.0 and 40.3 simulated, and 27.5 and 41.1 ms with these buffers
      // (Bat Cave, D = 10, `wulf platform bench --back-to-back`).
      "--mca", "btl_tcp_sndbuf", std::to_string(kSocketBufferBytes),
      "--mca", "btl_tcp_rcvbuf", std::to_string(kSocketBufferBytes)};
  return in_host(0, mpirun_command(np, "on", collectives, program, session, files_.file("hostfile"), mca));
}

std::vector<std::string> Testbed::in_host(std::size_t host, const std::vector<std::string>& argv) const {
  const std::string label = host_label(plan_.hosts.at(host).name, host);
  std::vector<std::string> cmd{"ip", "netns", "exec", namespaces_.at(host), "unshare", "--uts", "--",
                               "sh", "-c", "hostname \"$0\" && exec \"$@\"", label};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return cmd;
}

std::vector<std::string> Testbed::environment() const { return {"WULF_TESTBED_FILE=" + files_.file("testbed.json")}; }

}  // namespace wulf
