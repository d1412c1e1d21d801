#include "engine/testbed_network.hpp"

#include "util/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

namespace wulf {
namespace {

constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

// The points of the network: hosts 0..n-1, then the two sides of each link (2l and 2l+1
// after the hosts). Points the routes join are one node; a node holds at most one host.
class Points {
 public:
  Points(std::size_t hosts, std::size_t links) : parent_(hosts + 2 * links), host_(hosts + 2 * links, none) {
    std::iota(parent_.begin(), parent_.end(), std::size_t{0});
    for (std::size_t h = 0; h < hosts; ++h) host_[h] = h;
    hosts_ = hosts;
  }
  std::size_t side(std::size_t link, int s) const { return hosts_ + 2 * link + static_cast<std::size_t>(s); }
  std::size_t find(std::size_t p) {
    while (parent_[p] != p) p = parent_[p] = parent_[parent_[p]];
    return p;
  }
  std::size_t host_at(std::size_t p) { return host_[find(p)]; }
  // Joins a and b; the hosts of both where each holds one (they cannot be one point).
  std::pair<std::size_t, std::size_t> join(std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a == b) return {none, none};
    if (host_[a] != none && host_[b] != none) return {host_[a], host_[b]};
    parent_[b] = a;
    if (host_[a] == none) host_[a] = host_[b];
    return {none, none};
  }

 private:
  std::vector<std::size_t> parent_, host_;
  std::size_t hosts_ = 0;
};

bool is_junction(const NetworkLink& l) { return l.sharing == "fatpipe" || l.sharing == "wifi" || l.sharing == "nonlinear"; }

std::string address_of(std::size_t veth, int end) {
  const std::size_t a = 2 * veth + static_cast<std::size_t>(end);
  return fmt::format("198.19.{}.{}", a / 256, a % 256);
}

}  // namespace

