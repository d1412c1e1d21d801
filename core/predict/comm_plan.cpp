#include "predict/comm_plan.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace wulf {

namespace {

std::size_t mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

}  // namespace

std::size_t PatternBook::intern(Pattern messages) {
  std::size_t h = messages.size();
  for (const Message& m : messages)
    h = mix(h, (static_cast<std::size_t>(static_cast<unsigned>(m.first)) << 32) | static_cast<unsigned>(m.second));
  std::vector<std::size_t>& same = by_hash_[h];
  for (const std::size_t i : same)
    if (patterns_[i] == messages) return i;
  same.push_back(patterns_.size());
  patterns_.push_back(std::move(messages));
  return patterns_.size() - 1;
}

const CommPlan* PatternBook::made(std::size_t key) const {
  const auto at = plans_.find(key);
  return at == plans_.end() ? nullptr : &at->second;
}

void PatternBook::keep(std::size_t key, const CommPlan& plan) { plans_.emplace(key, plan); }

std::vector<Message> PatternBook::pairs() const {
  std::vector<Message> out;
  for (const Pattern& p : patterns_)
    for (const Message& m : p) out.push_back(m), out.emplace_back(m.second, m.first);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t CommPlan::steps() const {
  std::size_t n = 0;
  for (const PlanPhase& f : phases) n += f.count;
  return n;
}

double CommPlan::bytes() const {
  double b = 0;
  for (const PlanPhase& f : phases) b += static_cast<double>(f.count) * f.bytes;
  return b;
}

namespace {

// A plan over m ranks numbered 0 .. m - 1, its patterns not yet interned: made over a group
// (a node, the ranks of one place across the nodes, a ring's order) and then mapped.
struct LocalPhase {
  Pattern messages;
  std::size_t count = 0;
  double bytes = 0;
};
using LocalPlan = std::vector<LocalPhase>;

double ceil_div(std::size_t n, std::size_t m) { return std::ceil(static_cast<double>(n) / static_cast<double>(m)); }

// The ring r -> r + 1 of m ranks: its reduce-scatter's m - 1 steps, its allgather's, or both,
// of chunks of at most ceil(n / m) values (Open MPI's ring cuts the first n mod m longer).
enum class RingPart { both, reduce_scatter, gather };
LocalPlan ring_local(int m, std::size_t n, std::size_t value_bytes, RingPart part = RingPart::both) {
  Pattern ring;
  for (int r = 0; r < m; ++r) ring.emplace_back(r, (r + 1) % m);
  const std::size_t count = static_cast<std::size_t>(m - 1) * (part == RingPart::both ? 2 : 1);
  return {{std::move(ring), count, ceil_div(n, static_cast<std::size_t>(m)) * static_cast<double>(value_bytes)}};
}

// Open MPI's pairing beyond the largest power of two q <= m: ranks 2i and 2i + 1 (i < m - q)
// fold into 2i + 1; place j of the q is rank 2j + 1 for j < m - q, else j + (m - q).
struct PowerOfTwo {
  int q = 1, rem = 0;
  explicit PowerOfTwo(int m) {
    while (q * 2 <= m) q *= 2;
    rem = m - q;
  }
  int rank_of(int place) const { return place < rem ? place * 2 + 1 : place + rem; }
};

// Recursive doubling's or Rabenseifner's exchanges with partner place ^ mask, between the
// fold in of the ranks beyond q and the result's way back. bytes_of(step): the step's bytes.
LocalPlan doubling_local(int m, double folded_bytes, const std::vector<std::pair<int, double>>& masks) {
  const PowerOfTwo two(m);
  LocalPlan plan;
  if (two.rem > 0) {
    Pattern in;
    for (int i = 0; i < two.rem; ++i) in.emplace_back(2 * i, 2 * i + 1);
    plan.push_back({std::move(in), 1, folded_bytes});
  }
  for (const auto& [mask, bytes] : masks) {
    Pattern swap;
    for (int place = 0; place < two.q; ++place) swap.emplace_back(two.rank_of(place), two.rank_of(place ^ mask));
    plan.push_back({std::move(swap), 1, bytes});
  }
  if (two.rem > 0) {
    Pattern out;
    for (int i = 0; i < two.rem; ++i) out.emplace_back(2 * i + 1, 2 * i);
    plan.push_back({std::move(out), 1, folded_bytes});
  }
  return plan;
}

LocalPlan rdb_local(int m, std::size_t n, std::size_t value_bytes) {
  const double bytes = static_cast<double>(n) * static_cast<double>(value_bytes);
  std::vector<std::pair<int, double>> masks;
  for (int mask = 1; mask < PowerOfTwo(m).q; mask <<= 1) masks.emplace_back(mask, bytes);
  return doubling_local(m, bytes, masks);
}

// Halving: the half of the chunks held sent at each step (q / 2, q / 4, ... chunks, the longest
// half the one of the first chunks); doubling back by the same partners in the reverse order.
LocalPlan rabenseifner_local(int m, std::size_t n, std::size_t value_bytes) {
  const auto q = static_cast<std::size_t>(PowerOfTwo(m).q);
  // The most values h of the q chunks hold: the first n mod q chunks are one value longer.
  auto values_of = [&](std::size_t h) { return h * (n / q) + std::min(h, n % q); };
  std::vector<std::pair<int, double>> halving;
  for (std::size_t mask = 1, chunks = q / 2; mask < q; mask <<= 1, chunks /= 2)
    halving.emplace_back(static_cast<int>(mask), static_cast<double>(values_of(chunks) * value_bytes));
  std::vector<std::pair<int, double>> masks = halving;
  masks.insert(masks.end(), halving.rbegin(), halving.rend());
  return doubling_local(m, static_cast<double>(n) * static_cast<double>(value_bytes), masks);
}

// nb_schedule's choice for the flat algorithms: the ring and Rabenseifner turn to recursive
// doubling where a chunk would be empty.
LocalPlan flat_local(NbAlgorithm a, int m, std::size_t n, std::size_t value_bytes) {
  if (m <= 1 || n == 0) return {};
  if (a == NbAlgorithm::ring && n >= static_cast<std::size_t>(m)) return ring_local(m, n, value_bytes);
  if (a == NbAlgorithm::rabenseifner && n >= static_cast<std::size_t>(PowerOfTwo(m).q))
    return rabenseifner_local(m, n, value_bytes);
  return rdb_local(m, n, value_bytes);
}

// Each group's copy of a local pattern, in world ranks, all at once.
Pattern mapped(const Pattern& local, const std::vector<std::vector<int>>& groups) {
  Pattern out;
  out.reserve(local.size() * groups.size());
  for (const std::vector<int>& g : groups)
    for (const Message& m : local)
      out.emplace_back(g[static_cast<std::size_t>(m.first)], g[static_cast<std::size_t>(m.second)]);
  return out;
}

LocalPlan mapped(const LocalPlan& plan, const std::vector<std::vector<int>>& groups) {
  LocalPlan out;
  for (const LocalPhase& f : plan) out.push_back({mapped(f.messages, groups), f.count, f.bytes});
  return out;
}

// Lanes that run at once, merged step by step: a step of all their messages, as long as the
// longest; where one lane has ended the others go on alone.
LocalPlan merged(const std::vector<LocalPlan>& lanes) {
  LocalPlan out;
  std::vector<std::size_t> phase(lanes.size(), 0), used(lanes.size(), 0);
  for (;;) {
    std::size_t run = 0;
    for (std::size_t c = 0; c < lanes.size(); ++c)
      if (phase[c] < lanes[c].size()) {
        const std::size_t left = lanes[c][phase[c]].count - used[c];
        run = run == 0 ? left : std::min(run, left);
      }
    if (run == 0) return out;
    LocalPhase step{{}, run, 0};
    for (std::size_t c = 0; c < lanes.size(); ++c) {
      if (phase[c] >= lanes[c].size()) continue;
      const LocalPhase& f = lanes[c][phase[c]];
      step.messages.insert(step.messages.end(), f.messages.begin(), f.messages.end());
      step.bytes = std::max(step.bytes, f.bytes);
      if ((used[c] += run) == f.count) ++phase[c], used[c] = 0;
    }
    out.push_back(std::move(step));
  }
}

CommPlan interned(PatternBook& book, LocalPlan plan) {
  CommPlan out;
  for (LocalPhase& f : plan)
    if (f.count > 0 && !f.messages.empty())
      out.phases.push_back({book.intern(std::move(f.messages)), f.count, f.bytes});
  return out;
}

// The ranks of each node (node_of's values, in the order of their first rank) and of each
// place across the nodes (the i-th rank of every node), as comm/nb_allreduce's hierarchical
// schedule groups them.
struct NodeLayout {
  std::vector<std::vector<int>> nodes, places;
};
NodeLayout node_layout(int p, const std::vector<int>& node_of) {
  if (const std::string fault = node_layout_fault(node_of, p); !fault.empty())
    throw std::invalid_argument("hierarchical allreduce: " + fault);
  NodeLayout out;
  std::map<int, std::size_t> index;
  for (int r = 0; r < p; ++r) {
    const auto [at, added] = index.emplace(node_of[static_cast<std::size_t>(r)], out.nodes.size());
    if (added) out.nodes.emplace_back();
    std::vector<int>& node = out.nodes[at->second];
    if (node.size() >= out.places.size()) out.places.emplace_back();
    out.places[node.size()].push_back(r);
    node.push_back(r);
  }
  return out;
}

LocalPlan hierarchical_local(NbAlgorithm across, int p, std::size_t n, std::size_t value_bytes,
                             const std::vector<int>& node_of) {
  const NodeLayout layout = node_layout(p, node_of);
  const auto L = layout.nodes.front().size(), N = layout.nodes.size();
  if (n < L) return rdb_local(p, n, value_bytes);  // fewer values than a node's ranks
  LocalPlan plan;
  const LocalPlan within =
      L > 1 ? mapped(ring_local(static_cast<int>(L), n, value_bytes, RingPart::reduce_scatter), layout.nodes)
            : LocalPlan{};
  plan = within;
  // Across: each place's ring (or Rabenseifner) over its chunk, the longest of them.
  const std::size_t chunk = L > 1 ? static_cast<std::size_t>(ceil_div(n, L)) : n;
  const LocalPlan cross = mapped(flat_local(across, static_cast<int>(N), chunk, value_bytes), layout.places);
  plan.insert(plan.end(), cross.begin(), cross.end());
  if (L > 1) {
    LocalPlan gather = mapped(ring_local(static_cast<int>(L), n, value_bytes, RingPart::gather), layout.nodes);
    plan.insert(plan.end(), gather.begin(), gather.end());
  }
  return plan;
}

// Part c of n values over k lanes, as nb_lanes cuts them (the first n mod k one longer).
std::size_t part_size(std::size_t n, std::size_t k, std::size_t c) { return n / k + (c < n % k ? 1 : 0); }

}  // namespace

namespace {

// A plan's key in the book: what it was made of.
std::size_t plan_key(std::initializer_list<std::size_t> parts) {
  std::size_t h = 0;
  for (const std::size_t v : parts) h = mix(h, v);
  return h;
}

CommPlan made_allreduce_plan(PatternBook& book, NbAlgorithm algorithm, int p, std::size_t n, std::size_t value_bytes,
                             const NbLayout& layout);
ShardComm made_shard_plan(PatternBook& book, Sharding sharding, int p, std::size_t values, std::size_t element_bytes,
                          const std::vector<int>& node_of, const std::vector<std::vector<int>>& rings);

// A unit's padded values and shard, as shard_plan pads them.
ShardComm padding(Sharding sharding, int p, std::size_t values, const std::vector<int>& node_of) {
  ShardComm out;
  if (sharding == Sharding::none || p <= 1) {
    out.padded = out.shard = values;
    return out;
  }
  const std::size_t group =
      sharding == Sharding::hybrid ? node_layout(p, node_of).nodes.front().size() : static_cast<std::size_t>(p);
  out.padded = (values + group - 1) / group * group, out.shard = out.padded / group;
  return out;
}

}  // namespace

CommPlan allreduce_plan(PatternBook& book, NbAlgorithm algorithm, std::size_t n, std::size_t value_bytes) {
  const int p = book.ranks();
  if (p <= 1 || n == 0) return {};
  const std::size_t key = plan_key({1, static_cast<std::size_t>(algorithm), n, value_bytes});
  if (const CommPlan* plan = book.made(key)) return *plan;
  CommPlan plan = made_allreduce_plan(book, algorithm, p, n, value_bytes, book.layout());
  book.keep(key, plan);
  return plan;
}

namespace {

CommPlan made_allreduce_plan(PatternBook& book, NbAlgorithm algorithm, int p, std::size_t n, std::size_t value_bytes,
                             const NbLayout& layout) {
  switch (algorithm) {
    case NbAlgorithm::hierarchical:
      return interned(book, hierarchical_local(NbAlgorithm::ring, p, n, value_bytes, layout.node_of));
    case NbAlgorithm::hierarchical_rabenseifner:
      return interned(book, hierarchical_local(NbAlgorithm::rabenseifner, p, n, value_bytes, layout.node_of));
    case NbAlgorithm::rings: {
      if (const std::string fault = rings_fault(layout.rings, p); !fault.empty())
        throw std::invalid_argument("rings allreduce: " + fault);
      std::vector<LocalPlan> lanes;
      for (std::size_t c = 0; c < layout.rings.size(); ++c)
        lanes.push_back(mapped(flat_local(NbAlgorithm::ring, p, part_size(n, layout.rings.size(), c), value_bytes),
                               {layout.rings[c]}));
      return interned(book, merged(lanes));
    }
    default: return interned(book, flat_local(algorithm, p, n, value_bytes));
  }
}

}  // namespace

ShardComm shard_comm_plan(PatternBook& book, Sharding sharding, std::size_t values, std::size_t element_bytes) {
  const int p = book.ranks();
  const std::vector<int>& node_of = book.layout().node_of;
  const std::vector<std::vector<int>>& rings = book.layout().rings;
  const std::size_t key = plan_key({2, static_cast<std::size_t>(sharding), values, element_bytes});
  const CommPlan* gather = book.made(key);
  const CommPlan* reduce = book.made(key + 1);
  if (gather && reduce) {
    ShardComm out = padding(sharding, p, values, node_of);
    out.gather = *gather, out.reduce = *reduce;
    return out;
  }
  ShardComm out = made_shard_plan(book, sharding, p, values, element_bytes, node_of, rings);
  book.keep(key, out.gather);
  book.keep(key + 1, out.reduce);
  return out;
}

namespace {

ShardComm made_shard_plan(PatternBook& book, Sharding sharding, int p, std::size_t values, std::size_t element_bytes,
                          const std::vector<int>& node_of, const std::vector<std::vector<int>>& rings) {
  ShardComm out;
  if (sharding == Sharding::none || p <= 1) {
    out.padded = out.shard = values;
    out.reduce = interned(book, flat_local(NbAlgorithm::ring, p, values, element_bytes));
    return out;
  }
  if (sharding == Sharding::hybrid) {
    const NodeLayout layout = node_layout(p, node_of);
    const std::size_t L = layout.nodes.front().size();
    out.padded = (values + L - 1) / L * L, out.shard = out.padded / L;
    if (L > 1) {
      out.gather = interned(book, mapped(ring_local(static_cast<int>(L), out.padded, element_bytes, RingPart::gather),
                                         layout.nodes));
      LocalPlan reduce =
          mapped(ring_local(static_cast<int>(L), out.padded, element_bytes, RingPart::reduce_scatter), layout.nodes);
      const LocalPlan across =
          mapped(flat_local(NbAlgorithm::ring, static_cast<int>(layout.nodes.size()), out.shard, element_bytes),
                 layout.places);
      reduce.insert(reduce.end(), across.begin(), across.end());
      out.reduce = interned(book, std::move(reduce));
    } else {
      out.reduce = interned(book, mapped(flat_local(NbAlgorithm::ring, static_cast<int>(layout.nodes.size()),
                                                    out.shard, element_bytes),
                                         layout.places));
    }
    return out;
  }
  const auto n = static_cast<std::size_t>(p);
  out.padded = (values + n - 1) / n * n, out.shard = out.padded / n;
  if (rings.empty()) {
    out.gather = interned(book, ring_local(p, out.padded, element_bytes, RingPart::gather));
    out.reduce = interned(book, ring_local(p, out.padded, element_bytes, RingPart::reduce_scatter));
    return out;
  }
  if (const std::string fault = rings_fault(rings, p); !fault.empty())
    throw std::invalid_argument("the shards' rings: " + fault);
  std::vector<LocalPlan> gathers, reduces;
  const std::size_t k = rings.size();
  for (std::size_t c = 0; c < k; ++c) {
    const std::size_t part_n = (c + 1) * out.shard / k - c * out.shard / k;  // shard_schedules' cut
    if (part_n == 0) continue;
    gathers.push_back(mapped(ring_local(p, part_n * n, element_bytes, RingPart::gather), {rings[c]}));
    reduces.push_back(mapped(ring_local(p, part_n * n, element_bytes, RingPart::reduce_scatter), {rings[c]}));
  }
  out.gather = interned(book, merged(gathers));
  out.reduce = interned(book, merged(reduces));
  return out;
}

}  // namespace

}  // namespace wulf
