// wulf-platform: what its verbs print of a loaded platform: `info` (the whole platform as JSON),
// `network` (the hosts and routes the testbed builds), and `hosts` (a line a host).
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

Json zone_json(const simgrid::s4u::NetZone* z) {
  Json out = {{"name", z->get_name()}, {"hosts", z->get_all_hosts().size()}, {"properties", Json::object()}};
  // The zone's <prop> elements, e.g. wulf:cost-usd (seed 002's price/performance).
  if (const auto* props = z->get_properties())
    for (const auto& [key, value] : *props) out["properties"][key] = value;
  out["zones"] = Json::array();
  for (const simgrid::s4u::NetZone* c : z->get_children()) out["zones"].push_back(zone_json(c));
  return out;
}

// The hosts whose routes info looks up, in declared order: all of a platform of up to 1 024
// hosts; of a larger one, from each zone's hosts about 1 024 over the number of zones, spread
// evenly over them (its first and last among them; at least one a zone). So every pair of
// zones is looked at, and a cluster of 100 000 hosts costs about a million look-ups (from
// every 98th host to every host: a hundred million, 84 s, before issue 31).
std::vector<simgrid::s4u::Host*> route_samples(const std::vector<simgrid::s4u::Host*>& hosts) {
  constexpr std::size_t most = 1024;
  if (hosts.size() <= most) return hosts;
  std::vector<std::vector<simgrid::s4u::Host*>> zones;  // hosts by zone, zones as first met
  std::map<const simgrid::s4u::NetZone*, std::size_t> index;
  for (simgrid::s4u::Host* h : hosts) {
    const auto [at, added] = index.emplace(h->get_englobing_zone(), zones.size());
    if (added) zones.emplace_back();
    zones[at->second].push_back(h);
  }
  const std::size_t per_zone = std::max<std::size_t>(1, most / zones.size());
  std::vector<simgrid::s4u::Host*> out;
  for (const auto& zone : zones) {
    const std::size_t m = zone.size(), k = std::min(m, per_zone);
    for (std::size_t i = 0; i < k; ++i) out.push_back(zone[k == 1 ? 0 : i * (m - 1) / (k - 1)]);
  }
  return out;
}

// For every pair of zones that hold hosts (a zone with itself too), the slowest route
// between a host of one and a host of the other: the narrowest bottleneck, then the longest
// latency. So a slow link between two zones shows, wherever it is. Between the hosts
// route_samples gives: every pair on a platform of up to 1 024 hosts ("routes_looked_up" in
// each entry says how many were compared).
Json slowest_routes(const std::vector<simgrid::s4u::Host*>& all) {
  const std::vector<simgrid::s4u::Host*> hosts = route_samples(all);
  const std::size_t n = hosts.size();
  struct Slowest {
    std::size_t from = 0, to = 0;
    Route route;
    std::size_t looked_up = 0;
  };
  std::map<std::pair<std::string, std::string>, Slowest> slowest;
  std::vector<std::pair<std::string, std::string>> order;  // zone pairs as first met
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const auto key = std::make_pair(hosts[i]->get_englobing_zone()->get_name(), hosts[j]->get_englobing_zone()->get_name());
      Route r = route(hosts[i], hosts[j]);
      auto found = slowest.find(key);
      if (found == slowest.end()) {
        order.push_back(key);
        slowest.emplace(key, Slowest{i, j, std::move(r), 1});
        continue;
      }
      Slowest& s = found->second;
      ++s.looked_up;
      if (r.bandwidth() < s.route.bandwidth() ||
          (r.bandwidth() == s.route.bandwidth() && r.latency > s.route.latency))
        s.from = i, s.to = j, s.route = std::move(r);
    }
  Json out = Json::array();
  for (const auto& key : order) {
    const Slowest& s = slowest.at(key);
    const Route& r = s.route;
    Json links = Json::array();
    for (const simgrid::s4u::Link* l : r.links) links.push_back(l->get_name());
    out.push_back({{"from_zone", key.first},
                   {"to_zone", key.second},
                   {"from", hosts[s.from]->get_name()},
                   {"to", hosts[s.to]->get_name()},
                   {"links", std::move(links)},
                   {"latency_s", r.latency},
                   {"bottleneck_Bps", r.bandwidth() == INFINITY ? 0.0 : r.bandwidth()},
                   {"bottleneck_link", r.bottleneck ? Json(r.bottleneck->get_name()) : Json(nullptr)},
                   {"routes_looked_up", s.looked_up}});
  }
  return out;
}