TestbedNetwork plan_network(const PlatformNetwork& net, const std::vector<std::string>& addresses,
                            const std::string& platform) {
  const std::size_t n = net.hosts.size(), m = net.links.size();
  TestbedNetwork out;
  auto cannot = [&](const std::string& why) {
    return InputError("platform " + platform + ": the testbed cannot build the network between the run's hosts: " + why);
  };
  // The fastest a host sends: the first link of its routes.
  double fastest = 0;
  for (const NetworkRoute& r : net.routes)
    if (!r.links.empty()) fastest = std::max(fastest, net.links.at(r.links.front()).bandwidth_Bps);
  std::vector<bool> noted(m, false);
  std::vector<std::vector<std::size_t>> hops(net.routes.size());  // each route's links the testbed builds
  for (std::size_t r = 0; r < net.routes.size(); ++r)
    for (const std::size_t l : net.routes[r].links) {
      const NetworkLink& link = net.links.at(l);
      if (!is_junction(link)) {
        hops[r].push_back(l);
        continue;
      }
      if (noted[l]) continue;
      noted[l] = true;
      if (link.sharing != "fatpipe")
        out.notes.push_back(fmt::format("link {} ({} sharing) is not emulated: the testbed has no model of it, the "
                                        "routes pass it as a switch",
                                        link.name, link.sharing));
      else if (link.bandwidth_Bps < fastest)
        out.notes.push_back(fmt::format("link {} ({:.4g} Mbit/s, fatpipe) is not emulated: it limits each flow alone "
                                        "to less than a host's link, which no queue of the testbed does",
                                        link.name, link.bandwidth_Bps * 8e-6));
    }

  // Which points the routes join, and which way each link is crossed (bit 1: side 0 to side
  // 1; bit 2: back). A link entered where it was left before is crossed back.
  Points points(n, m);
  std::vector<int> crossed(m, 0);
  std::vector<std::vector<int>> entry(net.routes.size());  // the side each hop was entered by
  auto joined = [&](std::size_t a, std::size_t b, const std::string& where) {
    if (const auto [x, y] = points.join(a, b); x != none)
      throw cannot(fmt::format("hosts {} and {} would be one point of it ({})", net.hosts[x], net.hosts[y], where));
  };
  for (std::size_t r = 0; r < net.routes.size(); ++r) {
    const NetworkRoute& route = net.routes[r];
    std::size_t at = route.from;
    for (std::size_t k = 0; k < hops[r].size(); ++k) {
      const std::size_t l = hops[r][k];
      const std::size_t s0 = points.side(l, 0), s1 = points.side(l, 1);
      const bool last = k + 1 == hops[r].size();
      int in = crossed[l] == 2 ? 1 : 0;
      if (points.find(at) == points.find(s0)) in = 0;
      else if (points.find(at) == points.find(s1)) in = 1;
      else if (last && points.find(route.to) == points.find(s1)) in = 0;
      else if (last && points.find(route.to) == points.find(s0)) in = 1;
      joined(at, in == 0 ? s0 : s1, "link " + net.links[l].name);
      crossed[l] |= in == 0 ? 1 : 2;
      entry[r].push_back(in);
      at = in == 0 ? s1 : s0;
    }
    joined(at, route.to,
           hops[r].empty() ? "no link between them that the testbed builds"
                           : "link " + net.links[hops[r].back()].name);
  }

  // The two directions of a split-duplex link (SimGrid's NAME_UP and NAME_DOWN) are one
  // cable: each ends where the other starts. The routes alone may not say so (between two
  // hosts, the switch would be two points: one for each direction); where a link would then
  // start and end at one point (a switch's capacity between its NICs' cables, as Bunyip's),
  // the directions stay apart.
  std::map<std::string, std::size_t> by_name;
  for (std::size_t l = 0; l < m; ++l) by_name.emplace(net.links[l].name, l);
  for (std::size_t up = 0; up < m; ++up) {
    const std::string& name = net.links[up].name;
    if (name.size() < 3 || name.compare(name.size() - 3, 3, "_UP") != 0) continue;
    const auto down = by_name.find(name.substr(0, name.size() - 3) + "_DOWN");
    if (down == by_name.end()) continue;
    const std::size_t dn = down->second;
    if ((crossed[up] != 1 && crossed[up] != 2) || (crossed[dn] != 1 && crossed[dn] != 2)) continue;
    auto in = [&](std::size_t l) { return points.side(l, crossed[l] == 1 ? 0 : 1); };
    auto out_of = [&](std::size_t l) { return points.side(l, crossed[l] == 1 ? 1 : 0); };
    Points cable = points;
    if (cable.join(in(up), out_of(dn)).first != none || cable.join(out_of(up), in(dn)).first != none) continue;
    bool loops = false;
    for (std::size_t l = 0; l < m && !loops; ++l)
      loops = crossed[l] != 0 && cable.find(points.side(l, 0)) == cable.find(points.side(l, 1));
    if (!loops) points = std::move(cable);
  }

  // The nodes: the hosts, then every other point a link starts or ends at.
  std::map<std::size_t, std::size_t> node_of;  // a point's root -> node
  for (std::size_t h = 0; h < n; ++h) {
    node_of[points.find(h)] = h;
    out.nodes.push_back({NetworkNode::Kind::host, h, net.hosts[h]});
  }
  auto node = [&](std::size_t point) {
    const auto [it, added] = node_of.emplace(points.find(point), out.nodes.size());
    if (added) out.nodes.push_back({NetworkNode::Kind::junction, 0, ""});
    return it->second;
  };
  std::vector<std::size_t> interfaces;  // per node, how many it has
  auto end_at = [&](std::size_t node_index, std::size_t veth, int which) {
    interfaces.resize(out.nodes.size());
    VethEnd e;
    e.node = node_index;
    e.ifname = (out.nodes[node_index].kind == NetworkNode::Kind::host ? "eth" : "p") +
               std::to_string(interfaces[node_index]++);
    // A host's ports hold no address of their own: the host's one address (on its first
    // port) is the one Open MPI sees and every route of the host sends from.
    e.address = out.nodes[node_index].kind == NetworkNode::Kind::host ? "" : address_of(veth, which);
    return e;
  };
  // The node a hop's sending end sends to.
  auto receiver = [&](std::pair<std::size_t, int> via) {
    const Veth& v = out.veths[via.first];
    return via.second == 0 ? v.b.node : v.a.node;
  };
  // A hop from node `from` to node `to` that sends at `rate` (0: a wire), as a new veth or as
  // the unused direction of one between the two; returns the veth and its sending end.
  auto hop = [&](std::size_t from, std::size_t to, const NetworkLink* link) -> std::pair<std::size_t, int> {
    const bool into_host = out.nodes[to].kind == NetworkNode::Kind::host && out.nodes[from].kind != NetworkNode::Kind::host;
    auto shape = [&](VethEnd& e) {
      e.sends = true;
      if (!link) return;
      e.link = link->name;
      e.rate_Bps = link->bandwidth_Bps * (into_host ? kSwitchFaster : 1.0);
      e.queue_bytes = out.nodes[from].kind == NetworkNode::Kind::host ? kHostQueueBytes : kSwitchQueueBytes;
    };
    for (std::size_t v = 0; v < out.veths.size(); ++v) {
      Veth& pair = out.veths[v];
      if (pair.a.node == to && pair.b.node == from && !pair.b.sends && (pair.a.link.empty() == !link)) {
        shape(pair.b);
        return {v, 1};
      }
    }
    const std::size_t v = out.veths.size();
    VethEnd a = end_at(from, v, 0), b = end_at(to, v, 1);
    out.veths.push_back({std::move(a), std::move(b)});
    shape(out.veths[v].a);
    return {v, 0};
  };

  // Each link's hop: one way, between the nodes of its sides; both ways, through a pair of
  // nodes of its own (in, shaped, out) with wires from and to both sides.
  struct Built {
    std::pair<std::size_t, int> shaped{none, 0};
    std::pair<std::size_t, int> wire_in[2]{{none, 0}, {none, 0}}, wire_out[2]{{none, 0}, {none, 0}};
  };
  std::vector<Built> built(m);
  for (std::size_t l = 0; l < m; ++l) {
    if (crossed[l] == 0) continue;
    const std::size_t a = node(points.side(l, 0)), b = node(points.side(l, 1));
    if (a == b) throw cannot("link " + net.links[l].name + " would start and end at one point");
    if (crossed[l] != 3) {
      built[l].shaped = crossed[l] == 1 ? hop(a, b, &net.links[l]) : hop(b, a, &net.links[l]);
      continue;
    }
    const std::size_t in = out.nodes.size(), outn = in + 1;
    out.nodes.push_back({NetworkNode::Kind::shared_in, 0, "link " + net.links[l].name + " (in)"});
    out.nodes.push_back({NetworkNode::Kind::shared_out, 0, "link " + net.links[l].name + " (out)"});
    built[l].shaped = hop(in, outn, &net.links[l]);
    for (int s = 0; s < 2; ++s) {
      built[l].wire_in[s] = hop(s == 0 ? a : b, in, nullptr);
      built[l].wire_out[s] = hop(outn, s == 0 ? a : b, nullptr);
    }
  }
  // Labels: a junction by the links that meet there.
  for (std::size_t l = 0; l < m; ++l)
    for (int s = 0; s < 2 && crossed[l]; ++s) {
      NetworkNode& j = out.nodes[node(points.side(l, s))];
      if (j.kind == NetworkNode::Kind::junction && j.label.size() < 160)
        j.label += (j.label.empty() ? "switch of " : ", ") + net.links[l].name;
    }

  // Every node's route to every host, as the platform's routes go.
  std::map<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, int>> next;  // (node, host) -> veth end
  auto route_via = [&](std::size_t at, std::size_t to, std::pair<std::size_t, int> via, const std::string& link) {
    const auto [it, added] = next.emplace(std::make_pair(at, to), via);
    if (!added && it->second != via)
      throw cannot(fmt::format("routes to host {} leave {} by two different links (one of them {}): the testbed "
                               "routes by destination only",
                               net.hosts[to], out.nodes[at].label, link));
    if (added) out.routes.push_back({at, addresses.at(to), via.first, via.second});
  };
  for (std::size_t r = 0; r < net.routes.size(); ++r) {
    const NetworkRoute& route = net.routes[r];
    std::size_t at = route.from;
    for (std::size_t k = 0; k < hops[r].size(); ++k) {
      const std::size_t l = hops[r][k];
      const Built& b = built[l];
      const std::string& name = net.links[l].name;
      const int in = entry[r][k];
      const std::pair<std::size_t, int> first = crossed[l] != 3 ? b.shaped : b.wire_in[in];
      const Veth& v = out.veths[first.first];
      if ((first.second == 0 ? v.a.node : v.b.node) != at)
        throw std::logic_error("plan_network: the route from " + net.hosts[route.from] + " to " + net.hosts[route.to] +
                               " enters link " + name + " away from where it is");
      if (crossed[l] != 3) {
        route_via(at, route.to, b.shaped, name);
      } else {
        route_via(at, route.to, b.wire_in[in], name);
        route_via(receiver(b.wire_in[in]), route.to, b.shaped, name);
        route_via(receiver(b.shaped), route.to, b.wire_out[1 - in], name);
      }
      at = receiver(crossed[l] != 3 ? b.shaped : b.wire_out[1 - in]);
    }
    out.most_hops = std::max(out.most_hops, hops[r].size());
  }
  return out;
}

Json TestbedNetwork::to_json(double dilation) const {
  static const char* kinds[] = {"host", "junction", "shared link in", "shared link out"};
  Json nodes_json = Json::array();
  for (const NetworkNode& node : nodes)
    nodes_json.push_back({{"kind", kinds[static_cast<int>(node.kind)]}, {"label", node.label}});
  auto end_json = [&](const VethEnd& e) {
    Json j = {{"node", e.node}, {"interface", e.ifname}, {"sends", e.sends}};
    if (!e.address.empty()) j["address"] = e.address + "/31";
    if (e.rate_Bps > 0)
      j.update({{"link", e.link},
                {"platform_Bps", e.rate_Bps},
                {"shaped_bit_s", e.rate_Bps * 8 / dilation},
                {"queue_bytes", e.queue_bytes}});
    return j;
  };
  Json veths_json = Json::array();
  for (const Veth& v : veths) veths_json.push_back({{"a", end_json(v.a)}, {"b", end_json(v.b)}});
  return {{"nodes", std::move(nodes_json)}, {"veths", std::move(veths_json)}, {"routes", routes.size()},
          {"most_shaped_hops", most_hops}, {"notes", notes}};
}

}  // namespace wulf
