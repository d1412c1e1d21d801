#include "engine/testbed_network.hpp"

#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace wulf {

SizeFactors parse_size_factors(const std::string& text, const std::string& what) {
  SizeFactors f;
  for (const std::string& item : split_list(text, ';')) {
    const std::vector<std::string> pair = split_list(item, ':');
    const std::optional<double> bytes = pair.size() == 2 ? parse_number(pair[0]) : std::nullopt;
    const std::optional<double> factor = pair.size() == 2 ? parse_number(pair[1]) : std::nullopt;
    if (!bytes || !factor || *bytes < 0 || !(*factor > 0))
      throw InputError(what + ": '" + item + "' is not bytes:factor (a factor above 0)");
    f.thresholds.emplace_back(*bytes, *factor);
  }
  std::sort(f.thresholds.begin(), f.thresholds.end());
  return f;
}

double SizeFactors::at(double bytes) const {
  double factor = 1;
  for (const auto& [threshold, value] : thresholds) {
    if (bytes <= threshold) break;
    factor = value;
  }
  return factor;
}

bool SizeFactors::all_one() const {
  return std::all_of(thresholds.begin(), thresholds.end(), [](const auto& t) { return t.second == 1; });
}
namespace {

constexpr std::size_t no_point = std::numeric_limits<std::size_t>::max();

// The points of the network: hosts 0..n-1, then the two sides of each link (2l and 2l+1
// after the hosts). Points the routes join are one node; a node holds at most one host.
class Points {
 public:
  Points(std::size_t hosts, std::size_t links) : parent_(hosts + 2 * links), host_(hosts + 2 * links, no_point) {
    std::iota(parent_.begin(), parent_.end(), std::size_t{0});
    for (std::size_t h = 0; h < hosts; ++h) host_[h] = h;
    hosts_ = hosts;
  }
  std::size_t side(std::size_t link, int s) const { return hosts_ + 2 * link + static_cast<std::size_t>(s); }
  std::size_t find(std::size_t p) {
    while (parent_[p] != p) p = parent_[p] = parent_[parent_[p]];
    return p;
  }
  // Joins a and b; the hosts of both where each holds one (they cannot be one point).
  std::pair<std::size_t, std::size_t> join(std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a == b) return {no_point, no_point};
    if (host_[a] != no_point && host_[b] != no_point) return {host_[a], host_[b]};
    parent_[b] = a;
    if (host_[a] == no_point) host_[a] = host_[b];
    return {no_point, no_point};
  }

 private:
  std::vector<std::size_t> parent_, host_;
  std::size_t hosts_ = 0;
};

bool is_junction(const NetworkLink& l) { return l.sharing == "fatpipe" || l.sharing == "wifi" || l.sharing == "nonlinear"; }

// The address of a veth pair's end: each pair a /31 of 198.19.0.0/16, which holds 32 768.
std::string address_of(std::size_t veth, int end) {
  const std::size_t a = 2 * veth + static_cast<std::size_t>(end);
  if (a >= 65536)
    throw InputError("the testbed's network would need more than 32 768 veth pairs, more than 198.19.0.0/16 "
                     "holds: fewer hosts (--np)");
  return fmt::format("198.19.{}.{}", a / 256, a % 256);
}

// Why the routes did not form paths the inference could build (plan_network then builds
// every link as a pair of nodes of its own).
struct NotPaths {
  std::string why;
};

