// wulf-platform: reads a SimGrid platform file with SimGrid's own loader and prints what
// wulf needs of it. A program of its own so that SimGrid's engine, of which a process may
// hold one, never lives inside the wulf command or its tests.
//
//   wulf-platform hosts FILE.xml [a,b,... | --ranks N [--per-host R]] [--bw-scale X]
//                  [--lat-scale Y] [--speed-scale Z]
//                                  a first line "cost-usd X" (the wulf:cost-usd property of the
//                                  first zone that has it, outermost first; "-" where none
//                                  has), then one line per host: name, cores, speed in flop/s,
//                                  and its wulf:group, wulf:node, wulf:nics, wulf:device,
//                                  wulf:efficiency, wulf:rings and wulf:ddp properties. First
//                                  checks that the hosts chosen reach each other: the ones
//                                  named, or the ones N ranks fill in order, at most R on a
//                                  host; and that the run's what-if scales leave every
//                                  bandwidth, latency and speed in wulf's bounds
//   wulf-platform info FILE.xml    the whole platform as JSON: hosts, links, zones (with their
//                                  properties), routes
//                                  between the first hosts
//   wulf-platform grow FILE.xml N OUT.xml
//                                  writes the platform's one homogeneous cluster with N hosts
//                                  (the what-if of more processors than the machine had)
//   wulf-platform network FILE.xml a,b,...
//                                  the hosts named and the network between them, as the
//                                  testbed builds it (JSON): each host's speed, cores and
//                                  collective overhead, the links of their routes, and the
//                                  route of every ordered pair
//
// Every verb first refuses, with exit 2 and one line on standard error, a platform SimGrid
// cannot load (its own abort included) or loads although no machine is like it or wulf
// cannot print it (check_platform): a name with a blank or a control character, a cluster
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

// SimGrid 3.32 stops the process on some route look-ups instead of saying there is no route:
// a segmentation fault between zones whose enclosing Full zone has no <route> at all, an abort
// ("Bad gateways") between zones it has no route for. So every look-up runs in a child process
// (guarded, below), and names the pair it is looking up here, in memory shared with the
// parent, which reports the pair should the child be stopped. A pair found with no route at
// all is reported the same way.
struct LookUp {
  const simgrid::s4u::Host* from = nullptr;
  const simgrid::s4u::Host* to = nullptr;
  bool empty = false;  // the route from `from` to `to` has no links and no latency
};
LookUp* look_up = nullptr;

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
  if (look_up) look_up->from = from, look_up->to = to;
  from->route_to(to, r.links, &r.latency);
  for (const simgrid::s4u::Link* l : r.links)
    if (!r.bottleneck || l->get_bandwidth() < r.bottleneck->get_bandwidth()) r.bottleneck = l;
  return r;
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

// j as one JSON text on standard output. Names come from the user's file: bytes that are not
// UTF-8 are written as U+FFFD (names are refused unless UTF-8, but properties are not).
void print_json(const Json& j) {
  std::fputs(j.dump(-1, ' ', false, Json::error_handler_t::replace).c_str(), stdout);
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

}  // namespace

// The zone property key of host h's zone or of a zone around it (the innermost that has
// it), or nullptr. The root's get_parent() is not followed (SimGrid 3.32 leaves it unset).
const char* zone_property(const simgrid::s4u::Engine& e, const simgrid::s4u::Host* h, const char* key) {
  const simgrid::s4u::NetZone* root = e.get_netzone_root();
  for (const simgrid::s4u::NetZone* z = h->get_englobing_zone(); z; z = z == root ? nullptr : z->get_parent())
    if (const char* v = z->get_property(key)) return v;
  return nullptr;
}

