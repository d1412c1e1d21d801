// The network a testbed builds from a platform's links and routes (engine/testbed_network):
// which nodes, which shaped hops, which routes, on small networks written out here. The
// platforms' own (Bat Cave, a fat tree, Bunyip reduced) are planned in test_platform.cpp
// through SimGrid.
#include "engine/testbed_network.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace wulf {
namespace {

using testing_support::contains;
using testing_support::input_error;

// A network of n hosts h0..h(n-1); links added by name.
struct Net {
  PlatformNetwork net;
  explicit Net(std::size_t n) {
    for (std::size_t h = 0; h < n; ++h) net.hosts.push_back("h" + std::to_string(h));
  }
  std::size_t link(const std::string& name, double Bps, const std::string& sharing = "shared", double latency_s = 1e-5) {
    for (std::size_t l = 0; l < net.links.size(); ++l)
      if (net.links[l].name == name) return l;
    net.links.push_back({name, Bps, latency_s, sharing});
    return net.links.size() - 1;
  }
  void route(std::size_t from, std::size_t to, const std::vector<std::string>& names) {
    NetworkRoute r{from, to, {}, 0};
    for (const auto& n : names) r.links.push_back(link(n, 0));
    net.routes.push_back(std::move(r));
  }
  std::vector<std::string> addresses() const {
    std::vector<std::string> a;
    for (std::size_t h = 0; h < net.hosts.size(); ++h) a.push_back("198.18.0." + std::to_string(h + 1));
    return a;
  }
  TestbedNetwork plan() const { return plan_network(net, addresses(), "test.xml"); }
};

// A cluster as SimGrid routes it: each host's split-duplex link (NAME_UP, NAME_DOWN), and
// between them a backbone of the given sharing and latency.
Net cluster(std::size_t n, const std::string& backbone_sharing, double backbone_Bps, double backbone_latency_s = 0) {
  Net t(n);
  for (std::size_t h = 0; h < n; ++h) {
    t.link("l" + std::to_string(h) + "_UP", 10e6);
    t.link("l" + std::to_string(h) + "_DOWN", 10e6);
  }
  t.link("bb", backbone_Bps, backbone_sharing, backbone_latency_s);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) t.route(i, j, {"l" + std::to_string(i) + "_UP", "bb", "l" + std::to_string(j) + "_DOWN"});
  return t;
}

std::size_t count(const TestbedNetwork& t, NetworkNode::Kind kind) {
  return static_cast<std::size_t>(
      std::count_if(t.nodes.begin(), t.nodes.end(), [&](const NetworkNode& n) { return n.kind == kind; }));
}

// The sending ends that emulate link `name`.
std::vector<const VethEnd*> shaped(const TestbedNetwork& t, const std::string& name) {
  std::vector<const VethEnd*> ends;
  for (const Veth& v : t.veths)
    for (const VethEnd* e : {&v.a, &v.b})
      if (e->link == name) ends.push_back(e);
  return ends;
}

// The nodes a packet from host `from` to host `to` crosses, by the routes of each node.
std::vector<std::size_t> path(const TestbedNetwork& t, std::size_t from, const std::string& to_address) {
  std::vector<std::size_t> nodes{from};
  for (std::size_t steps = 0; steps < t.nodes.size(); ++steps) {
    const auto r = std::find_if(t.routes.begin(), t.routes.end(), [&](const NodeRoute& x) {
      return x.node == nodes.back() && x.destination == to_address;
    });
    if (r == t.routes.end()) break;
    const Veth& v = t.veths[r->veth];
    nodes.push_back(r->end == 0 ? v.b.node : v.a.node);
  }
  return nodes;
}