// The links of each route that the testbed builds (junction links left out), and a note for
// each junction link that could limit a flow or that the testbed has no model of.
std::vector<std::vector<std::size_t>> built_links(const PlatformNetwork& net, std::vector<std::string>& notes) {
  double fastest = 0;  // the fastest a host sends: the first link of its routes
  for (const NetworkRoute& r : net.routes)
    if (!r.links.empty()) fastest = std::max(fastest, net.links.at(r.links.front()).bandwidth_Bps);
  std::vector<bool> noted(net.links.size(), false);
  std::vector<std::vector<std::size_t>> hops(net.routes.size());
  for (std::size_t r = 0; r < net.routes.size(); ++r)
    for (const std::size_t l : net.routes[r].links) {
      const NetworkLink& link = net.links.at(l);
      if (!is_junction(link)) {
        hops[r].push_back(l);
        continue;
      }
      if (noted[l]) continue;
      noted[l] = true;
      if (link.latency_s > 0)
        notes.push_back(fmt::format("link {}'s latency of {:.4g} us is not emulated: the routes pass it as a switch",
                                    link.name, link.latency_s * 1e6));
      if (link.sharing != "fatpipe")
        notes.push_back(fmt::format("link {} ({} sharing) is not emulated: the testbed has no model of it, the "
                                    "routes pass it as a switch",
                                    link.name, link.sharing));
      else if (link.bandwidth_Bps < fastest)
        notes.push_back(fmt::format("link {} ({:.4g} Mbit/s, fatpipe) is not emulated: it limits each flow alone "
                                    "to less than a host's link, which no queue of the testbed does",
                                    link.name, link.bandwidth_Bps * 8e-6));
    }
  return hops;
}

// What both ways of building share: the nodes (the hosts first), the veth pairs, and each
// node's next hop for each route.
class Builder {
 public:
  using End = std::pair<std::size_t, int>;  // a veth and its sending end (0: a, 1: b)

  Builder(const PlatformNetwork& net, const std::vector<std::string>& addresses, TestbedNetwork& out)
      : net_(net), addresses_(addresses), out_(out) {
    for (std::size_t h = 0; h < net.hosts.size(); ++h) add_node(NetworkNode::Kind::host, net.hosts[h]);
  }

  std::size_t add_node(NetworkNode::Kind kind, std::string label) {
    out_.nodes.push_back({kind, std::move(label)});
    interfaces_.push_back(0);
    return out_.nodes.size() - 1;
  }
  bool is_host(std::size_t node) const { return out_.nodes[node].kind == NetworkNode::Kind::host; }
  NetworkNode& node(std::size_t index) { return out_.nodes[index]; }

  // A hop from node `from` to node `to`, shaped to `link`'s rate (nullptr: a wire), as a new
  // veth pair or as the unused direction of one between the two (a cable's other way). A
  // switch's port into a host runs kSwitchFaster than the link: a single flow's bottleneck
  // is then the sender's own port.
  End hop(std::size_t from, std::size_t to, const NetworkLink* link, bool into_host) {
    auto shape = [&](VethEnd& e) {
      e.sends = true;
      if (!link) return;
      e.link = link->name;
      e.rate_Bps = link->bandwidth_Bps * (into_host ? kSwitchFaster : 1.0);
      e.latency_s = link->latency_s;
      e.queue_bytes = is_host(from) ? kHostQueueBytes : kSwitchQueueBytes;
    };
    for (std::size_t v = 0; v < out_.veths.size(); ++v) {
      Veth& pair = out_.veths[v];
      if (pair.a.node == to && pair.b.node == from && !pair.b.sends && (pair.a.link.empty() == !link)) {
        shape(pair.b);
        return {v, 1};
      }
    }
    const std::size_t v = out_.veths.size();
    VethEnd a = end_at(from, v, 0), b = end_at(to, v, 1);
    out_.veths.push_back({std::move(a), std::move(b)});
    shape(out_.veths[v].a);
    return {v, 0};
  }
  std::size_t sender(End e) const { return e.second == 0 ? out_.veths[e.first].a.node : out_.veths[e.first].b.node; }
  std::size_t receiver(End e) const { return e.second == 0 ? out_.veths[e.first].b.node : out_.veths[e.first].a.node; }

  // The route from host `from` to host `to` goes on from node `at` by e: `at` becomes the
  // node e reaches. A route that would leave a node twice by different ends loops.
  void step(std::size_t from, std::size_t to, std::size_t& at, End e, const std::string& what) {
    if (sender(e) != at)
      throw std::logic_error("plan_network: the route from " + net_.hosts[from] + " to " + net_.hosts[to] +
                             " takes " + what + " away from where it is");
    const auto [it, added] = next_.emplace(std::make_tuple(at, to, from), e);
    if (!added && it->second != e)
      throw NotPaths{fmt::format("the route from host {} to host {} would leave {} twice, by two different links "
                                 "(one of them {})",
                                 net_.hosts[from], net_.hosts[to], out_.nodes[at].label, what)};
    at = receiver(e);
  }

