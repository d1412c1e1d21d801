#include "comm/shard_schedules.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace wulf {

std::optional<Sharding> sharding_named(std::string_view name) {
  for (std::size_t i = 0; i < sharding_names.size(); ++i)
    if (sharding_names[i] == name) return static_cast<Sharding>(i);
  return std::nullopt;
}

namespace {

// The ranks of rank's node in rank order, and those that hold the same place on every node.
struct NodeGroups {
  std::vector<int> local, across;
  int place = 0;
};

NodeGroups node_groups(int ranks, int rank, std::span<const int> node_of) {
  if (const std::string fault = node_layout_fault(node_of, ranks); !fault.empty())
    throw std::invalid_argument("hybrid sharding: " + fault);  // the front end checked it
  NodeGroups g;
  std::vector<int> place(static_cast<std::size_t>(ranks));
  std::map<int, int> seen;
  for (int q = 0; q < ranks; ++q) {
    const int node = node_of[static_cast<std::size_t>(q)];
    place[static_cast<std::size_t>(q)] = seen[node]++;
    if (node == node_of[static_cast<std::size_t>(rank)]) g.local.push_back(q);
  }
  g.place = place[static_cast<std::size_t>(rank)];
  for (int q = 0; q < ranks; ++q)
    if (place[static_cast<std::size_t>(q)] == g.place) g.across.push_back(q);
  return g;
}

}  // namespace

ShardPlan shard_plan(Sharding sharding, int ranks, int rank, std::size_t values, std::span<const int> node_of) {
  ShardPlan plan;
  plan.values = values;
  if (sharding == Sharding::none || ranks <= 1) {
    plan.padded = plan.shard = values;
    if (ranks > 1) plan.reduce = nb_schedule(NbAlgorithm::ring, ranks, rank, values);
    return plan;
  }
  std::vector<int> group(static_cast<std::size_t>(ranks)), across;
  int place = rank;
  for (int q = 0; q < ranks; ++q) group[static_cast<std::size_t>(q)] = q;
  if (sharding == Sharding::hybrid) {
    NodeGroups g = node_groups(ranks, rank, node_of);
    group = std::move(g.local), across = std::move(g.across), place = g.place;
  }
  const int p = static_cast<int>(group.size());
  plan.group = p;
  const auto n = static_cast<std::size_t>(p);
  plan.padded = (values + n - 1) / n * n;
  plan.shard = plan.padded / n;
  // The ring's reduce-scatter leaves place i holding chunk i + 1.
  plan.owned_at = static_cast<std::size_t>((place + 1) % p) * plan.shard;
  const std::vector<NbStep> ring = nb_ring_schedule(p, place, plan.padded);
  const std::size_t half = ring.size() / 2;
  nb_append_mapped(plan.reduce, std::span(ring).first(half), group, 0);
  if (across.size() > 1) {
    const int me = static_cast<int>(std::ranges::find(across, rank) - across.begin());
    const std::vector<NbStep> cross =
        nb_schedule(NbAlgorithm::ring, static_cast<int>(across.size()), me, plan.shard);
    nb_append_mapped(plan.reduce, cross, across, plan.owned_at);
  }
  nb_append_mapped(plan.gather, std::span(ring).subspan(half), group, 0);
  return plan;
}

}  // namespace wulf