// The hosts (distinct, at least one) and the network between them as the testbed builds it
// (engine/testbed_network): each host's speed, cores and collective overhead; every link of
// their routes once (bandwidth, latency, sharing policy: a split-duplex link is two links,
// NAME_UP and NAME_DOWN, one a direction); and the route of every ordered pair of hosts as
// the indices of its links in order, with its latency; and SMPI's piecewise factors of a
// message's bandwidth and latency by its size, as the platform's <config> or SimGrid's
// defaults set them ("" where SimGrid has no such option).
void network(const simgrid::s4u::Engine& e, const std::vector<simgrid::s4u::Host*>& hosts) {
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
    out["hosts"].push_back({{"name", h->get_name()},
                            {"speed_flops", h->get_speed()},
                            {"cores", h->get_core_count()},
                            {"collective_overhead", overhead ? overhead : ""},
                            {"device", device ? device : ""},
                            {"efficiency", efficiency ? efficiency : ""}});
  }
  std::map<const simgrid::s4u::Link*, std::size_t> index;
  for (std::size_t i = 0; i < hosts.size(); ++i)
    for (std::size_t j = 0; j < hosts.size(); ++j) {
      if (i == j) continue;
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

// The numbers wulf takes from a platform, as the file gives them and after the what-if
// scales (--bw-scale, --lat-scale, --speed-scale) multiply them. SimGrid loads a bandwidth
// of 1e-30 B/s, a negative latency or a negative speed without a word, then either aborts
// the simulation (zero, negative, NaN or infinite bandwidth: smpirun exits 134, "The
// Impossible Did Happen") or simulates a machine that cannot be (1e-30 B/s: a run of 1e30
// seconds; an infinite speed: kernels of no time). Such a number is a unit left off or
// mistyped ("10" for "10MBps", "us" for "s") or a scale past any what-if, so it is refused,
// naming the host or link (and the option), before any rank starts.
constexpr double least_speed_flops = 1;    // no computer ever did less than 1 flop/s
constexpr double most_speed_flops = 1e18;  // nor a host more than an exaflop/s
constexpr double least_bandwidth_Bps = 1;  // nor a network link less than 1 byte/s
constexpr double most_bandwidth_Bps = 1e18;  // nor more than an exabyte a second
constexpr double most_latency_s = 3600;    // nor took an hour to start a message
// No host needs more cores than wulf runs ranks (--np at most 1 000 000): a hostfile and a
// placement hold one line per rank, whatever a host declares (core="2147483647").
constexpr int most_cores = 1000000;

// The what-if scales of a run (hosts --bw-scale X --lat-scale Y --speed-scale Z), 1: none.
struct Scales {
  double bw = 1, lat = 1, speed = 1;
};

std::string number_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// What is wrong with value (a speed or a bandwidth) against [least, most], or "".
std::string out_of(double value, double least, double most, const char* unit) {
  if (std::isfinite(value) && value >= least && value <= most) return "";
  return number_text(value) + " " + unit + "; wulf takes a finite " + (std::string(unit) == "flop/s" ? "speed" : "bandwidth") +
         " from " + number_text(least) + " to " + number_text(most) + " " + unit;
}

// The fault of a value that is fine in the file but not once the option's scale multiplies
// it: "--bw-scale 1e+308: link 'l': bandwidth 1.25e+07 bytes/s x 1e+308 = inf bytes/s; ...".
std::string scaled_fault(const char* option, double scale, const std::string& what, double value,
                         const std::string& fault) {
  return std::string(option) + " " + number_text(scale) + ": " + what + " " + number_text(value) + " x " +
         number_text(scale) + " = " + fault;
}

// What is wrong with SMPI's piecewise values by message size, "bytes:value[:value...];..."
// (at most `values` values a chunk, each above 0 and at most 1e6 for the factors, from 0 to
// 3600 for a host's overheads in seconds): SimGrid crashes on text it cannot read and aborts
// on a factor of 0 or less, mid-run. "" where nothing is.
struct PiecewiseRule {
  std::size_t values;
  double lo, hi;
  bool lo_open;
  const char* form;
};
constexpr PiecewiseRule factor_rule{1, 0, 1e6, true, "bytes:factor (bytes from 0, a factor above 0 and at most 1e6)"};
constexpr PiecewiseRule overhead_rule{2, 0, 3600, false,
                                      "bytes:seconds[:seconds a byte] (bytes from 0, each time from 0 to 3600)"};
std::string piecewise_fault(const std::string& text, const PiecewiseRule& rule) {
  std::size_t at = 0;
  do {
    const std::size_t end = std::min(text.find(';', at), text.size());
    const std::string chunk = text.substr(at, end - at);
    std::vector<double> numbers;
    bool read = true;
    for (std::size_t from = 0; read && from <= chunk.size();) {
      const std::size_t colon = std::min(chunk.find(':', from), chunk.size());
      const std::string field = chunk.substr(from, colon - from);
      char* stop = nullptr;
      const double v = std::strtod(field.c_str(), &stop);
      read = !field.empty() && *stop == '\0' && std::isfinite(v);
      numbers.push_back(v);
      from = colon + 1;
    }
    bool fits = read && numbers.size() >= 2 && numbers.size() <= rule.values + 1 && numbers[0] >= 0 &&
                numbers[0] <= 1e18;
    for (std::size_t i = 1; fits && i < numbers.size(); ++i)
      fits = (rule.lo_open ? numbers[i] > rule.lo : numbers[i] >= rule.lo) && numbers[i] <= rule.hi;
    if (!fits) return "'" + chunk + "' is not " + rule.form;
    at = end + 1;
  } while (at < text.size());
  return "";
}

// What is wrong with host h's numbers (its speed, cores and SMPI's overheads of a message), or
// "" when nothing is.
std::string host_fault(const simgrid::s4u::Host* h, const Scales& scales) {
  const std::string what = "host '" + h->get_name() + "'";
  for (unsigned long p = 0; p < h->get_pstate_count(); ++p) {
    const double speed = h->get_pstate_speed(p);
    if (const std::string fault = out_of(speed, least_speed_flops, most_speed_flops, "flop/s"); !fault.empty())
      return what + ": speed " + fault + " (a unit mistyped? e.g. speed=\"1Gf\")";
    if (const std::string fault = out_of(speed * scales.speed, least_speed_flops, most_speed_flops, "flop/s");
        !fault.empty())
      return scaled_fault("--speed-scale", scales.speed, what + ": speed", speed, fault);
  }
  if (h->get_core_count() < 1)
    return what + ": " + std::to_string(h->get_core_count()) + " cores; it needs at least one";
  // SMPI's overheads of a message on this host (read by SMPI, and by engine_messages).
  for (const char* key : {"smpi/os", "smpi/ois", "smpi/or"})
    if (const char* v = h->get_property(key))
      if (const std::string fault = piecewise_fault(v, overhead_rule); !fault.empty())
        return what + ": its " + key + " " + fault;
  if (h->get_core_count() > most_cores)
    return what + ": " + std::to_string(h->get_core_count()) + " cores; wulf takes at most " +
           std::to_string(most_cores) + ", the most ranks it runs (--np)";
  return "";
}

// What is wrong with link l's numbers, or "" when nothing is.
std::string link_fault(const simgrid::s4u::Link* l, const Scales& scales) {
  const std::string what = "link '" + l->get_name() + "'";
  const double bw = l->get_bandwidth(), lat = l->get_latency();
  if (const std::string fault = out_of(bw, least_bandwidth_Bps, most_bandwidth_Bps, "bytes/s"); !fault.empty())
    return what + ": bandwidth " + fault + " (a unit mistyped? e.g. bandwidth=\"125MBps\")";
  if (!std::isfinite(lat)) return what + ": latency " + number_text(lat) + " s; a latency must be a finite number";
  if (lat < 0) return what + ": latency " + number_text(lat) + " s; a latency cannot be negative";
  if (lat > most_latency_s)
    return what + ": latency " + number_text(lat) + " s, more than an hour (a unit mistyped? e.g. latency=\"50us\")";
  if (const std::string fault = out_of(bw * scales.bw, least_bandwidth_Bps, most_bandwidth_Bps, "bytes/s");
      !fault.empty())
    return scaled_fault("--bw-scale", scales.bw, what + ": bandwidth", bw, fault);
  if (lat * scales.lat > most_latency_s)
    return scaled_fault("--lat-scale", scales.lat, what + ": latency", lat,
                        number_text(lat * scales.lat) + " s; wulf takes a latency of at most an hour (3600 s)");
  return "";
}

// One character of a name that no name may hold, as a message shows it ("\x0a", "a space",
// "U+202E"), or "" for a character names may hold. A name is printed one to a line (a
// hostfile, wulf-platform's output, `wulf platform info`) between blanks, so it holds no
// blank, no control character (a line break would forge a line of output, an escape
// sequence recolour the terminal) and no Unicode space or format character (one that
// reverses the text around it). c is a code point; bytes that are not UTF-8 are refused
// before (name_fault).
std::string unfit_character(std::uint32_t c) {
  char text[16];
  if (c == ' ') return "a space";
  if (c < 0x20 || c == 0x7f) {
    std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(c));
    return text;
  }
  const bool unfit = (c >= 0x80 && c <= 0xa0) || c == 0x1680 || (c >= 0x2000 && c <= 0x200f) ||
                     (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f) || c == 0x3000 || c == 0xfeff;
  if (!unfit) return "";
  std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(c));
  return text;
}

