// wulf-platform: reads a SimGrid platform file with SimGrid's own loader and prints what
// wulf needs of it. A program of its own so that SimGrid's engine, of which a process may
// hold one, never lives inside the wulf command or its tests.
//
//   wulf-platform hosts FILE.xml [K]  one line per host: name, cores, speed in flop/s, and
//                                    its wulf:group, wulf:node, wulf:nics properties; with
//                                    K, first checks that the first K hosts reach each other
//   wulf-platform info FILE.xml    the whole platform as JSON: hosts, links, zones (with their
//                                  properties), routes
//                                  between the first hosts
//   wulf-platform grow FILE.xml N OUT.xml
//                                  writes the platform's one homogeneous cluster with N hosts
//                                  (the what-if of more processors than the machine had)
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace {

// Keys stay in the order they are set (nlohmann's json sorts them).
using Json = nlohmann::ordered_json;

const char* policy(simgrid::s4u::Link::SharingPolicy p) {
  using P = simgrid::s4u::Link::SharingPolicy;
  switch (p) {
    case P::SHARED: return "shared";
    case P::SPLITDUPLEX: return "splitduplex";
    case P::FATPIPE: return "fatpipe";
    case P::WIFI: return "wifi";
    case P::NONLINEAR: return "nonlinear";
  }
  return "?";
}

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

Json zone_json(const simgrid::s4u::NetZone* z) {
  Json out = {{"name", z->get_name()}, {"hosts", z->get_all_hosts().size()}, {"properties", Json::object()}};
  // The zone's <prop> elements, e.g. wulf:cost-usd (seed 002's price/performance).
  if (const auto* props = z->get_properties())
    for (const auto& [key, value] : *props) out["properties"][key] = value;
  out["zones"] = Json::array();
  for (const simgrid::s4u::NetZone* c : z->get_children()) out["zones"].push_back(zone_json(c));
  return out;
}

// One route's summary: its links, latency and narrowest link. No links and no latency is
// no route at all (a Full zone that lacks one), the slowest there is.
struct Route {
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  const simgrid::s4u::Link* bottleneck = nullptr;
  double bandwidth() const { return bottleneck ? bottleneck->get_bandwidth() : latency == 0 ? 0.0 : INFINITY; }
};

Route route(simgrid::s4u::Host* from, simgrid::s4u::Host* to) {
  Route r;
  from->route_to(to, r.links, &r.latency);
  for (const simgrid::s4u::Link* l : r.links)
    if (!r.bottleneck || l->get_bandwidth() < r.bottleneck->get_bandwidth()) r.bottleneck = l;
  return r;
}

// For every pair of zones that hold hosts (a zone with itself too), the slowest route
// between a host of one and a host of the other: the narrowest bottleneck, then the longest
// latency. So a slow link between two zones shows, wherever it is. Platforms of up to 1 024
// hosts are checked pair by pair; larger ones from every k-th host, k chosen for about a
// million routes ("routes_from_every" in each entry says which).
Json slowest_routes(const std::vector<simgrid::s4u::Host*>& hosts) {
  const std::size_t n = hosts.size();
  const std::size_t stride = n <= 1024 ? 1 : (n + 1023) / 1024;
  std::map<std::pair<std::string, std::string>, std::pair<std::pair<std::size_t, std::size_t>, Route>> slowest;
  std::vector<std::pair<std::string, std::string>> order;  // zone pairs as first met
  for (std::size_t i = 0; i < n; i += stride)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const auto key = std::make_pair(hosts[i]->get_englobing_zone()->get_name(), hosts[j]->get_englobing_zone()->get_name());
      Route r = route(hosts[i], hosts[j]);
      auto found = slowest.find(key);
      if (found == slowest.end()) {
        order.push_back(key);
        slowest.emplace(key, std::make_pair(std::make_pair(i, j), std::move(r)));
      } else if (r.bandwidth() < found->second.second.bandwidth() ||
                 (r.bandwidth() == found->second.second.bandwidth() && r.latency > found->second.second.latency)) {
        found->second = std::make_pair(std::make_pair(i, j), std::move(r));
      }
    }
  Json out = Json::array();
  for (const auto& key : order) {
    const auto& [pair, r] = slowest.at(key);
    Json links = Json::array();
    for (const simgrid::s4u::Link* l : r.links) links.push_back(l->get_name());
    out.push_back({{"from_zone", key.first},
                   {"to_zone", key.second},
                   {"from", hosts[pair.first]->get_name()},
                   {"to", hosts[pair.second]->get_name()},
                   {"links", std::move(links)},
                   {"latency_s", r.latency},
                   {"bottleneck_Bps", r.bandwidth() == INFINITY ? 0.0 : r.bandwidth()},
                   {"bottleneck_link", r.bottleneck ? Json(r.bottleneck->get_name()) : Json(nullptr)},
                   {"routes_from_every", stride}});
  }
  return out;
}