  // Each node's routes: one per destination where every source's next hop is the same, else
  // one per source (the platform routes by source there, as SimGrid's dragonfly does).
  void finish() {
    for (auto it = next_.begin(); it != next_.end();) {
      const std::size_t node = std::get<0>(it->first), to = std::get<1>(it->first);
      auto end = it;
      bool agree = true;
      for (; end != next_.end() && std::get<0>(end->first) == node && std::get<1>(end->first) == to; ++end)
        agree = agree && end->second == it->second;
      for (auto r = it; r != end; ++r) {
        out_.routes.push_back({node, addresses_.at(to), r->second.first, r->second.second,
                               agree ? std::string() : addresses_.at(std::get<2>(r->first))});
        if (agree) break;
      }
      it = end;
    }
  }

 private:
  VethEnd end_at(std::size_t node, std::size_t veth, int which) {
    VethEnd e;
    e.node = node;
    e.ifname = (is_host(node) ? "eth" : "p") + std::to_string(interfaces_[node]++);
    // A host's ports hold no address of their own: the host's one address (on its first
    // port) is the one Open MPI sees and every route of the host sends from.
    e.address = is_host(node) ? "" : address_of(veth, which);
    return e;
  }

  const PlatformNetwork& net_;
  const std::vector<std::string>& addresses_;
  TestbedNetwork& out_;
  std::vector<std::size_t> interfaces_;  // per node, how many it has
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, End> next_;  // (node, to, from) -> next hop
};

// The network the routes' links make where they form paths: which points the routes join
// is inferred from the links' order in them (see the header). Throws NotPaths where they
// do not. Its steps, in order: the routes join the points (join_routes), a split-duplex
// link's two directions become one cable (join_cables), the links become hops between nodes
// (build_hops, label_junctions), and every route becomes its nodes' next hops (route_steps).
class PathInference {
 public:
  PathInference(const PlatformNetwork& net, const std::vector<std::vector<std::size_t>>& hops, Builder& b)
      : net_(net), hops_(hops), b_(b), n_(net.hosts.size()), m_(net.links.size()), points_(n_, m_),
        crossed_(m_, 0), entry_(net.routes.size()), wire_before_(net.routes.size()), built_(m_) {}

  void run() {
    join_routes();
    join_cables();
    for (std::size_t h = 0; h < n_; ++h) node_of_[points_.find(h)] = h;  // the hosts' nodes first
    build_hops();
    label_junctions();
    route_steps();
    b_.finish();
  }

 private:
  // Whether p makes a link crossed so far (or `current`) start and end at one point, or a
  // wire join a point to itself.
  bool loops(Points& p, std::size_t current) const {
    for (std::size_t l = 0; l < m_; ++l)
      if ((crossed_[l] != 0 || l == current) && p.find(p.side(l, 0)) == p.find(p.side(l, 1))) return true;
    for (const auto& [a, c] : wires_)
      if (p.find(a) == p.find(c)) return true;
    return false;
  }

  // Points a and c joined, or where that would loop, an unshaped wire between them (its index;
  // no_point where they were joined or were one already).
  std::size_t connect(std::size_t a, std::size_t c, std::size_t current) {
    if (points_.find(a) == points_.find(c)) return no_point;
    Points tried = points_;
    if (tried.join(a, c).first == no_point && !loops(tried, current)) {
      points_ = std::move(tried);
      return no_point;
    }
    wires_.emplace_back(a, c);
    return wires_.size() - 1;
  }