// name as a message shows it: printable ASCII as it is, every other byte \xNN.
std::string shown(const std::string& name) {
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char text[8];
      std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(c));
      out += text;
    }
  }
  return out;
}

// What makes name unfit to be printed as one word of a line, or "": empty, not UTF-8, or
// holding a character no name may hold (unfit_character).
std::string name_fault(const std::string& name) {
  if (name.empty()) return "the name is empty";
  for (std::size_t i = 0; i < name.size();) {
    const auto lead = static_cast<unsigned char>(name[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    std::uint32_t c = length == 1 ? lead : length == 2 ? lead & 0x1f : length == 3 ? lead & 0x0f : lead & 0x07;
    bool utf8 = length > 0 && i + length <= name.size();
    for (std::size_t k = 1; utf8 && k < length; ++k) {
      const auto next = static_cast<unsigned char>(name[i + k]);
      utf8 = (next & 0xc0) == 0x80;
      c = (c << 6) | (next & 0x3f);
    }
    if (!utf8) {
      char text[8];
      std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(lead));
      return std::string("the name is not UTF-8 text (byte ") + text + ")";
    }
    if (const std::string unfit = unfit_character(c); !unfit.empty())
      return "the name holds " + unfit + "; a name may hold no blank, control or format character (wulf prints "
             "names one to a line)";
    i += length;
  }
  return "";
}

// The first name of the platform unfit to print (name_fault), as "host 'h\x0aevil0' (zone
// c): ...", or "": every zone's, host's and link's, and the wulf:group, wulf:node and
// wulf:nics of a host, which `hosts` prints beside its name.
std::string names_fault(const simgrid::s4u::Engine& e, const std::vector<simgrid::s4u::Host*>& hosts) {
  std::vector<const simgrid::s4u::NetZone*> zones{e.get_netzone_root()};
  for (std::size_t i = 0; i < zones.size(); ++i)
    for (const simgrid::s4u::NetZone* c : zones[i]->get_children()) zones.push_back(c);
  for (const simgrid::s4u::NetZone* z : zones)
    if (const std::string fault = name_fault(z->get_name()); !fault.empty())
      return "zone '" + shown(z->get_name()) + "': " + fault;
  for (const simgrid::s4u::Host* h : hosts) {
    const std::string where = " (zone " + shown(h->get_englobing_zone()->get_name()) + ")";
    if (const std::string fault = name_fault(h->get_name()); !fault.empty())
      return "host '" + shown(h->get_name()) + "'" + where + ": " + fault;
    for (const char* key : {"wulf:group", "wulf:node", "wulf:nics"})
      if (const char* value = h->get_property(key); value && *value)
        if (const std::string fault = name_fault(value); !fault.empty())
          return "host '" + h->get_name() + "': its " + key + " '" + shown(value) + "': " + fault;
  }
  for (const simgrid::s4u::Link* l : e.get_all_links())
    if (const std::string fault = name_fault(l->get_name()); !fault.empty())
      return "link '" + shown(l->get_name()) + "': " + fault;
  return "";
}

// Whether SimGrid builds every route between two hosts of zone z from their own links: a
// <cluster> (a star of private links, or a fat tree, torus or dragonfly) or a <zone
// routing="Cluster">. Such a route is never empty; a Full zone's may be.
bool routes_by_construction(const simgrid::s4u::NetZone* z) {
  return dynamic_cast<const simgrid::kernel::routing::ClusterZone*>(z->get_impl()) != nullptr;
}

// A <cluster> that SimGrid made without hosts, as "zone 'c' is a cluster without hosts ...",
// or "". SimGrid reads radical="3-0" as the numbers from 3 up to 0, which are none, and says
// nothing.
std::string empty_cluster(const simgrid::s4u::NetZone* z) {
  if (routes_by_construction(z) && z->get_all_hosts().empty())
    return "zone '" + z->get_name() +
           "' is a cluster without hosts: its radical names none (a range is FIRST-LAST with FIRST <= LAST, e.g. "
           "radical=\"0-3\")";
  for (const simgrid::s4u::NetZone* c : z->get_children())
    if (std::string fault = empty_cluster(c); !fault.empty()) return fault;
  return "";
}

// What a platform's <config> may set, by key (the first rule whose prefix the key starts
// with): the model's parameters (null `why`), or why not. SimGrid applies a <config> only to
// the keys its command line left alone, so a key that smpirun or wulf sets there would be
// ignored without a word; the contexts' keys crash the ranks (several threads: SMPI's ranks
// are not thread-safe, SimGrid aborts in malloc; a small stack: a segmentation fault).
struct ConfigRule {
  const char* prefix;
  const char* why;
};
constexpr const char* solver_why =
    "wulf runs SimGrid's max-min solver, the one its results were checked with (BMF, for parallel tasks, aborts "
    "mid-run where it finds no allocation)";
constexpr ConfigRule config_rules[] = {
    {"network/model", "smpirun sets it (SMPI's model, whose factors a platform sets by smpi/bw-factor and "
                      "smpi/lat-factor), so the platform's would be ignored"},
    {"network/solver", solver_why},
    {"cpu/solver", solver_why},
    {"host/solver", solver_why},
    {"bmf/", solver_why},
    {"host/model", "SMPI's network model runs inside SimGrid's default host model (ptask_L07 replaces it, for "
                   "parallel tasks)"},
    {"network/", nullptr},
    {"cpu/", nullptr},
    {"disk/", nullptr},
    {"maxmin/", nullptr},
    {"smpi/bw-factor", nullptr},
    {"smpi/lat-factor", nullptr},
    {"smpi/IB-penalty-factors", "only SimGrid's IB network model reads it, and smpirun sets SMPI's, so it would be "
                                "ignored"},
    {"surf/precision", "smpirun sets it, so the platform's would be ignored"},
    {"smpi/async-small-thresh", "wulf sets SMPI's eager limit by --eager-limit"},
    {"smpi/send-is-detached-thresh", "wulf sets SMPI's eager limit by --eager-limit"},
    {"smpi/simulate-computation", "wulf charges the compute itself (by the hosts' speed), and sets it off"},
    {"smpi/host-speed", "wulf charges the compute itself (by the hosts' speed), and sets it off"},
    {"smpi/wtime", "wulf sets it (reading the clock costs nothing)"},
    {"smpi/test", "wulf sets it (a progress call costs nothing)"},
    {"contexts/", "the ranks run in SimGrid's default contexts: with several threads SMPI's ranks crash, with "
                  "a smaller stack they overflow it"},
    {"", "it is not part of the platform's model (SimGrid's tracing, plug-ins, debugging and SMPI's run options): "
         "wulf runs without it"},
};

// The keys SimGrid 3.32 declares in this program (a <config> of another key is refused by
// SimGrid itself as a bad key).
constexpr const char* declared_config_keys[] = {
    "bmf/max-iterations", "bmf/precision", "cmonkey/host", "cmonkey/link", "cmonkey/tell", "cmonkey/time",
    "contexts/factory", "contexts/guard-size", "contexts/nthreads", "contexts/stack-size", "contexts/synchro",
    "cpu/maxmin-selective-update", "cpu/model", "cpu/optim", "cpu/solver", "debug/breakpoint", "debug/clean-atexit",
    "debug/verbose-exit", "disk/model", "disk/solver", "exception/cutpath", "help-nostop", "host/model", "host/solver",
    "maxmin/concurrency-limit", "maxmin/precision", "model-check/replay", "model-check/timeout", "network/TCP-gamma",
    "network/bandwidth-factor", "network/crosstraffic", "network/latency-factor", "network/loopback-bw",
    "network/loopback-lat", "network/maxmin-selective-update", "network/model", "network/optim", "network/solver",
    "network/weight-S", "ns3/TcpModel", "ns3/seed", "path", "plugin", "plugin/dvfs/governor", "plugin/dvfs/max-pstate",
    "plugin/dvfs/min-pstate", "plugin/dvfs/sampling-rate", "smpi/IB-penalty-factors", "smpi/async-small-thresh",
    "smpi/auto-shared-malloc-thresh", "smpi/bw-factor", "smpi/comp-adjustment-file", "smpi/cpu-threshold",
    "smpi/display-allocs", "smpi/errors-are-fatal", "smpi/grow-injected-times", "smpi/host-speed", "smpi/hostfile",
    "smpi/init", "smpi/iprobe", "smpi/iprobe-cpu-usage", "smpi/lat-factor", "smpi/list-leaks", "smpi/map", "smpi/np",
    "smpi/pedantic", "smpi/replay", "smpi/send-is-detached-thresh", "smpi/shared-malloc", "smpi/simulate-computation",
    "smpi/test", "smpi/trace-call-location", "smpi/trace-call-use-absolute-path", "smpi/wtime", "surf/precision",
    "tracing", "tracing/actor", "tracing/basic", "tracing/categorized", "tracing/comment", "tracing/comment-file",
    "tracing/disable-destroy", "tracing/disable_link", "tracing/disable_power", "tracing/filename",
    "tracing/platform", "tracing/platform/topology", "tracing/precision", "tracing/smpi", "tracing/smpi/computing",
    "tracing/smpi/display-sizes", "tracing/smpi/format", "tracing/smpi/format/ti-one-file", "tracing/smpi/group",
    "tracing/smpi/internals", "tracing/smpi/sleeping", "tracing/uncategorized", "tracing/vm"};

// The model's numbers a <config> may set, each in a range SimGrid runs with: outside it
// SimGrid crashes (maxmin/precision 0), or takes it without a word for a model no network
// has (a negative TCP window).
struct ConfigRange {
  const char* key;
  double lo, hi;
  bool lo_open;  // the range excludes lo
  bool whole;    // an int option
};
constexpr ConfigRange config_ranges[] = {
    {"network/TCP-gamma", 0, 1e15, false, false},         {"network/weight-S", 0, 1e15, false, false},
    {"network/latency-factor", 0, 1e6, true, false},      {"network/bandwidth-factor", 0, 1e6, true, false},
    {"network/loopback-lat", 0, 3600, false, false},      {"maxmin/precision", 0, 0.01, true, false},
    {"maxmin/concurrency-limit", -1, 1e9, false, true}};

// Exits 2 naming the first key the platform's <config> set that a wulf run cannot take, or
// set to a value out of its range.
int check_config() {
  for (const char* key : declared_config_keys) {
    bool set = false;
    try {
      set = !simgrid::config::is_default(key);
    } catch (const std::exception&) {  // not declared in this SimGrid: nothing set it
      continue;
    }
    // A <config> of network/model or cpu/model makes host/model "compound": that is theirs.
    if (!set || (std::strcmp(key, "host/model") == 0 && simgrid::config::get_value<std::string>(key) == "compound"))
      continue;
    const std::string k = key;
    const ConfigRule* rule = std::find_if(std::begin(config_rules), std::end(config_rules),
                                          [&](const ConfigRule& r) { return k.rfind(r.prefix, 0) == 0; });
    if (rule->why) {
      std::fprintf(stderr, "its <config> sets %s, which a wulf run cannot take: %s\n", key, rule->why);
      return 2;
    }
    if (k == "smpi/bw-factor" || k == "smpi/lat-factor")
      if (const std::string fault = piecewise_fault(simgrid::config::get_value<std::string>(key), factor_rule);
          !fault.empty()) {
        std::fprintf(stderr, "its <config> sets %s: %s\n", key, fault.c_str());
        return 2;
      }
    for (const ConfigRange& r : config_ranges) {
      if (k != r.key) continue;
      const double v = r.whole ? simgrid::config::get_value<int>(key) : simgrid::config::get_value<double>(key);
      if (!(r.lo_open ? v > r.lo : v >= r.lo) || !(v <= r.hi)) {
        std::fprintf(stderr, "its <config> sets %s to %.17g: it must be %s %.17g and at most %.17g\n", key, v,
                     r.lo_open ? "above" : "at least", r.lo, r.hi);
        return 2;
      }
    }
  }
  return 0;
}

// Exits 2 naming the first fault of the platform: a name unfit to print, a cluster or the
// whole platform without hosts, a host or link whose numbers no machine has (see
// least_speed_flops), as the file gives them or once scales multiply them.
int check_platform(const simgrid::s4u::Engine& e, const Scales& scales) {
  const std::vector<simgrid::s4u::Host*> hosts = declared_hosts(e);
  std::string fault = names_fault(e, hosts);
  if (fault.empty()) fault = empty_cluster(e.get_netzone_root());
  if (fault.empty() && hosts.empty()) fault = "it has no hosts (no <host> and no <cluster>)";
  for (std::size_t i = 0; fault.empty() && i < hosts.size(); ++i) fault = host_fault(hosts[i], scales);
  for (const simgrid::s4u::Link* l : e.get_all_links())
    if (fault.empty()) fault = link_fault(l, scales);
  if (fault.empty()) return 0;
  std::fprintf(stderr, "%s\n", fault.c_str());
  return 2;
}

// Runs work (which looks routes up with route(), above) in a child process and returns its
// exit code. Should SimGrid stop the child, or work return 2 having set look_up->empty, prints
// the pair it was looking up in one line and returns 2.
int guarded(const std::function<int()>& work) {
  void* shared = ::mmap(nullptr, sizeof(LookUp), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::fprintf(stderr, "cannot share memory with a process to look routes up: %s\n", std::strerror(errno));
    return 2;
  }
  look_up = new (shared) LookUp;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child == 0) {
    // What SimGrid logs as it stops (a backtrace) is not the user's message.
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
    const int code = work();
    std::fflush(stdout);
    _exit(code);
  }
  int status = 0;
  const bool waited = child > 0 && ::waitpid(child, &status, 0) == child;
  const LookUp seen = *look_up;
  ::munmap(shared, sizeof(LookUp));
  look_up = nullptr;
  if (child < 0 || !waited) {
    std::fprintf(stderr, "cannot start a process to look routes up: %s\n", std::strerror(errno));
    return 2;
  }
  if (WIFEXITED(status) && !(WEXITSTATUS(status) == 2 && seen.empty)) return WEXITSTATUS(status);
  if (!seen.from || !seen.to) {
    std::fprintf(stderr, "SimGrid stopped while reading the platform's routes\n");
    return 2;
  }
  std::fprintf(stderr, "no route from host '%s' to host '%s'%s\n", seen.from->get_cname(), seen.to->get_cname(),
               seen.empty ? "" : " (SimGrid stops looking it up: two zones with no route between them?)");
  return 2;
}