void info(const simgrid::s4u::Engine& e) {
  Json out = {{"hosts", Json::array()}, {"links", Json::array()}};
  const std::vector<simgrid::s4u::Host*> hosts = declared_hosts(e);
  for (const simgrid::s4u::Host* h : hosts)
    out["hosts"].push_back({{"name", h->get_name()},
                            {"cores", h->get_core_count()},
                            {"speed_flops", h->get_speed()},
                            {"zone", h->get_englobing_zone()->get_name()}});
  // The platform's own links; SimGrid's internal ones (__loopback__) are not the user's.
  for (const simgrid::s4u::Link* l : e.get_all_links())
    if (l->get_name().rfind("__", 0) != 0)
      out["links"].push_back({{"name", l->get_name()},
                              {"bandwidth_Bps", l->get_bandwidth()},
                              {"latency_s", l->get_latency()},
                              {"sharing", policy(l->get_sharing_policy())}});
  out["zone"] = zone_json(e.get_netzone_root());
  out["routes"] = slowest_routes(hosts);
  // Names come from the user's file: bytes that are not UTF-8 are written as U+FFFD.
  std::printf("%s\n", out.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
}

}  // namespace

// Exits 2 naming the first pair of the first k hosts with no route between them (a Full
// zone without a <route> for a pair gives an empty route, which SimGrid does not refuse).
int check_routes(const std::vector<simgrid::s4u::Host*>& hosts, std::size_t k) {
  k = std::min(k, hosts.size());
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      if (i == j) continue;
      std::vector<simgrid::s4u::Link*> path;
      double latency = 0;
      hosts[i]->route_to(hosts[j], path, &latency);
      if (path.empty() && latency == 0) {
        std::fprintf(stderr, "no route from host '%s' to host '%s'\n", hosts[i]->get_cname(), hosts[j]->get_cname());
        return 2;
      }
    }
  return 0;
}

// What zone id is, when not a flat cluster, from the names SimGrid 3.32 gives its links (its zone
// types are not visible outside the library): a fat tree's are link_from_<level>_..., a
// torus's <id>_link_from_<a>_to_<b>, a dragonfly's ..._link_in_group_... and
// local_link_from_router_...; a flat cluster's <id>_link_<n>.
std::string topology_of(const simgrid::s4u::Engine& e, const std::string& id) {
  for (const simgrid::s4u::Link* l : e.get_all_links()) {
    const std::string& name = l->get_name();
    if (name.find("_link_in_group_") != std::string::npos || name.rfind("local_link_from_router_", 0) == 0)
      return "cluster " + id + " is a dragonfly (topology=\"DRAGONFLY\")";
    if (name.rfind(id + "_link_from_", 0) == 0) return "cluster " + id + " is a torus (topology=\"TORUS\")";
    if (name.rfind("link_from_", 0) == 0) return "cluster " + id + " is a fat tree (topology=\"FAT_TREE\")";
  }
  return "zone " + id + " is not a <cluster> (it has no host links named " + id + "_link_0)";
}