TEST(testbed_network, a_cluster_with_a_fatpipe_switch_is_one_switch_and_a_port_a_host) {
  const TestbedNetwork t = cluster(3, "fatpipe", 12.5e6).plan();
  EXPECT_EQ(count(t, NetworkNode::Kind::host), 3u);
  EXPECT_EQ(count(t, NetworkNode::Kind::junction), 1u);
  ASSERT_EQ(t.veths.size(), 3u);  // each host's cable, both ways shaped
  for (std::size_t h = 0; h < 3; ++h) {
    const auto up = shaped(t, "l" + std::to_string(h) + "_UP"), down = shaped(t, "l" + std::to_string(h) + "_DOWN");
    ASSERT_EQ(up.size(), 1u);
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(up[0]->node, h);
    EXPECT_DOUBLE_EQ(up[0]->rate_Bps, 10e6);
    EXPECT_DOUBLE_EQ(up[0]->queue_bytes, kHostQueueBytes);
    EXPECT_EQ(down[0]->node, 3u);  // the switch
    EXPECT_DOUBLE_EQ(down[0]->rate_Bps, 10e6 * kSwitchFaster);
  }
  EXPECT_EQ(path(t, 0, "198.18.0.3"), (std::vector<std::size_t>{0, 3, 2}));
  EXPECT_TRUE(t.notes.empty());
  EXPECT_EQ(t.most_hops, 2u);
}

// A SHARED backbone: one hop that every flow crosses, whichever host sends, at its rate.
// Each shaped hop holds what it sends for its link's latency; a link the routes pass as a
// switch (a fast FATPIPE backbone) cannot, and its latency is said to be missing.
TEST(testbed_network, each_hop_carries_its_links_latency_and_a_switchs_is_said_to_be_missing) {
  Net t = cluster(3, "fatpipe", 1e9, 5e-6);
  t.net.links[t.link("l1_DOWN", 0)].latency_s = 2e-5;
  const TestbedNetwork plan = t.plan();
  ASSERT_EQ(shaped(plan, "l0_UP").size(), 1u);
  EXPECT_DOUBLE_EQ(shaped(plan, "l0_UP")[0]->latency_s, 1e-5);
  EXPECT_DOUBLE_EQ(shaped(plan, "l1_DOWN")[0]->latency_s, 2e-5);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_TRUE(contains(plan.notes[0], "link bb's latency of 5 us is not emulated")) << plan.notes[0];
  EXPECT_DOUBLE_EQ(plan.to_json(10).at("veths").at(0).at("a").at("held_s").get<double>(), 1e-4);
}

TEST(testbed_network, a_shared_backbone_is_one_hop_that_every_flow_crosses) {
  const TestbedNetwork t = cluster(4, "shared", 15e6).plan();
  EXPECT_EQ(count(t, NetworkNode::Kind::junction), 2u);  // before the backbone, after it
  const auto bb = shaped(t, "bb");
  ASSERT_EQ(bb.size(), 1u);
  EXPECT_DOUBLE_EQ(bb[0]->rate_Bps, 15e6);
  EXPECT_DOUBLE_EQ(bb[0]->queue_bytes, kSwitchQueueBytes);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      if (i != j) {
        const auto p = path(t, i, "198.18.0." + std::to_string(j + 1));
        ASSERT_EQ(p.size(), 4u);
        EXPECT_EQ(p[1], bb[0]->node);
        EXPECT_EQ(p.back(), j);
      }
  EXPECT_EQ(t.most_hops, 3u);
}

// A fatpipe slower than the hosts' links would limit each flow alone: said, not built.
TEST(testbed_network, a_fatpipe_slower_than_the_hosts_is_said_to_be_not_emulated) {
  const TestbedNetwork t = cluster(2, "fatpipe", 5e6).plan();
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_TRUE(contains(t.notes[0], "link bb (40 Mbit/s, fatpipe) is not emulated")) << t.notes[0];
}

// One SHARED link between two hosts, crossed both ways: both directions share one queue,
// in nodes of its own.
TEST(testbed_network, a_shared_link_crossed_both_ways_gets_a_pair_of_nodes_and_one_queue) {
  Net n(2);
  n.link("cable", 10e6);
  n.route(0, 1, {"cable"});
  n.route(1, 0, {"cable"});
  const TestbedNetwork t = n.plan();
  EXPECT_EQ(count(t, NetworkNode::Kind::shared_in), 1u);
  EXPECT_EQ(count(t, NetworkNode::Kind::shared_out), 1u);
  ASSERT_EQ(shaped(t, "cable").size(), 1u);
  EXPECT_EQ(t.veths.size(), 5u);  // the shaped hop, a wire in and out at each side
  const std::size_t in = shaped(t, "cable")[0]->node;
  EXPECT_EQ(path(t, 0, "198.18.0.2"), (std::vector<std::size_t>{0, in, in + 1, 1}));
  EXPECT_EQ(path(t, 1, "198.18.0.1"), (std::vector<std::size_t>{1, in, in + 1, 0}));
}