  // Where a route passes from one link to the next, the two meet: their points are joined. A
  // join that would make two hosts one point, or a link start and end at one point, is a
  // route that needs no link at all, or whose consecutive links do not meet: an unshaped wire
  // joins the two points instead, and the route crosses it. Which way each link is crossed is
  // kept (bit 1: side 0 to side 1; bit 2: back): a link entered where it was left before is
  // crossed back.
  void join_routes() {
    for (std::size_t r = 0; r < net_.routes.size(); ++r) {
      const NetworkRoute& route = net_.routes[r];
      std::size_t at = route.from;
      for (std::size_t k = 0; k < hops_[r].size(); ++k) {
        const std::size_t l = hops_[r][k];
        const std::size_t s0 = points_.side(l, 0), s1 = points_.side(l, 1);
        const bool last = k + 1 == hops_[r].size();
        int in = crossed_[l] == 2 ? 1 : 0;
        if (points_.find(at) == points_.find(s0)) in = 0;
        else if (points_.find(at) == points_.find(s1)) in = 1;
        else if (last && points_.find(route.to) == points_.find(s1)) in = 0;
        else if (last && points_.find(route.to) == points_.find(s0)) in = 1;
        wire_before_[r].push_back(connect(at, in == 0 ? s0 : s1, l));
        crossed_[l] |= in == 0 ? 1 : 2;
        entry_[r].push_back(in);
        at = in == 0 ? s1 : s0;
      }
      wire_before_[r].push_back(connect(at, route.to, no_point));
    }
  }

  // The two directions of a split-duplex link (SimGrid's NAME_UP and NAME_DOWN) are one
  // cable: each ends where the other starts. The routes alone may not say so (between two
  // hosts, the switch would be two points: one for each direction); where a link would then
  // start and end at one point (a switch's capacity between its NICs' cables, as Bunyip's),
  // the directions stay apart.
  void join_cables() {
    std::map<std::string, std::size_t> by_name;
    for (std::size_t l = 0; l < m_; ++l) by_name.emplace(net_.links[l].name, l);
    for (std::size_t up = 0; up < m_; ++up) {
      const std::string& name = net_.links[up].name;
      if (name.size() < 3 || name.compare(name.size() - 3, 3, "_UP") != 0) continue;
      const auto down = by_name.find(name.substr(0, name.size() - 3) + "_DOWN");
      if (down == by_name.end()) continue;
      const std::size_t dn = down->second;
      if ((crossed_[up] != 1 && crossed_[up] != 2) || (crossed_[dn] != 1 && crossed_[dn] != 2)) continue;
      auto in = [&](std::size_t l) { return points_.side(l, crossed_[l] == 1 ? 0 : 1); };
      auto out_of = [&](std::size_t l) { return points_.side(l, crossed_[l] == 1 ? 1 : 0); };
      Points cable = points_;
      if (cable.join(in(up), out_of(dn)).first != no_point || cable.join(out_of(up), in(dn)).first != no_point)
        continue;
      if (!loops(cable, no_point)) points_ = std::move(cable);
    }
  }

  // The node of a point: a host's, or a junction added the first time a link meets there.
  std::size_t node(std::size_t point) {
    const auto it = node_of_.find(points_.find(point));
    if (it != node_of_.end()) return it->second;
    const std::size_t added = b_.add_node(NetworkNode::Kind::junction, "");
    node_of_[points_.find(point)] = added;
    return added;
  }