// Exits 2 naming the first pair of hosts with no route between them: a Full zone without a
// <route> for the pair gives an empty route, which SimGrid does not refuse; zones without a
// route between them stop SimGrid (guarded). Two hosts of one cluster are not asked: a
// 4 096-host cluster would take 16 million route look-ups.
int check_routes(const std::vector<simgrid::s4u::Host*>& hosts) {
  const std::size_t k = hosts.size();
  std::vector<const simgrid::s4u::NetZone*> cluster(k, nullptr);  // hosts[i]'s zone, if such
  for (std::size_t i = 0; i < k; ++i)
    if (const simgrid::s4u::NetZone* z = hosts[i]->get_englobing_zone(); routes_by_construction(z)) cluster[i] = z;
  return guarded([&] {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        if (i == j || (cluster[i] && cluster[i] == cluster[j])) continue;
        const Route r = route(hosts[i], hosts[j]);
        if (r.links.empty() && r.latency == 0) {
          look_up->empty = true;  // guarded names the pair
          return 2;
        }
      }
    return 0;
  });
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

// s as the value of an XML attribute between double quotes: names come from the user's
// file and may hold & < > " ' (SimGrid reads &amp; and &quot; in its own files), and a tab
// or a line break, which a parser would turn into a space unless written as a reference.
std::string attribute(const std::string& s) {
  std::string out;
  for (const char c : s) switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: out += c;
    }
  return out;
}