// Hosts joined by no link that can limit a flow (a fatpipe as fast as they are) are joined
// by an unshaped wire.
TEST(testbed_network, hosts_joined_by_no_link_that_limits_are_joined_by_a_wire) {
  Net n(2);
  n.link("wire", 1e9, "fatpipe");
  n.route(0, 1, {"wire"});
  n.route(1, 0, {"wire"});
  const TestbedNetwork t = n.plan();
  ASSERT_EQ(t.veths.size(), 1u);
  EXPECT_EQ(t.veths[0].a.rate_Bps, 0);
  EXPECT_EQ(t.veths[0].b.rate_Bps, 0);
  EXPECT_EQ(path(t, 0, "198.18.0.2"), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(path(t, 1, "198.18.0.1"), (std::vector<std::size_t>{1, 0}));
}

// A route that enters a link away from where it starts (from h1 into a, which starts at h0)
// reaches it by a wire, and still crosses each link it names, once.
TEST(testbed_network, a_route_that_enters_a_link_away_from_its_start_reaches_it_by_a_wire) {
  Net n(3);
  for (const char* l : {"a", "b", "c"}) n.link(l, 10e6);
  n.route(0, 1, {"a", "b"});
  n.route(1, 0, {"b", "a"});
  n.route(0, 2, {"a", "c"});
  n.route(2, 0, {"c", "a"});
  n.route(1, 2, {"a", "c"});  // from h1 through a, which starts at h0
  n.route(2, 1, {"c", "b"});
  const TestbedNetwork t = n.plan();
  EXPECT_TRUE(t.notes.empty());
  for (const char* l : {"a", "b", "c"}) ASSERT_EQ(shaped(t, l).size(), 1u) << l;
  const auto p = path(t, 1, "198.18.0.3");
  EXPECT_EQ(p.back(), 2u);
  EXPECT_EQ(std::count(p.begin(), p.end(), shaped(t, "a")[0]->node), 1);
  EXPECT_EQ(std::count(p.begin(), p.end(), shaped(t, "c")[0]->node), 1);
}

// Routes to one host that leave a switch by two different links, depending on where they
// come from: routed by source there, and by destination only everywhere else.
TEST(testbed_network, routes_that_leave_a_switch_two_ways_to_one_host_are_routed_by_source) {
  Net n(3);
  for (const char* l : {"a_UP", "a_DOWN", "b_UP", "b_DOWN", "c_UP", "c_DOWN", "x", "y"}) n.link(l, 10e6);
  n.route(0, 1, {"a_UP", "b_DOWN"});
  n.route(1, 0, {"b_UP", "a_DOWN"});
  n.route(0, 2, {"a_UP", "x", "c_DOWN"});
  n.route(1, 2, {"b_UP", "y", "c_DOWN"});
  n.route(2, 0, {"c_UP", "a_DOWN"});
  n.route(2, 1, {"c_UP", "b_DOWN"});
  const TestbedNetwork t = n.plan();
  std::vector<NodeRoute> by_source;
  for (const NodeRoute& r : t.routes)
    if (!r.source.empty()) by_source.push_back(r);
  ASSERT_EQ(by_source.size(), 2u);  // at the switch, to h2: from h0 by x, from h1 by y
  EXPECT_EQ(by_source[0].node, by_source[1].node);
  EXPECT_EQ(by_source[0].destination, "198.18.0.3");
  const auto x = shaped(t, "x"), y = shaped(t, "y");
  ASSERT_EQ(x.size(), 1u);
  ASSERT_EQ(y.size(), 1u);
  for (const NodeRoute& r : by_source) {
    const Veth& v = t.veths[r.veth];
    const VethEnd& out = r.end == 0 ? v.a : v.b;
    EXPECT_EQ(out.link, r.source == "198.18.0.1" ? "x" : "y") << r.source;
  }
}

}  // namespace
}  // namespace wulf
