// wulf-platform's parts (sim/platform_*.cpp), one job a file: reading what SimGrid loaded
// (platform_read), the checks every verb makes first (platform_checks), what the verbs print
// (platform_print), grow's writer (platform_grow), and loading the file (platform_load);
// platform_main.cpp reads the arguments and runs a verb.
#pragma once

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace wulf_platform {

// Keys stay in the order they are set (nlohmann's json sorts them).
using Json = nlohmann::ordered_json;

// platform_read.cpp

// The platform's hosts in the order the file declares them.
std::vector<simgrid::s4u::Host*> declared_hosts(const simgrid::s4u::Engine& e);
// The pair of hosts a route look-up is at, in memory a guarded parent reads (platform_checks'
// guarded): null where no look-up is guarded.
struct LookUp {
  const simgrid::s4u::Host* from = nullptr;
  const simgrid::s4u::Host* to = nullptr;
  bool empty = false;  // the route from `from` to `to` has no links and no latency
};
extern LookUp* look_up;
// One route's summary: its links, latency and narrowest link. No links and no latency is no
// route at all (a Full zone that lacks one), the slowest there is.
struct Route {
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  const simgrid::s4u::Link* bottleneck = nullptr;
  double bandwidth() const { return bottleneck ? bottleneck->get_bandwidth() : latency == 0 ? 0.0 : INFINITY; }
};
Route route(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
// j as one JSON text on standard output.
void print_json(const Json& j);
// The zone property key of host h's zone or of a zone around it, or nullptr.
const char* zone_property(const simgrid::s4u::Engine& e, const simgrid::s4u::Host* h, const char* key);
std::string number_text(double x);  // "%g"
// Whether SimGrid builds every route between two hosts of zone z from their own links.
bool routes_by_construction(const simgrid::s4u::NetZone* z);

// The what-if scales of a run (hosts --bw-scale X --lat-scale Y --speed-scale Z), 1: none.
struct Scales {
  double bw = 1, lat = 1, speed = 1;
};

// platform_checks.cpp: each exits 2 (returns 2) with one line on standard error.
int check_config();
int check_platform(const simgrid::s4u::Engine& e, const Scales& scales);
// Runs work, which looks routes up, in a child process (SimGrid may stop it).
int guarded(const std::function<int()>& work);
int check_routes(const std::vector<simgrid::s4u::Host*>& hosts);
// Ordered pairs of hosts, as indices into a list of them.
using HostPairs = std::vector<std::pair<std::size_t, std::size_t>>;
// The same for these pairs of hosts alone.
int check_routes(const std::vector<simgrid::s4u::Host*>& hosts, const HostPairs& pairs);

// platform_print.cpp
void info(const simgrid::s4u::Engine& e);
// pairs: the routes to print (nullptr: every ordered pair of distinct hosts).
void network(const simgrid::s4u::Engine& e, const std::vector<simgrid::s4u::Host*>& hosts,
             const HostPairs* pairs = nullptr);
// `hosts`: the price, then a line a host (platform_main.cpp's usage says which fields).
int print_hosts(const simgrid::s4u::Engine& e);

// platform_grow.cpp
int grow(const simgrid::s4u::Engine& e, unsigned long n, const std::string& out_path);

// platform_load.cpp
void load_platform(simgrid::s4u::Engine& e, const char* path);

}  // namespace wulf_platform