// s inside an XML comment, which may not hold "--".
std::string comment_text(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '-' && !out.empty() && out.back() == '-' ? std::string(" -") : std::string(1, c);
  return out;
}

// x in 17 significant digits, which SimGrid reads back to the same double.
std::string exact(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// Writes text to path, every step checked; on a failure (a full disk), says so, removes
// what was written if path is a regular file (a half platform must not be loaded; a device
// such as /dev/full stays) and returns false.
bool write_whole(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "--grow: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (written && closed) return true;
  std::fprintf(stderr, "--grow: writing %s failed: %s\n", path.c_str(), std::strerror(written ? errno : write_errno));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) std::remove(path.c_str());
  return false;
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
  std::string xml = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";
  xml += "<!-- What-if, written by wulf-platform grow: cluster " + comment_text(id) + " with " + std::to_string(n) +
         " hosts instead of " + std::to_string(hosts.size()) +
         ",\n     every other number as SimGrid loaded it. -->\n<platform version=\"4.1\">\n  <config>\n";
  for (const char* key : {"smpi/bw-factor", "smpi/lat-factor"})
    xml += "    <prop id=\"" + std::string(key) + "\" value=\"" +
           attribute(simgrid::config::get_value<std::string>(key)) + "\"/>\n";
  xml += "  </config>\n  <zone id=\"" + attribute(id + "_whatif") + "\" routing=\"Full\">\n";
  xml += "    <cluster id=\"" + attribute(id) + "\" prefix=\"" + attribute(prefix) + "\" suffix=\"" + attribute(suffix) +
         "\" radical=\"0-" + std::to_string(n - 1) + "\" speed=\"" + exact(hosts[0]->get_speed()) + "f\" core=\"" +
         std::to_string(hosts[0]->get_core_count()) + "\"\n             bw=\"" + exact(up->get_bandwidth()) +
         "Bps\" lat=\"" + exact(up->get_latency()) + "s\" sharing_policy=\"" + (split_up ? "SPLITDUPLEX" : "SHARED") + "\"";
  if (backbone)
    xml += " bb_bw=\"" + exact(backbone->get_bandwidth()) + "Bps\" bb_lat=\"" + exact(backbone->get_latency()) +
           "s\" bb_sharing_policy=\"" +
           (backbone->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE ? "FATPIPE" : "SHARED") + "\"";
  xml += ">\n";
  if (const auto* props = zone->get_properties())
    for (const auto& [key, value] : *props)
      xml += "      <prop id=\"" + attribute(key) + "\" value=\"" + attribute(value) + "\"/>\n";
  xml += "    </cluster>\n  </zone>\n</platform>\n";
  return write_whole(out_path, xml) ? 0 : 2;
}

