// The testbed: an emulated cluster on this machine, on which real Open MPI runs over real
// TCP (issue 16). One network namespace per platform host; the network between them built
// as the platform's routes give it (issue 32, engine/testbed_network.hpp): each link that
// can limit a flow a veth pair shaped by `tc tbf` to its rate over the time dilation D,
// each switch or router a namespace that forwards by destination, a port per NIC. mpirun
// starts in the first host's namespace and reaches the others through an rsh agent that
// enters their namespaces. Nothing is made outside the namespaces a run creates, and only
// addresses of 198.18.0.0/15 (RFC 2544's range for network benchmarks) are used: the hosts'
// in 198.18.0.0/16, the veth pairs' own in 198.19.0.0/16.
//
// Each link's latency is a namespace between the veth pair's ends where a forwarder holds
// every frame for the latency times D (engine/delay_link.hpp): this kernel has no netem,
// and the forwarder works on any kernel with packet sockets. The software path adds its own
// time on top (about 50 us of wall time a round trip, measured in README). What the testbed
// cannot represent is said, never hidden: links whose sharing no queue reproduces (a FATPIPE
// slower than the hosts' links, WIFI), and the latency of a link the routes pass as a switch.
#pragma once

#include "comm/rank_env.hpp"
#include "engine/launch.hpp"
#include "engine/testbed_network.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"
#include "util/json.hpp"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace wulf {

// One platform host of the testbed.
struct TestbedHost {
  std::string name;      // the platform's host, also the hostname of its namespace
  std::string address;   // its IPv4 address in 198.18.0.0/16
  int ranks = 0;         // ranks placed on it
  double up_Bps = 0;     // the platform's rate of its fastest own link, out and in (times --bw-scale)
  double down_Bps = 0;
  int ports = 0;         // its NICs: veth pairs of its namespace
  double speed_flops = 0;
  double collective_overhead_s = 0;  // the platform's wulf:collective_overhead (0: none)
  std::string device, efficiency;    // its wulf:device and wulf:efficiency ("": none)
};

// What a run will build: the hosts its ranks use, how they map, and the dilation.

struct TestbedPlan {
  std::string platform;
  std::vector<TestbedHost> hosts;  // the hosts used, in rank order
  std::vector<int> rank_host;      // rank r runs on hosts[rank_host[r]]
  double dilation = 0;
  std::string dilation_from;       // "--dilation" or how the default was chosen
  TestbedNetwork network;          // what is built between the hosts
  std::vector<std::string> notes;  // what it does not represent, for people
  double route_latency_s = 0;      // the platform's largest host-to-host latency
  // Whether the links' latencies are held by forwarders; false where the plan left them out
  // (they would need a dilation past the bounds) or the platform has none.
  bool latencies_held = false;
  // Open MPI's eager limit, bytes: messages up to it are sent without waiting for the receiver
  // (--eager-limit; default kTestbedEagerBytes).
  long long eager_bytes = kTestbedEagerBytes;
  // The record's description: hosts, addresses, rates, shaping, dilation, notes, and per rank
  // its host's speed and collective overhead (what the ranks read).
  Json to_json() const;
};

// The network between the hosts named in `list` (a,b,...), as SimGrid gives it
// (wulf-platform network), rates times bw_scale; hosts gets each host's name, speed_flops,
// cores and collective_overhead. Throws InputError naming the platform.
// pairs: the routes to read, as (from, to) indices into the list (empty: every ordered pair).
PlatformNetwork read_network(const std::string& platform, const std::string& list, double bw_scale, Json& hosts,
                             const std::vector<std::pair<std::size_t, std::size_t>>& pairs = {});
// One of those hosts' wulf:collective_overhead in seconds (0: none); an InputError naming the
// platform for one that is not a duration.
double collective_overhead_s(const Json& host, const std::string& platform);

// The plan for placed hosts (one entry per host with its ranks in `cores`, in rank order, as
// platform_hosts or placed_hosts give them, cut to the ranks), the platform read through
// SimGrid (wulf-platform network). dilation 0 chooses the default (default_dilation), and
// leaves the links' latencies out where their forwarders would need more than the bounds;
// drop_latencies leaves them out at any dilation (a later run of a bench whose first plan
// left them out: the same network for every run).
// machine: the cores the plan is made for and what other work keeps busy of them (the default
// dilation depends on both); this machine as the run is planned unless given.
struct PlanMachine {
  unsigned cores = 1;
  double busy_cores = 0;
  // std::thread::hardware_concurrency and the last minute's load average.
  static PlanMachine here();
};
TestbedPlan plan_testbed(const std::string& platform, const std::vector<PlatformHost>& placed, int np,
                         double dilation, double bw_scale, bool drop_latencies = false,
                         const PlanMachine& machine = PlanMachine::here());

