// The network a testbed builds (issue 32): the platform's topology as it is, from the links
// and routes SimGrid gives for the hosts a run uses (wulf-platform network).
//
// Every link of the routes that can limit a flow becomes a hop between two network
// namespaces, a veth pair shaped at its sending end to the link's rate (tc tbf). A point
// where routes pass from one link to the next (a switch, a router) is a namespace that
// forwards by destination, as the platform's routing does; a host with several NICs gets a
// port for each. Switches are routers rather than bridges: a bridge learns where addresses
// are and cannot be told the platform's route for each pair, and a loop of bridges (Bunyip's
// tetrahedron) would need a spanning tree that cuts it.
//
// Which links meet where is found from the routes alone: the link after another in some
// route starts where that one ends. A link that routes cross one way (each split-duplex
// direction; a SHARED backbone entered from the hosts' uplinks and left by their downlinks)
// is one shaped hop, so every flow through it, whichever its direction, shares its rate, as
// SimGrid's SHARED link does. A SHARED link crossed both ways (a host's own half-duplex
// link) is a namespace pair of its own: traffic from either side enters the first, crosses
// the one shaped hop to the second, and leaves to the other side. A FATPIPE link, which
// limits each flow alone and no sum of them, is a junction: it is emulated where it is at
// least as fast as every host's own link (it then never limits a flow), and said otherwise.
// Where a route needs no link that limits, or enters a link away from where the last one
// ended, an unshaped wire joins the two points. Where routes to one host leave a node by
// different links depending on the source, that node routes by source too. Where the routes
// do not form paths at all (a route would leave a node twice), every link is a pair of nodes
// of its own (in, out) with its one shaped hop, and wires join each route's links in order:
// the same sharing, more namespaces.
//
// The plan is pure data: testbed.cpp makes it with ip and tc, tests check it without root.
#pragma once

#include "util/json.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace wulf {

// What SimGrid says of the network between a run's hosts (wulf-platform network).
struct NetworkLink {
  std::string name;
  double bandwidth_Bps = 0;  // times --bw-scale
  double latency_s = 0;
  std::string sharing;       // shared, splitduplex (one direction of such a link), fatpipe, ...
};
struct NetworkRoute {
  std::size_t from = 0, to = 0;     // hosts
  std::vector<std::size_t> links;   // indices into links, in order
  double latency_s = 0;
};
// A factor by message size, as SMPI's smpi/bw-factor and smpi/lat-factor give it: pairs
// "bytes:factor" separated by ';'; a message of s bytes takes the factor of the largest
// threshold below s (1 at or below the smallest).
struct SizeFactors {
  std::vector<std::pair<double, double>> thresholds;  // ascending
  double at(double bytes) const;
  bool all_one() const;  // every message takes its latency and bandwidth as they are
};
// Throws InputError naming what for text that is not such a list ("": none, every factor 1).
SizeFactors parse_size_factors(const std::string& text, const std::string& what);

struct PlatformNetwork {
  std::vector<std::string> hosts;
  std::vector<NetworkLink> links;
  std::vector<NetworkRoute> routes;  // every ordered pair of distinct hosts
  // SMPI's piecewise factors of a message's bandwidth and latency by its size, as SimGrid's
  // option text ("65472:0.94;0:0.81"; empty: none known).
  std::string bw_factor, lat_factor;
};

// One end of a veth pair: its namespace (a node), interface and address, and the shaping of
// what it sends (rate 0: none).
struct VethEnd {
  std::size_t node = 0;
  bool sends = false;         // traffic leaves the node through it
  std::string ifname;
  std::string address;        // 198.19.x.y/31, the pair's own subnet; none at a host
  double rate_Bps = 0;        // the platform's rate (undilated)
  double queue_bytes = 0;
  std::string link;           // the platform link it emulates ("" for a wire)
  double latency_s = 0;       // the link's latency (undilated): what it sends is held this long
                              // on the way (engine/delay_link.hpp)
};
struct Veth {
  VethEnd a, b;
};

// A namespace of the testbed's network.
struct NetworkNode {
  enum class Kind { host, junction, shared_in, shared_out };
  Kind kind = Kind::junction;
  std::string label;          // for people: the host's name, or the links that meet there
};

// A route of one node: to `destination` (a host's address) out of veth `veth`'s end `end`
// (0: a, 1: b), to the other end's address; for packets from `source` only (a host's
// address; empty: from any), where the platform routes by source too.
struct NodeRoute {
  std::size_t node = 0;
  std::string destination;
  std::size_t veth = 0;
  int end = 0;
  std::string source;
};

struct TestbedNetwork {
  std::vector<NetworkNode> nodes;  // the hosts first, in the platform network's order
  std::vector<Veth> veths;
  std::vector<NodeRoute> routes;
  std::vector<std::string> notes;  // what is not emulated, for people and the record
  std::size_t most_hops = 0;       // the most shaped hops a route crosses
  std::size_t most_delayed_hops = 0;  // the most hops with a latency (a forwarder each) a route crosses
  // For the record, with the rates shaped at dilation d (the notes are the plan's).
  Json to_json(double dilation) const;
};

// The network that carries `net`'s routes, hosts at `addresses` (one per host, in order).
// host_rate_Bps: the fastest rate a host sends at (FATPIPE links at least that fast are
// junctions). Throws InputError naming the platform, the links or hosts, and why, where the
// routes cannot be built (a route that would leave a node twice by different links).
TestbedNetwork plan_network(const PlatformNetwork& net, const std::vector<std::string>& addresses,
                            const std::string& platform);

// Shaping: each hop's tbf rate over the dilation, with switch ports into a host
// kSwitchFaster than the link so that a single flow's bottleneck is the sender's own port.
inline constexpr double kSwitchFaster = 1.02;
inline constexpr double kHostQueueBytes = 1 << 20;
inline constexpr double kSwitchQueueBytes = 4 << 20;

}  // namespace wulf