// SimGrid ends the process (abort) on some faults of a platform file, after logging a line
// that says what is wrong and a backtrace: a host of core="0", for one. While the file is
// loaded, standard error goes to a file in memory; should SimGrid abort, the handler writes
// the first line it logged as wulf's message ("SimGrid cannot load it: Host a must have at
// least one core, not 0.") and exits with 2, the exit of any other refusal.
int real_stderr = -1;
int captured_stderr = -1;

// Whether text[from, to) is the C string s. (memcmp is not among the calls POSIX allows in
// a signal handler.)
bool span_is(const char* text, ssize_t from, ssize_t to, const char* s) {
  for (; from < to && *s; ++from, ++s)
    if (text[from] != *s) return false;
  return from == to && !*s;
}

extern "C" void refuse_on_abort(int) {
  // Only calls safe in a signal handler: SimGrid aborts from its own code, but in any state.
  static char text[1024];
  const ssize_t n = ::pread(captured_stderr, text, sizeof text, 0);
  ssize_t line = 0;
  while (line < n && text[line] != '\n') ++line;
  const char lead[] = "SimGrid cannot load it: ";
  const char unsaid[] = "SimGrid stopped while loading it (abort)";
  ssize_t done = ::write(real_stderr, lead, sizeof lead - 1);
  // SimGrid says "Host a must have at least one core, not 0." of core="-2" too: wulf's
  // words instead, which give no number.
  const char host[] = "Host ", cores[] = " must have at least one core, not 0.";
  const ssize_t name_end = line - static_cast<ssize_t>(sizeof cores - 1);
  if (name_end > 5 && span_is(text, 0, 5, host) && span_is(text, name_end, line, cores)) {
    const char is[] = "': core must be a whole number of at least 1";
    done = ::write(real_stderr, "host '", 6);
    done = ::write(real_stderr, text + 5, static_cast<std::size_t>(name_end - 5));
    done = ::write(real_stderr, is, sizeof is - 1);
  } else {
    done = line > 0 ? ::write(real_stderr, text, static_cast<std::size_t>(line)) : ::write(real_stderr, unsaid, sizeof unsaid - 1);
  }
  done = ::write(real_stderr, "\n", 1);
  static_cast<void>(done);  // nothing is left to tell a failed write to
  _exit(2);
}

