// wulf-platform: the platform as SimGrid loaded it, as every verb reads it: its hosts in the
// order the file declares them, a route's summary, a zone's properties, the JSON out.
#include "platform_parts.hpp"

// or a platform without hosts, a speed, bandwidth, latency or core count no machine has.
#include <simgrid/kernel/routing/ClusterZone.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <fstream>
#include <map>
#include <new>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace wulf_platform {

// The hosts of zone z and of the zones in it, in the order the platform declares them: each
// zone's own hosts in their order of creation (a cluster's radical, in order), then its
// zones' in theirs. SimGrid's Engine::get_all_hosts() sorts by name instead (ft-0, ft-1,
// ft-10, ...), which would put ranks on hosts the file does not put side by side.
void add_declared_hosts(const simgrid::s4u::NetZone* z, std::vector<simgrid::s4u::Host*>& out) {
  std::vector<simgrid::s4u::Host*> own;
  for (simgrid::s4u::Host* h : z->get_all_hosts())
    if (h->get_englobing_zone() == z) own.push_back(h);
  std::sort(own.begin(), own.end(), [](const simgrid::s4u::Host* a, const simgrid::s4u::Host* b) {
    return a->get_netpoint()->id() < b->get_netpoint()->id();
  });
  out.insert(out.end(), own.begin(), own.end());
  for (const simgrid::s4u::NetZone* c : z->get_children()) add_declared_hosts(c, out);
}

std::vector<simgrid::s4u::Host*> declared_hosts(const simgrid::s4u::Engine& e) {
  std::vector<simgrid::s4u::Host*> hosts;
  add_declared_hosts(e.get_netzone_root(), hosts);
  return hosts;
}

// SimGrid 3.32 stops the process on some route look-ups instead of saying there is no route:
// a segmentation fault between zones whose enclosing Full zone has no <route> at all, an abort
// ("Bad gateways") between zones it has no route for. So every look-up runs in a child process
// (guarded, platform_checks.cpp), and names the pair it is looking up here, in memory shared with the
// parent, which reports the pair should the child be stopped. A pair found with no route at
// all is reported the same way.
LookUp* look_up = nullptr;

Route route(simgrid::s4u::Host* from, simgrid::s4u::Host* to) {
  Route r;
  if (look_up) look_up->from = from, look_up->to = to;
  from->route_to(to, r.links, &r.latency);
  for (const simgrid::s4u::Link* l : r.links)
    if (!r.bottleneck || l->get_bandwidth() < r.bottleneck->get_bandwidth()) r.bottleneck = l;
  return r;
}

// j as one JSON text on standard output. Names come from the user's file: bytes that are not
// UTF-8 are written as U+FFFD (names are refused unless UTF-8, but properties are not).
void print_json(const Json& j) {
  std::fputs(j.dump(-1, ' ', false, Json::error_handler_t::replace).c_str(), stdout);
}

// The zone property key of host h's zone or of a zone around it (the innermost that has
// it), or nullptr. The root's get_parent() is not followed (SimGrid 3.32 leaves it unset).
const char* zone_property(const simgrid::s4u::Engine& e, const simgrid::s4u::Host* h, const char* key) {
  const simgrid::s4u::NetZone* root = e.get_netzone_root();
  for (const simgrid::s4u::NetZone* z = h->get_englobing_zone(); z; z = z == root ? nullptr : z->get_parent())
    if (const char* v = z->get_property(key)) return v;
  return nullptr;
}

std::string number_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// Whether SimGrid builds every route between two hosts of zone z from their own links: a
// <cluster> (a star of private links, or a fat tree, torus or dragonfly) or a <zone
// routing="Cluster">. Such a route is never empty; a Full zone's may be.
bool routes_by_construction(const simgrid::s4u::NetZone* z) {
  return dynamic_cast<const simgrid::kernel::routing::ClusterZone*>(z->get_impl()) != nullptr;
}

}  // namespace wulf_platform
