// The routes between the ranks of a model (issue 65): rank r on host r of the platform as
// SimGrid reads it, or, for more ranks than the file has hosts, on a platform of servers all
// alike extended from the file's first three servers without building it whole.
//
// Extending: the file's hosts are servers of G GPUs each (their wulf:node, in order), as
// platforms/gpu/generate.py writes them: every server the same zone of GPUs, links and a
// gateway, each reaching the others through links of its own (its NICs, its FATPIPE port of
// the switch). Rank r is GPU r mod G of server r / G. A route within a server is server 0's
// between the same GPUs; a route from server i to server j (i != j) is server 0's route to
// server 1 between the same GPUs, each link of it taken as server i's or server j's own copy
// of it by whose it is in the file. Whose a link is: the one server at an end of every route
// of the first three servers' that crosses it. The file must show its servers alike: every
// route from server 1 to server 2 crosses the links of the route from server 0 to server 1
// between the same GPUs (the same bandwidths, latencies and sharing, in order), and no link is
// crossed by routes that share no server (a link of the whole cluster, which would take the
// load of every server's flows).
#pragma once

#include "engine/testbed_network.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace wulf {

class RankRoutes {
 public:
  // Rank r on net's host r; net holds the routes the model asks for.
  explicit RankRoutes(const PlatformNetwork& net);
  // Ranks on servers of per_server GPUs extended from net, whose hosts are the file's first
  // three servers' in order and whose routes are every ordered pair of them. Throws
  // InputError naming `platform` where its servers are not alike (the rules above).
  static RankRoutes extended(const PlatformNetwork& net, int per_server, const std::string& platform);

  // The links of the route from rank `from` to rank `to`, each handed to f in order as an
  // instance (a link of the file, or a server's own copy of it); returns the route's latency.
  // Throws InputError where there is none.
  template <class F>
  double visit(int from, int to, F&& f) const {
    const auto a = static_cast<std::size_t>(from), b = static_cast<std::size_t>(to);
    if (per_server_ == 0) {
      const NetworkRoute& r = file_route(a, b);
      for (const std::size_t l : r.links) f(static_cast<std::uint64_t>(l));
      return r.latency_s;
    }
    const auto G = static_cast<std::size_t>(per_server_);
    const std::size_t i = a / G, j = b / G, L = net_.links.size();
    const NetworkRoute& r = file_route(a % G, (i == j ? 0 : G) + b % G);
    for (const std::size_t l : r.links) f(static_cast<std::uint64_t>(l + L * (owner_[l] == 0 ? i : j)));
    return r.latency_s;
  }
  const NetworkLink& link(std::uint64_t instance) const { return net_.links[instance % net_.links.size()]; }
  const PlatformNetwork& network() const { return net_; }
  bool is_extended() const { return per_server_ > 0; }

 private:
  const NetworkRoute& file_route(std::size_t from, std::size_t to) const;

  PlatformNetwork net_;
  // (from, to) -> index into net_.routes: dense (from * hosts + to, kNoRoute where none) for a
  // few hosts, else hashed.
  static constexpr std::uint32_t kNoRoute = 0xffffffff;
  std::vector<std::uint32_t> dense_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  int per_server_ = 0;                 // extended: GPUs a server (0: not extended)
  std::vector<int> owner_;             // extended: each file link's server (0, 1 or 2)
};

}  // namespace wulf
