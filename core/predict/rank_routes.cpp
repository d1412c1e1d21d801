#include "predict/rank_routes.hpp"

#include "util/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace wulf {
namespace {

std::uint64_t pair_key(std::size_t from, std::size_t to) { return (static_cast<std::uint64_t>(from) << 32) | to; }

}  // namespace

RankRoutes::RankRoutes(const PlatformNetwork& net) : net_(net) {
  const std::size_t n = net_.hosts.size();
  if (n <= 2048) {  // 16 MiB at most
    dense_.assign(n * n, kNoRoute);
    for (std::size_t i = 0; i < net_.routes.size(); ++i)
      dense_[net_.routes[i].from * n + net_.routes[i].to] = static_cast<std::uint32_t>(i);
    return;
  }
  index_.reserve(net_.routes.size());
  for (std::size_t i = 0; i < net_.routes.size(); ++i) index_.emplace(pair_key(net_.routes[i].from, net_.routes[i].to), i);
}

const NetworkRoute& RankRoutes::file_route(std::size_t from, std::size_t to) const {
  const std::size_t n = net_.hosts.size();
  if (!dense_.empty() && from < n && to < n && dense_[from * n + to] != kNoRoute)
    return net_.routes[dense_[from * n + to]];
  const auto at = dense_.empty() ? index_.find(pair_key(from, to)) : index_.end();
  if (at == index_.end()) {
    const std::string a = from < net_.hosts.size() ? net_.hosts[from] : std::to_string(from);
    const std::string b = to < net_.hosts.size() ? net_.hosts[to] : std::to_string(to);
    throw InputError("the model: no route from " + a + " to " + b);
  }
  return net_.routes[at->second];
}

RankRoutes RankRoutes::extended(const PlatformNetwork& net, int per_server, const std::string& platform) {
  const auto G = static_cast<std::size_t>(per_server);
  if (per_server < 1 || net.hosts.size() != 3 * G)
    throw std::logic_error("RankRoutes::extended: the hosts of three servers of " + std::to_string(per_server));
  RankRoutes r(net);
  r.per_server_ = per_server;
  // Whose each link is: the servers at an end of every route that crosses it.
  std::vector<std::set<int>> ends(net.links.size());
  std::vector<bool> seen(net.links.size(), false);
  for (const NetworkRoute& route : net.routes) {
    const std::set<int> here{static_cast<int>(route.from / G), static_cast<int>(route.to / G)};
    for (const std::size_t l : route.links) {
      if (!seen[l]) ends[l] = here, seen[l] = true;
      else {
        std::set<int> both;
        std::ranges::set_intersection(ends[l], here, std::inserter(both, both.begin()));
        ends[l] = std::move(both);
      }
    }
  }
  r.owner_.assign(net.links.size(), -1);
  for (std::size_t l = 0; l < net.links.size(); ++l) {
    if (!seen[l]) continue;
    if (ends[l].size() != 1)
      throw InputError(fmt::format("platform {}: link {} is crossed by routes between different servers that share "
                                   "none: a link of the whole cluster, which the model cannot extend to more servers "
                                   "than the file has (simulate a platform of that size)",
                                   platform, net.links[l].name));
    r.owner_[l] = *ends[l].begin();
  }
  // The servers alike: server 1's routes (to itself, to server 2) cross links like server 0's
  // (to itself, to server 1), each the corresponding server's own.
  auto same = [&](const NetworkRoute& a, const NetworkRoute& b, int shift) {
    if (a.links.size() != b.links.size() || a.latency_s != b.latency_s) return false;
    for (std::size_t k = 0; k < a.links.size(); ++k) {
      const NetworkLink &x = net.links[a.links[k]], &y = net.links[b.links[k]];
      if (x.bandwidth_Bps != y.bandwidth_Bps || x.latency_s != y.latency_s || x.sharing != y.sharing ||
          r.owner_[a.links[k]] + shift != r.owner_[b.links[k]])
        return false;
    }
    return true;
  };
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t h = 0; h < G; ++h) {
      const bool within = g == h || same(r.file_route(g, h), r.file_route(G + g, G + h), 1);
      if (!within || !same(r.file_route(g, G + h), r.file_route(G + g, 2 * G + h), 1))
        throw InputError(fmt::format("platform {}: its servers are not alike (the route from {} to {} is not like the "
                                     "one from {} to {}): the model extends only a platform of servers all alike "
                                     "beyond its hosts (simulate a platform of that size)",
                                     platform, net.hosts[G + g], net.hosts[within ? 2 * G + h : G + h], net.hosts[g],
                                     net.hosts[within ? G + h : h]));
    }
  return r;
}

}  // namespace wulf