  // Each link's hop: one way, between the nodes of its sides; both ways, through a pair of
  // nodes of its own (in, shaped, out) with wires from and to both sides. Then the wires.
  void build_hops() {
    auto into_host = [&](std::size_t from, std::size_t to) { return b_.is_host(to) && !b_.is_host(from); };
    for (std::size_t l = 0; l < m_; ++l) {
      if (crossed_[l] == 0) continue;
      const std::size_t a = node(points_.side(l, 0)), c = node(points_.side(l, 1));
      if (a == c) throw NotPaths{"link " + net_.links[l].name + " would start and end at one point"};
      if (crossed_[l] != 3) {
        const std::size_t from = crossed_[l] == 1 ? a : c, to = crossed_[l] == 1 ? c : a;
        built_[l].shaped = b_.hop(from, to, &net_.links[l], into_host(from, to));
        continue;
      }
      const std::size_t in = b_.add_node(NetworkNode::Kind::shared_in, "link " + net_.links[l].name + " (in)");
      const std::size_t outn = b_.add_node(NetworkNode::Kind::shared_out, "link " + net_.links[l].name + " (out)");
      built_[l].shaped = b_.hop(in, outn, &net_.links[l], false);
      for (int s = 0; s < 2; ++s) {
        built_[l].wire_in[s] = b_.hop(s == 0 ? a : c, in, nullptr, false);
        built_[l].wire_out[s] = b_.hop(outn, s == 0 ? a : c, nullptr, false);
      }
    }
    for (const auto& [a, c] : wires_) wire_hops_.push_back(b_.hop(node(a), node(c), nullptr, false));
  }

  // Labels: a junction by the links that meet there.
  void label_junctions() {
    for (std::size_t l = 0; l < m_; ++l)
      for (int s = 0; s < 2 && crossed_[l]; ++s) {
        NetworkNode& j = b_.node(node(points_.side(l, s)));
        if (j.kind == NetworkNode::Kind::junction && j.label.size() < 160)
          j.label += (j.label.empty() ? "switch of " : ", ") + net_.links[l].name;
      }
  }

  // Every node's next hop on every route.
  void route_steps() {
    for (std::size_t r = 0; r < net_.routes.size(); ++r) {
      const NetworkRoute& route = net_.routes[r];
      std::size_t at = route.from;
      auto cross_wire = [&](std::size_t w, const std::string& before) {
        if (w != no_point) b_.step(route.from, route.to, at, wire_hops_[w], "a wire before " + before);
      };
      for (std::size_t k = 0; k < hops_[r].size(); ++k) {
        const std::size_t l = hops_[r][k];
        const Built& h = built_[l];
        const std::string name = "link " + net_.links[l].name;
        const int in = entry_[r][k];
        cross_wire(wire_before_[r][k], name);
        if (crossed_[l] != 3) {
          b_.step(route.from, route.to, at, h.shaped, name);
        } else {
          b_.step(route.from, route.to, at, h.wire_in[in], name);
          b_.step(route.from, route.to, at, h.shaped, name);
          b_.step(route.from, route.to, at, h.wire_out[1 - in], name);
        }
      }
      cross_wire(wire_before_[r].back(), "host " + net_.hosts[route.to]);
      if (at != route.to)
        throw std::logic_error("plan_network: the route from " + net_.hosts[route.from] + " to " +
                               net_.hosts[route.to] + " does not end at it");
    }
  }

  // A link's hops: its shaped one, and where it is crossed both ways the wires into and out of
  // its own pair of nodes from and to each side.
  struct Built {
    Builder::End shaped{no_point, 0};
    Builder::End wire_in[2]{{no_point, 0}, {no_point, 0}}, wire_out[2]{{no_point, 0}, {no_point, 0}};
  };

  const PlatformNetwork& net_;
  const std::vector<std::vector<std::size_t>>& hops_;
  Builder& b_;
  const std::size_t n_, m_;  // hosts, links
  Points points_;            // which points the routes join
  std::vector<int> crossed_;                          // per link: bit 1 side 0 to 1, bit 2 back
  std::vector<std::vector<int>> entry_;               // per route, the side each hop was entered by
  std::vector<std::pair<std::size_t, std::size_t>> wires_;  // from point, to point
  std::vector<std::vector<std::size_t>> wire_before_;       // per route, per hop, then at the end
  std::map<std::size_t, std::size_t> node_of_;              // a point's root -> node
  std::vector<Built> built_;
  std::vector<Builder::End> wire_hops_;
};

void inferred(const PlatformNetwork& net, const std::vector<std::vector<std::size_t>>& hops, Builder& b) {
  PathInference(net, hops, b).run();
}

