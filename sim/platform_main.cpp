// wulf-platform: reads a SimGrid platform file with SimGrid's own loader and prints what
// wulf needs of it. A program of its own so that SimGrid's engine, of which a process may
// hold one, never lives inside the wulf command or its tests.
//
//   wulf-platform hosts FILE.xml   one line per host: name, cores, speed in flop/s
//   wulf-platform info FILE.xml    the whole platform as JSON: hosts, links, zones, routes
//                                  between the first hosts
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

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

void zone_json(const simgrid::s4u::NetZone* z, std::string& out) {
  out += "{\"name\": " + quoted(z->get_cname()) + ", \"hosts\": " + std::to_string(z->get_all_hosts().size()) +
         ", \"zones\": [";
  bool first = true;
  for (const simgrid::s4u::NetZone* c : z->get_children()) {
    if (!first) out += ", ";
    first = false;
    zone_json(c, out);
  }
  out += "]}";
}

void info(const simgrid::s4u::Engine& e) {
  std::string out = "{\"hosts\": [";
  const std::vector<simgrid::s4u::Host*> hosts = e.get_all_hosts();
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const simgrid::s4u::Host* h = hosts[i];
    out += (i ? ", " : "") + std::string("{\"name\": ") + quoted(h->get_cname()) +
           ", \"cores\": " + std::to_string(h->get_core_count()) + ", \"speed_flops\": " +
           std::to_string(h->get_speed()) + ", \"zone\": " + quoted(h->get_englobing_zone()->get_cname()) + "}";
  }
  out += "], \"links\": [";
  const std::vector<simgrid::s4u::Link*> links = e.get_all_links();
  for (std::size_t i = 0; i < links.size(); ++i) {
    const simgrid::s4u::Link* l = links[i];
    char num[96];
    std::snprintf(num, sizeof num, "\"bandwidth_Bps\": %.17g, \"latency_s\": %.17g", l->get_bandwidth(),
                  l->get_latency());
    out += (i ? ", " : "") + std::string("{\"name\": ") + quoted(l->get_cname()) + ", " + num +
           ", \"sharing\": \"" + policy(l->get_sharing_policy()) + "\"}";
  }
  out += "], \"zone\": ";
  zone_json(e.get_netzone_root(), out);
  // The route between the first host and each of the next few: links and latency.
  out += ", \"routes\": [";
  for (std::size_t i = 1; i < hosts.size() && i < 4; ++i) {
    std::vector<simgrid::s4u::Link*> path;
    double latency = 0;
    hosts[0]->route_to(hosts[i], path, &latency);
    double bottleneck = INFINITY;
    out += (i > 1 ? ", " : "") + std::string("{\"from\": ") + quoted(hosts[0]->get_cname()) +
           ", \"to\": " + quoted(hosts[i]->get_cname()) + ", \"links\": [";
    for (std::size_t k = 0; k < path.size(); ++k) {
      out += (k ? ", " : "") + quoted(path[k]->get_cname());
      bottleneck = std::min(bottleneck, path[k]->get_bandwidth());
    }
    char num[96];
    std::snprintf(num, sizeof num, "], \"latency_s\": %.17g, \"bottleneck_Bps\": %.17g}", latency,
                  path.empty() ? 0.0 : bottleneck);
    out += num;
  }
  out += "]}";
  std::printf("%s\n", out.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string verb = argc == 3 ? argv[1] : "";
  if (verb != "hosts" && verb != "info") {
    std::fprintf(stderr, "usage: wulf-platform hosts|info FILE.xml\n");
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
    for (const simgrid::s4u::Host* h : engine.get_all_hosts())
      std::printf("%s %d %.17g\n", h->get_cname(), h->get_core_count(), h->get_speed());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