// The plan for any program (`wulf testbed run`): the hosts and network as plan_testbed's, the
// links' latencies held, at a dilation of 1, since a program's own compute cannot be dilated:
// the links run at the platform's rates (times bw_scale).
TestbedPlan plan_program_testbed(const std::string& platform, const std::vector<PlatformHost>& placed, int np,
                                 double bw_scale);
// For a plan of dilation 1: "" where this machine's cores carry its links in real time
// (path_load), else a note of the rate they carry, and the --bw-scale (times bw_scale, the
// one the plan has) under which they would.
std::string real_time_note(const TestbedPlan& plan, unsigned cores, double bw_scale);
// For a program of np ranks (`wulf testbed run`): "" where this machine's cores give each rank
// a core of its own, else a note that the ranks' compute, and their communication's threads,
// share the cores: what the program measures is that of hosts cores / np as fast, which the
// platform does not describe. The testbed's own training dilates the compute instead.
std::string shared_cores_note(int np, unsigned cores);

// What the plan builds, for people: the hosts and their shaped rates, the switches and the
// links between them, the dilation, and every note of what is not represented.
void print_testbed(std::ostream& out, const TestbedPlan& plan);

// The default D: 10 for up to 4 ranks per core of this machine (more ranks, proportionally
// more), and at least what the software path needs (path_load), rounded up. busy_cores: the
// cores other work keeps busy (the load average as the run is planned); where it is half a
// core or more, the ranks get the cores left (at least half a core) and only 2 ranks a core.
// Measured with Bat Cave's allreduces of 4 096, 16 768 and 54 912 doubles at p = 8 on 2 cores
// (testbed against simulation): idle, D = 10, 20 and 40 all within 2.6%; with one core kept
// busy by another process, D = 10 was 25%, 9% and 5.5% slower, D = 20 5.7%, 4.5% and 3.6%,
// D = 40 within 2.6%; with both kept busy, D = 10 29%, 10% and 5.7%, D = 40 within 3.4%: a
// rank or forwarder that waits for a core adds its wait to every message, which a larger D
// makes small beside the dilated network (experiments/testbed/README.md, "p = 8").
double default_dilation(const std::vector<TestbedHost>& hosts, int np, unsigned cores, std::size_t most_hops = 2,
                        std::size_t most_delayed_hops = 0, double busy_cores = 0);
// What the software path of the links (veth pairs, tbf, the forwarders) asks of this machine's
// cores: the links' rates summed over the hosts, and the least dilation at which `cores` carry
// them without their CPU time showing. That is at most kSwitchedBytesPerCore per core through
// a switch (two shaped hops; routes of more hops carry each byte more times: hops / 2 times
// more) and, where links have a latency, at most kForwardedBytesPerCore per core a delayed hop
// (the forwarders of engine/delay_link.hpp carry each byte once a delayed hop). A dilation up
// to 1: this machine holds the links' rates in real time.
struct PathLoad {
  double links_Bps = 0;
  double dilation = 0;
};
PathLoad path_load(const std::vector<TestbedHost>& hosts, unsigned cores, std::size_t most_hops,
                   std::size_t most_delayed_hops);
// The most the software path was measured to carry through a switch without its CPU time
// showing, bytes per second a core (README, "Validate on an emulated cluster").
inline constexpr double kSwitchedBytesPerCore = 50e6;
// What the forwarders of delayed links carry without their own time showing, bytes per second
// a core at the links' rates: Messner's 8 hosts (294 MB/s of links, 2 delayed hops a route) on
// 2 cores needed D = 20 (its allreduces of 4 096 to 54 912 doubles at p = 8 took 10-18% longer
// at D = 10 than at D = 40, within 2.1% at D = 20), while Bat Cave's 8 (85 MB/s) were the same
// at D = 10 and 20 (within 0.3%): 15 MB/s a core puts Messner at 20 and Bat Cave at 10.
inline constexpr double kForwardedBytesPerCore = 15e6;