// The network where the routes do not form paths: every link a pair of nodes of its own
// (in, out) and one shaped hop between them, the routes joined from one link's out to the
// next one's in by wires. Every flow still crosses the links its route names and shares
// each with every other flow through it; only the namespaces are more.
void circuit(const PlatformNetwork& net, const std::vector<std::vector<std::size_t>>& hops, Builder& b) {
  const std::size_t m = net.links.size();
  std::vector<bool> into_host(m, false);  // the last link of a route: a switch's port into a host
  for (std::size_t r = 0; r < net.routes.size(); ++r)
    if (!hops[r].empty()) into_host[hops[r].back()] = true;
  std::vector<std::size_t> in_of(m, no_point);
  std::vector<Builder::End> shaped(m);
  for (const auto& route_links : hops)
    for (const std::size_t l : route_links)
      if (in_of[l] == no_point) {
        in_of[l] = b.add_node(NetworkNode::Kind::shared_in, "link " + net.links[l].name + " (in)");
        const std::size_t o = b.add_node(NetworkNode::Kind::shared_out, "link " + net.links[l].name + " (out)");
        shaped[l] = b.hop(in_of[l], o, &net.links[l], into_host[l]);
      }
  std::map<std::pair<std::size_t, std::size_t>, Builder::End> wires;
  auto wire = [&](std::size_t from, std::size_t to) {
    const auto it = wires.find({from, to});
    if (it != wires.end()) return it->second;
    return wires[{from, to}] = b.hop(from, to, nullptr, false);
  };
  for (std::size_t r = 0; r < net.routes.size(); ++r) {
    const NetworkRoute& route = net.routes[r];
    std::size_t at = route.from;
    for (const std::size_t l : hops[r]) {
      const std::string name = "link " + net.links[l].name;
      b.step(route.from, route.to, at, wire(at, in_of[l]), "a wire into " + name);
      b.step(route.from, route.to, at, shaped[l], name);
    }
    b.step(route.from, route.to, at, wire(at, route.to), "a wire into host " + net.hosts[route.to]);
  }
  b.finish();
}

}  // namespace

TestbedNetwork plan_network(const PlatformNetwork& net, const std::vector<std::string>& addresses,
                            const std::string& platform) {
  std::vector<std::string> notes;
  const std::vector<std::vector<std::size_t>> hops = built_links(net, notes);
  TestbedNetwork out;
  try {
    Builder b(net, addresses, out);
    inferred(net, hops, b);
  } catch (const NotPaths& e) {
    out = {};
    Builder b(net, addresses, out);
    try {
      circuit(net, hops, b);
    } catch (const NotPaths& again) {
      throw InputError("platform " + platform + ": the testbed cannot build the network between the run's hosts: " +
                       again.why);
    }
    notes.push_back("the platform's routes do not form paths the testbed can join link to link (" + e.why +
                    "): each link is built as a pair of namespaces of its own, the routes joined by wires (the same "
                    "sharing, more namespaces)");
  }
  for (const auto& route_links : hops) {
    out.most_hops = std::max(out.most_hops, route_links.size());
    const auto delayed = static_cast<std::size_t>(std::count_if(
        route_links.begin(), route_links.end(), [&](std::size_t l) { return net.links.at(l).latency_s > 0; }));
    out.most_delayed_hops = std::max(out.most_delayed_hops, delayed);
  }
  out.notes = std::move(notes);
  return out;
}

Json TestbedNetwork::to_json(double dilation) const {
  static constexpr const char* kinds[] = {"host", "junction", "shared link in", "shared link out"};
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
                {"queue_bytes", e.queue_bytes},
                {"latency_s", e.latency_s},
                {"held_s", e.latency_s * dilation}});
    return j;
  };
  Json veths_json = Json::array();
  for (const Veth& v : veths) veths_json.push_back({{"a", end_json(v.a)}, {"b", end_json(v.b)}});
  return {{"nodes", std::move(nodes_json)}, {"veths", std::move(veths_json)}, {"routes", routes.size()},
          {"most_shaped_hops", most_hops}, {"most_delayed_hops", most_delayed_hops}};
}

}  // namespace wulf