// The whole platform as one JSON object: {"hosts": [...], "links": [...], "zone": {...},
// "routes": [...]}. Hosts and links are printed one at a time as they are made, not kept: a
// cluster of 100 000 hosts and their links would otherwise hold 190 MB of JSON beside
// SimGrid's own.
void info(const simgrid::s4u::Engine& e) {
  const std::vector<simgrid::s4u::Host*> hosts = declared_hosts(e);
  std::fputs("{\"hosts\": [", stdout);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (i > 0) std::fputs(", ", stdout);
    print_json({{"name", hosts[i]->get_name()},
                {"cores", hosts[i]->get_core_count()},
                {"speed_flops", hosts[i]->get_speed()},
                {"zone", hosts[i]->get_englobing_zone()->get_name()}});
  }
  // The platform's own links; SimGrid's internal ones (__loopback__) are not the user's.
  std::fputs("], \"links\": [", stdout);
  bool first = true;
  for (const simgrid::s4u::Link* l : e.get_all_links())
    if (l->get_name().rfind("__", 0) != 0) {
      if (!first) std::fputs(", ", stdout);
      first = false;
      print_json({{"name", l->get_name()},
                  {"bandwidth_Bps", l->get_bandwidth()},
                  {"latency_s", l->get_latency()},
                  {"sharing", policy(l->get_sharing_policy())}});
    }
  std::fputs("], \"zone\": ", stdout);
  print_json(zone_json(e.get_netzone_root()));
  std::fputs(", \"routes\": ", stdout);
  print_json(slowest_routes(hosts));
  std::fputs("}\n", stdout);
}

// The hosts (distinct, at least one) and the network between them as the testbed builds it
// (engine/testbed_network): each host's speed, cores and collective overhead; every link of
// their routes once (bandwidth, latency, sharing policy: a split-duplex link is two links,
// NAME_UP and NAME_DOWN, one a direction); and the route of every ordered pair of hosts as
// the indices of its links in order, with its latency (or of the pairs given alone); and SMPI's piecewise factors of a
// message's bandwidth and latency by its size, as the platform's <config> or SimGrid's
// defaults set them ("" where SimGrid has no such option).
void network(const simgrid::s4u::Engine& e, const std::vector<simgrid::s4u::Host*>& hosts, const HostPairs* pairs) {
  Json out = {{"hosts", Json::array()}, {"links", Json::array()}, {"routes", Json::array()}};
  for (const char* factor : {"smpi/bw-factor", "smpi/lat-factor"}) {
    std::string value;
    try {
      value = simgrid::config::get_value<std::string>(factor);
    } catch (const std::exception&) {  // not declared in this SimGrid
    }
    out[factor] = value;
  }
  for (const simgrid::s4u::Host* h : hosts) {
    const char* overhead = zone_property(e, h, "wulf:collective_overhead");
    const char* device = h->get_property("wulf:device");
    const char* efficiency = h->get_property("wulf:efficiency");
    const char* speed16 = h->get_property("wulf:speed16");
    out["hosts"].push_back({{"name", h->get_name()},
                            {"speed_flops", h->get_speed()},
                            {"cores", h->get_core_count()},
                            {"collective_overhead", overhead ? overhead : ""},
                            {"device", device ? device : ""},
                            {"efficiency", efficiency ? efficiency : ""},
                            {"speed16", speed16 ? speed16 : ""}});
  }
  std::map<const simgrid::s4u::Link*, std::size_t> index;
  HostPairs every;
  if (!pairs) {
    for (std::size_t i = 0; i < hosts.size(); ++i)
      for (std::size_t j = 0; j < hosts.size(); ++j)
        if (i != j) every.emplace_back(i, j);
    pairs = &every;
  }
  for (const auto& [i, j] : *pairs) {
    const Route r = route(hosts[i], hosts[j]);
    Json links = Json::array();
    for (const simgrid::s4u::Link* l : r.links) {
      const auto [at, added] = index.emplace(l, index.size());
      if (added)
        out["links"].push_back({{"name", l->get_name()},
                                {"bandwidth_Bps", l->get_bandwidth()},
                                {"latency_s", l->get_latency()},
                                {"sharing", policy(l->get_sharing_policy())}});
      links.push_back(at->second);
    }
    out["routes"].push_back({{"from", i}, {"to", j}, {"links", std::move(links)}, {"latency_s", r.latency}});
  }
  print_json(out);
  std::fputs("\n", stdout);
}