// The most hosts a platform may declare: the most ranks wulf places (--np's range, 1 000 000).
// A cluster's radical may name far more ("0-99999999"), and SimGrid would then create hosts
// until the machine's memory runs out (about 5 KB each): the load stops at the first host
// past the limit instead.
constexpr unsigned long kMostHosts = 1'000'000;

[[noreturn]] void refuse_too_many_hosts() {
  char text[200];
  const int n = std::snprintf(text, sizeof text,
                              "it declares more than %lu hosts, the most wulf reads (the most ranks it places)\n",
                              kMostHosts);
  ssize_t done = ::write(real_stderr >= 0 ? real_stderr : STDERR_FILENO, text, static_cast<std::size_t>(n));
  static_cast<void>(done);
  _exit(2);
}

// Whether a zone of the platform file at path computes its routes when the platform is
// sealed (routing="Floyd", "Dijkstra" or "DijkstraCache"), as smpirun seals it before any rank
// starts: unsealed they have none. Other platforms are left unsealed: SimGrid 3.32 crashes
// sealing a Full zone that lacks a route between two of its zones, which check_routes names
// instead. (SimGrid's library keeps the zones' types to itself: the file is read for them.)
bool routes_when_sealed(const char* path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto blanks = [&](std::size_t at) { return text.find_first_not_of(" \t\r\n", at); };
  for (std::size_t at = text.find("routing"); at != std::string::npos; at = text.find("routing", at + 1)) {
    std::size_t v = blanks(at + 7);  // routing = "Floyd"
    if (v == std::string::npos || text[v] != '=' || (v = blanks(v + 1)) == std::string::npos) continue;
    if (text[v] != '"' && text[v] != '\'') continue;
    const std::size_t end = text.find(text[v], v + 1);
    const std::string kind = text.substr(v + 1, end == std::string::npos ? 0 : end - v - 1);
    if (kind == "Floyd" || kind == "Dijkstra" || kind == "DijkstraCache") return true;
  }
  return false;
}

// Loads the platform at path into e; SimGrid's aborts become a refusal (above), and what it
// logs otherwise reaches standard error after loading.
void load_platform(simgrid::s4u::Engine& e, const char* path) {
  static unsigned long created = 0;
  simgrid::s4u::Host::on_creation_cb([](simgrid::s4u::Host&) {
    if (++created > kMostHosts) refuse_too_many_hosts();
  });
  captured_stderr = ::memfd_create("wulf-platform-stderr", MFD_CLOEXEC);
  real_stderr = ::dup(STDERR_FILENO);
  if (captured_stderr < 0 || real_stderr < 0) {  // no capture: SimGrid's own words, then
    e.load_platform(path);
    if (routes_when_sealed(path)) e.seal_platform();
    return;
  }
  std::fflush(stderr);
  ::dup2(captured_stderr, STDERR_FILENO);
  std::signal(SIGABRT, refuse_on_abort);
  auto restore = [&] {
    std::fflush(stderr);
    std::signal(SIGABRT, SIG_DFL);
    ::dup2(real_stderr, STDERR_FILENO);
    char text[4096];
    for (off_t at = 0;;) {  // what SimGrid logged and did not abort on (a warning)
      const ssize_t n = ::pread(captured_stderr, text, sizeof text, at);
      if (n <= 0 || ::write(STDERR_FILENO, text, static_cast<std::size_t>(n)) < 0) break;
      at += n;
    }
    ::close(captured_stderr);
    ::close(real_stderr);
  };
  try {
    e.load_platform(path);
    if (routes_when_sealed(path)) e.seal_platform();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

// text as a whole number: digits only (a count of hosts), at most ULONG_MAX.
bool whole_number(const std::string& text, unsigned long& n) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  n = std::strtoul(text.c_str(), nullptr, 10);
  return errno == 0;
}

// The hosts a list a,b,... names (each name once, in the order first named). False, with the
// fault on standard error, for a name the platform lacks.
bool chosen_hosts(const simgrid::s4u::Engine& engine, const std::string& which,
                  std::vector<simgrid::s4u::Host*>& chosen) {
  std::size_t start = 0;
  while (start <= which.size()) {
    const std::size_t end = std::min(which.find(',', start), which.size());
    const std::string name = which.substr(start, end - start);
    simgrid::s4u::Host* h = engine.host_by_name_or_null(name);
    if (!h) {
      std::fprintf(stderr, "--hosts: the platform has no host '%s'\n", name.c_str());
      return false;
    }
    if (std::find(chosen.begin(), chosen.end(), h) == chosen.end()) chosen.push_back(h);
    start = end + 1;
  }
  return true;
}

// The hosts that `ranks` ranks fill, in declared order, each host's cores (at most
// per_host of them when per_host > 0).
std::vector<simgrid::s4u::Host*> filled_hosts(const simgrid::s4u::Engine& engine, unsigned long ranks,
                                              unsigned long per_host) {
  std::vector<simgrid::s4u::Host*> hosts = declared_hosts(engine);
  std::size_t used = 0;
  for (unsigned long filled = 0; used < hosts.size() && filled < ranks; ++used) {
    const auto cores = static_cast<unsigned long>(hosts[used]->get_core_count());
    filled += per_host > 0 ? std::min(cores, per_host) : cores;
  }
  hosts.resize(used);
  return hosts;
}

// The hosts the arguments after FILE choose for `hosts` and `network`: none (every host, no
// route checked), a,b,..., or --ranks N [--per-host R]. False, with the fault on standard
// error, for arguments that are none of these or a name the platform lacks.
bool hosts_of_arguments(const simgrid::s4u::Engine& engine, const std::vector<std::string>& args,
                        std::vector<simgrid::s4u::Host*>& chosen) {
  if (args.size() == 1) return chosen_hosts(engine, args[0], chosen);
  unsigned long ranks = 0, per_host = 0;
  if ((args.size() == 2 || args.size() == 4) && args[0] == "--ranks" && whole_number(args[1], ranks) &&
      (args.size() == 2 || (args[2] == "--per-host" && whole_number(args[3], per_host)))) {
    chosen = filled_hosts(engine, ranks, per_host);
    return true;
  }
  std::fprintf(stderr, "wulf-platform: hosts are chosen by a,b,... or --ranks N [--per-host R]\n");
  return false;
}

// The what-if scales among the arguments after FILE (--bw-scale X, --lat-scale Y,
// --speed-scale Z, each a positive number), taken out of args. False, with the fault on
// standard error, for a scale that is no such number.
bool take_scales(std::vector<std::string>& args, Scales& scales) {
  for (std::size_t i = 0; i < args.size();) {
    double* scale = args[i] == "--bw-scale" ? &scales.bw : args[i] == "--lat-scale" ? &scales.lat
                    : args[i] == "--speed-scale" ? &scales.speed : nullptr;
    if (!scale) {
      ++i;
      continue;
    }
    char* end = nullptr;
    const char* text = i + 1 < args.size() ? args[i + 1].c_str() : "";
    *scale = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(*scale > 0)) {
      std::fprintf(stderr, "wulf-platform: %s '%s' is not a positive number\n", args[i].c_str(), text);
      return false;
    }
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(std::min(i + 2, args.size())));
  }
  return true;
}