// Why this machine cannot build the testbed ("" when it can): not root or without
// CAP_NET_ADMIN, a program missing (ip, tc, ethtool, unshare, hostname), or a kernel without
// network namespaces, veth or tbf (tried in a namespace made for it and removed).
std::string testbed_unavailable();

// Before a command builds testbeds: InputError naming `command` and why this machine cannot,
// else the leftovers of killed runs removed (said on err when there were any).
void ready_testbed(const std::string& command, std::ostream& err);

// The placed hosts (platform_hosts or placed_hosts, in rank order) that np ranks fill, each
// with the ranks it gets in `cores`: the hosts a testbed of np ranks builds.
std::vector<PlatformHost> hosts_of_ranks(const std::vector<PlatformHost>& placed, long long np);

// The node of each of the np ranks on the placed hosts, as a key (the hierarchical allreduce's
// layout, rank_nodes_of numbers them): its host's wulf:node with the host's group, else the
// host itself. One key per rank: a host of c cores that np fills holds c ranks.
std::vector<std::string> rank_node_keys(const std::vector<PlatformHost>& placed, long long np);

// The rings of the rings allreduce for np ranks on the placed hosts, each its ranks in order:
// ring c visits the nodes (rank_node_keys) in the order of their first rank, and in each
// node its hosts by their place in ring c (the hosts' wulf:rings). InputError naming
// `platform` and the host where a host holds more than one rank, lacks wulf:rings or has
// another number of rings than the others, or a node's places in a ring are not 0, 1, ...
std::vector<std::vector<int>> rank_rings_of(const std::vector<PlatformHost>& placed, long long np,
                                            const std::string& platform);

// Removes the namespaces of the run whose owner tag is `tag` and the processes inside them
// (the guardian of a run, below, once the run has ended); returns how many.
int remove_testbed_namespaces(const std::string& tag);

// Removes what runs of the testbed that were killed (SIGKILL) left behind: their namespaces,
// and the processes still inside them. A run's namespaces carry its wulf's pid and start
// time, so those of a run still going are left alone. Returns how many were removed.
int remove_testbed_leftovers();

// The emulated cluster of a plan, built by the constructor (InputError, with everything made
// so far removed, if a step fails) and removed by the destructor, which also ends every
// process still inside its namespaces. Before it builds, it starts its guardian, `wulf
// testbed guard TAG` (engine/process.hpp's start_guardian), which removes the namespaces once
// this process has ended, should it end without its destructor (SIGKILL).
class Testbed {
 public:
  explicit Testbed(TestbedPlan plan);
  ~Testbed();
  Testbed(const Testbed&) = delete;
  Testbed& operator=(const Testbed&) = delete;

  const TestbedPlan& plan() const { return plan_; }
  // mpirun of a rank of program on each slot of the hosts, started in the first host's
  // namespace, with Open MPI's TCP transport on the testbed's addresses and the collectives'
  // choice.
  std::vector<std::string> command(const std::string& program, const MpiSessionDir& session,
                                   const Collectives& collectives) const;
  // argv started in host i's namespace under its hostname (the platform's host name), as
  // the rsh agent starts mpirun's daemons there: mpirun's own command, each rank of `wulf
  // testbed run`.
  std::vector<std::string> in_host(std::size_t host, const std::vector<std::string>& argv) const;
  // "WULF_TESTBED_FILE=..." and what else the ranks need in their environment.
  std::vector<std::string> environment() const;
  // The namespaces it made, for messages and tests.
  const std::vector<std::string>& namespaces() const { return namespaces_; }

 private:
  // build's steps, in order: a namespace a node; the veth pairs, shaped (and held by a
  // forwarder where a link has latency); the hosts' addresses and every node's routes; TCP's
  // settings in the hosts; the hostfile, mpirun's rsh agent and the testbed's description.
  void build();
  void add_namespaces();
  void add_veth(const Veth& v, std::size_t& delays);
  void shape_end(const VethEnd& e, bool delayed);
  void add_routes();
  void tune_tcp();
  void write_launch_files();
  void remove() noexcept;

  TestbedPlan plan_;
  std::string prefix_;                  // wulf-tb-<pid>.<start time>
  std::vector<std::string> namespaces_; // the network's nodes in order: the hosts first
  TempDir files_{"testbed"};            // hostfile, rsh agent, the ranks' description
  Guardian guardian_;
};

}  // namespace wulf