// The wulf:cost-usd property of zone z or of the first zone in it that has it (depth first),
// or nullptr.
const char* cost_property(const simgrid::s4u::NetZone* z) {
  if (const char* v = z->get_property("wulf:cost-usd")) return v;
  for (const simgrid::s4u::NetZone* c : z->get_children())
    if (const char* v = cost_property(c)) return v;
  return nullptr;
}

// The machine's price, for the first line of `hosts`: "-" where no zone says, else a
// positive number. False, with the fault on standard error, for any other value.
bool cost_text(const simgrid::s4u::Engine& e, std::string& text) {
  const char* v = cost_property(e.get_netzone_root());
  if (!v) {
    text = "-";
    return true;
  }
  char* end = nullptr;
  errno = 0;
  const double cost = std::strtod(v, &end);
  if (end == v || *end != '\0' || errno != 0 || !(cost > 0) || !std::isfinite(cost)) {
    std::fprintf(stderr, "wulf:cost-usd '%s' is not a positive number of USD\n", v);
    return false;
  }
  char number[32];
  std::snprintf(number, sizeof number, "%.17g", cost);
  text = number;
  return true;
}

// `hosts`: the machine's price, then one line a host.
int print_hosts(const simgrid::s4u::Engine& engine) {
  std::string cost;
  if (!cost_text(engine, cost)) return 2;
  std::printf("cost-usd %s\n", cost.c_str());
  // The properties seed 002's four-stage reduce reads: the host's group of nodes, its
  // index in the group and its NICs ("-" where the platform does not say).
  auto prop = [](const simgrid::s4u::Host* h, const char* key) {
    const char* v = h->get_property(key);
    return std::string(v && *v ? v : "-");
  };
  // And what a host's compute is charged by: its device and its efficiency per kind of
  // layer (blanks taken out: the line is split at blanks).
  auto word = [&](const simgrid::s4u::Host* h, const char* key) {
    std::string v = prop(h, key);
    v.erase(std::remove_if(v.begin(), v.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }),
            v.end());
    return v.empty() ? std::string("-") : v;
  };
  for (const simgrid::s4u::Host* h : declared_hosts(engine))
    std::printf("%s %d %.17g %s %s %s %s %s %s %s %s %s\n", h->get_cname(), h->get_core_count(), h->get_speed(),
                prop(h, "wulf:group").c_str(), prop(h, "wulf:node").c_str(), prop(h, "wulf:nics").c_str(),
                word(h, "wulf:device").c_str(), word(h, "wulf:efficiency").c_str(), word(h, "wulf:rings").c_str(),
                word(h, "wulf:ddp").c_str(), word(h, "wulf:memory").c_str(), word(h, "wulf:speed16").c_str());
  return 0;
}

}  // namespace wulf_platform