int run(int argc, char** argv) {
  const std::string verb = argc >= 3 ? argv[1] : "";
  std::vector<std::string> args(argv + std::min(argc, 3), argv + argc);  // after FILE
  Scales scales;
  if (verb == "hosts" && !take_scales(args, scales)) return 2;
  if ((verb != "hosts" && verb != "info" && verb != "grow" && verb != "network") || (verb == "info" && !args.empty()) ||
      (verb == "grow" && args.size() != 2) || (verb == "hosts" && args.size() > 4) || (verb == "network" && args.size() != 1)) {
    std::fprintf(stderr,
                 "usage: wulf-platform hosts FILE.xml [a,b,... | --ranks N [--per-host R]] [--bw-scale X] "
                 "[--lat-scale Y] [--speed-scale Z] | info FILE.xml | grow FILE.xml N OUT.xml | network FILE.xml a,b,...\n");
    return 2;
  }
  try {
    int sg_argc = 3;
    char log[] = "--log=root.thres:critical";
    char format[] = "--log=root.fmt:%m%n";  // the message alone, without time and source line
    char* sg_argv[] = {argv[0], log, format, nullptr};
    simgrid::s4u::Engine engine(&sg_argc, sg_argv);
    load_platform(engine, argv[2]);
    if (check_config() != 0 || check_platform(engine, scales) != 0) return 2;
    if (verb == "info")
      return guarded([&] {
        info(engine);
        return 0;
      });
    if (verb == "grow") {
      unsigned long n = 0;
      if (!whole_number(args[0], n) || n == 0) {
        std::fprintf(stderr, "--grow: '%s' is not a host count of at least 1\n", args[0].c_str());
        return 2;
      }
      return grow(engine, n, args[1]);
    }
    // The hosts chosen (the ones the ranks fill, or an explicit placement, --hosts) must
    // exist and reach each other.
    if (!args.empty()) {
      std::vector<simgrid::s4u::Host*> chosen;
      if (!hosts_of_arguments(engine, args, chosen) || check_routes(chosen) != 0) return 2;
      if (verb == "network") {
        network(engine, chosen);
        return 0;
      }
    }
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
      std::printf("%s %d %.17g %s %s %s %s %s %s %s\n", h->get_cname(), h->get_core_count(), h->get_speed(),
                  prop(h, "wulf:group").c_str(), prop(h, "wulf:node").c_str(), prop(h, "wulf:nics").c_str(),
                  word(h, "wulf:device").c_str(), word(h, "wulf:efficiency").c_str(), word(h, "wulf:rings").c_str(),
                  word(h, "wulf:ddp").c_str());
    return 0;
  } catch (const std::bad_alloc&) {  // past the address space wulf gives it (engine/launch)
    std::fprintf(stderr, "SimGrid ran out of memory loading it (wulf-platform may take the memory this machine "
                         "has available): a cluster's radical, or another count, too large?\n");
    return 2;
  } catch (const std::exception& e) {
    // SimGrid's "Bad config key: K" goes on with every key it has, one a line: the first line.
    std::string what = e.what();
    if (const std::size_t eol = what.find('\n'); eol != std::string::npos) what.erase(eol);
    if (what.rfind("Bad config key: ", 0) == 0)
      std::fprintf(stderr,
                   "its <config> sets %s, which SimGrid does not know here (a platform may set the network's and "
                   "CPUs' model: network/..., cpu/..., smpi/bw-factor, smpi/lat-factor)\n",
                   what.substr(16).c_str());
    else
      std::fprintf(stderr, "SimGrid cannot load it: %s\n", what.c_str());
    return 2;
  }
}

int main(int argc, char** argv) {
  const int code = run(argc, argv);
  // What was printed reaches the reader whole, or the exit says it did not (a full disk, a
  // closed pipe): wulf reads hosts and JSON from this output.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "wulf-platform: writing its output failed: %s\n", std::strerror(errno));
    return code == 0 ? 2 : code;
  }
  return code;
}
