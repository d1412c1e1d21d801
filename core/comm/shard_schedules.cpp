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

// Rank `rank`'s lanes of the rings plan: part c of every shard (shard values each, rank q's at
// q * shard) around rings[c]. A lane's schedule is the ring's over the part's p chunks in ring
// order, chunk j the part of the rank at place j - 1 (the place that ends the ring's
// reduce-scatter holding it), each step moved to where that rank's part lies.
void rings_lanes(ShardPlan& plan, int ranks, int rank, std::span<const std::vector<int>> rings) {
  const auto p = static_cast<std::size_t>(ranks);
  const std::size_t k = rings.size();
  for (std::size_t c = 0; c < k; ++c) {
    const std::vector<int>& ring = rings[c];
    const std::size_t part_at = c * plan.shard / k, part_n = (c + 1) * plan.shard / k - part_at;
    std::vector<NbStep> reduce, gather;
    if (part_n > 0) {
      const int place = static_cast<int>(std::ranges::find(ring, rank) - ring.begin());
      const std::vector<NbStep> steps = nb_ring_schedule(ranks, place, p * part_n);
      // Where chunk j of the lane lies in the padded buffer.
      auto at = [&](std::size_t lane_at) {
        const std::size_t j = lane_at / part_n;
        const auto owner = static_cast<std::size_t>(ring[(j + p - 1) % p]);
        return owner * plan.shard + part_at + lane_at % part_n;
      };
      for (std::size_t i = 0; i < steps.size(); ++i) {
        NbStep s = steps[i];
        s.to = ring[static_cast<std::size_t>(s.to)], s.from = ring[static_cast<std::size_t>(s.from)];
        s.send_at = at(s.send_at), s.recv_at = at(s.recv_at);
        (i < steps.size() / 2 ? reduce : gather).push_back(s);
      }
    }
    plan.reduce.push_back(std::move(reduce));
    plan.gather.push_back(std::move(gather));
  }
}

}  // namespace

ShardPlan shard_plan(Sharding sharding, int ranks, int rank, std::size_t values, std::span<const int> node_of,
                     std::span<const std::vector<int>> rings) {
  ShardPlan plan;
  plan.values = values;
  if (!rings.empty()) {
    if (sharding != Sharding::full && sharding != Sharding::grad_op)
      throw std::invalid_argument("the shards' rings: only with full or grad-op sharding");
    if (const std::string fault = rings_fault(rings, ranks); !fault.empty())
      throw std::invalid_argument("the shards' rings: " + fault);  // the front end checked them
  }
  if (sharding == Sharding::none || ranks <= 1) {
    plan.padded = plan.shard = values;
    plan.reduce.emplace_back(ranks > 1 ? nb_schedule(NbAlgorithm::ring, ranks, rank, values) : std::vector<NbStep>{});
    plan.gather.emplace_back();
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
  if (!rings.empty()) {  // full or grad-op: the group is every rank, each holding its own shard
    plan.owned_at = static_cast<std::size_t>(rank) * plan.shard;
    rings_lanes(plan, ranks, rank, rings);
    return plan;
  }
  // The ring's reduce-scatter leaves place i holding chunk i + 1.
  plan.owned_at = static_cast<std::size_t>((place + 1) % p) * plan.shard;
  const std::vector<NbStep> ring = nb_ring_schedule(p, place, plan.padded);
  const std::size_t half = ring.size() / 2;
  std::vector<NbStep>& reduce = plan.reduce.emplace_back();
  nb_append_mapped(reduce, std::span(ring).first(half), group, 0);
  if (across.size() > 1) {
    const int me = static_cast<int>(std::ranges::find(across, rank) - across.begin());
    const std::vector<NbStep> cross =
        nb_schedule(NbAlgorithm::ring, static_cast<int>(across.size()), me, plan.shard);
    nb_append_mapped(reduce, cross, across, plan.owned_at);
  }
  nb_append_mapped(plan.gather.emplace_back(), std::span(ring).subspan(half), group, 0);
  return plan;
}

}  // namespace wulf