// The cluster of a platform made of one <cluster> (hosts alike, one zone), rewritten with n
// hosts from what SimGrid loaded: speed, cores, host links, backbone, properties, the
// SMPI factors. Exits 2 naming what makes the platform no such cluster.
int grow(const simgrid::s4u::Engine& e, unsigned long n, const std::string& out_path) {
  const std::vector<simgrid::s4u::Host*> hosts = e.get_all_hosts();
  const simgrid::s4u::NetZone* zone = hosts.front()->get_englobing_zone();
  const std::string id = zone->get_name();
  for (const simgrid::s4u::Host* h : hosts)
    if (h->get_englobing_zone() != zone || h->get_speed() != hosts[0]->get_speed() ||
        h->get_core_count() != hosts[0]->get_core_count()) {
      std::fprintf(stderr, "--grow: the platform is not one cluster of like hosts (%s differs from %s)\n",
                   h->get_cname(), hosts[0]->get_cname());
      return 2;
    }
  // Host names are prefix + number + suffix.
  const std::string first = hosts[0]->get_name();
  const std::size_t digit = first.find_first_of("0123456789");
  if (digit == std::string::npos) {
    std::fprintf(stderr, "--grow: host %s is not named prefix-number-suffix\n", first.c_str());
    return 2;
  }
  const std::size_t after = first.find_first_not_of("0123456789", digit);
  const std::string prefix = first.substr(0, digit), suffix = after == std::string::npos ? "" : first.substr(after);
  const simgrid::s4u::Link* split_up = e.link_by_name_or_null(id + "_link_0_UP");
  const simgrid::s4u::Link* up = split_up ? split_up : e.link_by_name_or_null(id + "_link_0");
  const simgrid::s4u::Link* backbone = e.link_by_name_or_null(id + "_backbone");
  if (!up) {
    std::fprintf(stderr,
                 "--grow: %s; --grow rewrites only a flat cluster (one <cluster> of like hosts, each "
                 "with its own link, and a backbone or none): for more hosts, change the platform file (a fat "
                 "tree's, torus's or dragonfly's topo_parameters fix its host count)\n",
                 topology_of(e, id).c_str());
    return 2;
  }
  std::FILE* f = std::fopen(out_path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "--grow: cannot write %s\n", out_path.c_str());
    return 2;
  }
  std::fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  std::fprintf(f, "<!-- What-if, written by wulf-platform grow: cluster %s with %lu hosts instead of %zu,\n"
                  "     every other number as SimGrid loaded it. -->\n<platform version=\"4.1\">\n  <config>\n",
               id.c_str(), n, hosts.size());
  for (const char* key : {"smpi/bw-factor", "smpi/lat-factor"})
    std::fprintf(f, "    <prop id=\"%s\" value=\"%s\"/>\n", key, simgrid::config::get_value<std::string>(key).c_str());
  std::fprintf(f, "  </config>\n  <zone id=\"%s_whatif\" routing=\"Full\">\n", id.c_str());
  std::fprintf(f,
               "    <cluster id=\"%s\" prefix=\"%s\" suffix=\"%s\" radical=\"0-%lu\" speed=\"%.17gf\" core=\"%d\"\n"
               "             bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"%s\"",
               id.c_str(), prefix.c_str(), suffix.c_str(), n - 1, hosts[0]->get_speed(), hosts[0]->get_core_count(),
               up->get_bandwidth(), up->get_latency(), split_up ? "SPLITDUPLEX" : "SHARED");
  if (backbone)
    std::fprintf(f, " bb_bw=\"%.17gBps\" bb_lat=\"%.17gs\" bb_sharing_policy=\"%s\"", backbone->get_bandwidth(),
                 backbone->get_latency(),
                 backbone->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE ? "FATPIPE" : "SHARED");
  std::fprintf(f, ">\n");
  if (const auto* props = zone->get_properties())
    for (const auto& [key, value] : *props) {
      std::string v;
      for (char c : value) v += c == '"' ? std::string("&quot;") : c == '&' ? std::string("&amp;") : std::string(1, c);
      std::fprintf(f, "      <prop id=\"%s\" value=\"%s\"/>\n", key.c_str(), v.c_str());
    }
  std::fprintf(f, "    </cluster>\n  </zone>\n</platform>\n");
  std::fclose(f);
  return 0;
}

int main(int argc, char** argv) {
  const std::string verb = argc >= 3 ? argv[1] : "";
  if ((verb != "hosts" && verb != "info" && verb != "grow") || argc > 5 || (verb == "info" && argc != 3) ||
      (verb == "grow" && argc != 5) || (verb == "hosts" && argc > 4)) {
    std::fprintf(stderr, "usage: wulf-platform hosts FILE.xml [K] | info FILE.xml | grow FILE.xml N OUT.xml\n");
    return 2;
  }
  try {
    int sg_argc = 2;
    char log[] = "--log=root.thres:critical";
    char* sg_argv[] = {argv[0], log, nullptr};
    simgrid::s4u::Engine engine(&sg_argc, sg_argv);
    engine.load_platform(argv[2]);
    if (verb == "info") {
      info(engine);
      return 0;
    }
    if (verb == "grow") return grow(engine, std::stoul(argv[3]), argv[4]);
    // hosts FILE K: the first K hosts must reach each other; hosts FILE a,b,...: these
    // (an explicit placement, --hosts) must exist and reach each other.
    if (argc == 4) {
      const std::string which = argv[3];
      std::vector<simgrid::s4u::Host*> chosen;
      if (which.find_first_not_of("0123456789") == std::string::npos) {
        chosen = declared_hosts(engine);
        chosen.resize(std::min(chosen.size(), static_cast<std::size_t>(std::stoul(which))));
      } else {
        std::size_t start = 0;
        while (start <= which.size()) {
          const std::size_t end = std::min(which.find(',', start), which.size());
          const std::string name = which.substr(start, end - start);
          simgrid::s4u::Host* h = engine.host_by_name_or_null(name);
          if (!h) {
            std::fprintf(stderr, "--hosts: the platform has no host '%s'\n", name.c_str());
            return 2;
          }
          if (std::find(chosen.begin(), chosen.end(), h) == chosen.end()) chosen.push_back(h);
          start = end + 1;
        }
      }
      if (check_routes(chosen, chosen.size()) != 0) return 2;
    }
    // The properties seed 002's four-stage reduce reads: the host's group of nodes, its
    // index in the group and its NICs ("-" where the platform does not say).
    auto prop = [](const simgrid::s4u::Host* h, const char* key) {
      const char* v = h->get_property(key);
      return std::string(v && *v ? v : "-");
    };
    for (const simgrid::s4u::Host* h : declared_hosts(engine))
      std::printf("%s %d %.17g %s %s %s\n", h->get_cname(), h->get_core_count(), h->get_speed(),
                  prop(h, "wulf:group").c_str(), prop(h, "wulf:node").c_str(), prop(h, "wulf:nics").c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "SimGrid cannot load it: %s\n", e.what());
    return 2;
  }
}
