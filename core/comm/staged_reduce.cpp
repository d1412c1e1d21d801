#include "comm/staged_reduce.hpp"
#include "comm/tree_collectives.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"  // InputError
#include "util/text.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

namespace wulf {

// ---- the layout ---------------------------------------------------------------------

namespace {

std::vector<std::string> split_on(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(trim(item));
  return out;
}

// The most ranks a layout may place: --np's own limit (train_job.cpp).
constexpr double most_places = 1'000'000;

// Whether v is a whole number in [least, most], tested without converting a double that
// may lie outside every integer type (which would be undefined).
bool whole_in(double v, double least, double most) {
  return std::isfinite(v) && v >= least && v <= most && v == std::floor(v);
}

int whole_number(const std::string& key, const std::string& value, int least) {
  const auto v = parse_number(value);
  if (!v || !whole_in(*v, least, most_places))
    throw InputError("--reduce-layout: " + key + "=" + value + " is not a whole number from " + std::to_string(least) +
                     " to " + std::to_string(static_cast<long long>(most_places)));
  return static_cast<int>(*v);
}

// The places of a regular layout, outside + groups x nodes x cpus, at most most_places:
// an absurd layout is refused before a single place is made.
void check_place_count(int groups, int nodes, int cpus, int outside) {
  const double places = static_cast<double>(outside) + static_cast<double>(groups) * nodes * cpus;
  if (places > most_places)
    throw InputError(fmt::format("--reduce-layout: groups={} x nodes={} x cpus={}{} makes {:g} places, more than the "
                                 "{:.0f} ranks a run may have (the limit of --np)",
                                 groups, nodes, cpus, outside ? fmt::format(" + outside={}", outside) : "", places,
                                 most_places));
}

}  // namespace

ReduceLayout ReduceLayout::parse(const std::string& text, int np) {
  ReduceLayout layout;
  std::map<std::string, std::string> keys;
  std::string places;
  for (const std::string& item : split_on(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError("--reduce-layout: '" + item + "' is not key=value");
    const std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (key == "places") {
      places = value;
    } else if (key == "groups" || key == "nodes" || key == "cpus" || key == "outside" || key == "fan-in") {
      keys[key] = value;
    } else {
      throw InputError("--reduce-layout: unknown key '" + key + "' (expected groups, nodes, cpus, outside, fan-in or places)");
    }
  }
  if (keys.count("fan-in")) layout.fan_in = whole_number("fan-in", keys["fan-in"], 1);
  if (!places.empty()) {
    if (keys.count("groups") || keys.count("nodes") || keys.count("cpus") || keys.count("outside"))
      throw InputError("--reduce-layout: places= cannot be combined with groups, nodes, cpus or outside");
    for (const std::string& place : split_on(places, '/')) {
      const auto colon = place.find(':');
      const auto g = parse_number(place.substr(0, colon)), n = colon == std::string::npos ? std::nullopt : parse_number(place.substr(colon + 1));
      if (!g || !n || !whole_in(*g, -1, most_places) || !whole_in(*n, 0, most_places))
        throw InputError("--reduce-layout: place '" + place + "' is not GROUP:NODE (GROUP -1 for outside, both at "
                         "most " + std::to_string(static_cast<long long>(most_places)) + ")");
      layout.ranks.push_back(Place{static_cast<int>(*g), static_cast<int>(*n)});
    }
  } else {
    for (const char* key : {"groups", "nodes", "cpus"})
      if (!keys.count(key))
        throw InputError(std::string("--reduce-layout: needs ") + key + "= (e.g. groups=4,nodes=24,cpus=2,fan-in=3)");
    const int groups = whole_number("groups", keys["groups"], 1), nodes = whole_number("nodes", keys["nodes"], 1);
    const int cpus = whole_number("cpus", keys["cpus"], 1);
    const int outside = keys.count("outside") ? whole_number("outside", keys["outside"], 0) : 0;
    check_place_count(groups, nodes, cpus, outside);
    // Only the first np places are ever used: the others are not made.
    const auto wanted = static_cast<std::size_t>(std::max(np, 0));
    for (int r = 0; r < outside && layout.ranks.size() < wanted; ++r) layout.ranks.push_back(Place{-1, r / cpus});
    for (int g = 0; g < groups && layout.ranks.size() < wanted; ++g)
      for (int n = 0; n < nodes && layout.ranks.size() < wanted; ++n)
        for (int c = 0; c < cpus && layout.ranks.size() < wanted; ++c) layout.ranks.push_back(Place{g, n});
  }
  if (static_cast<long long>(layout.ranks.size()) < np)
    throw InputError("--reduce-layout: it places " + std::to_string(layout.ranks.size()) + " ranks, but --np is " +
                     std::to_string(np));
  layout.ranks.resize(static_cast<std::size_t>(np));
  return layout;
}

std::string ReduceLayout::to_string() const {
  std::string out = "fan-in=" + std::to_string(fan_in) + ",places=";
  for (std::size_t r = 0; r < ranks.size(); ++r)
    out += (r ? "/" : "") + std::to_string(ranks[r].group) + ":" + std::to_string(ranks[r].node);
  return out;
}

bool ReduceLayout::has_groups() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const Place& p) { return p.group >= 0; });
}

bool is_point_to_point_reduce(const std::string& name) {
  return name == "wulf-binomial" || name == "four-stage" || own_reduce_tree(name);
}

// ---- the plan of a four-stage reduce -------------------------------------------------

namespace detail {

// Who sends to whom in each stage, worked out identically on every rank.
struct FourStagePlan {
  struct Role {
    int send_to = -1;            // this stage: send the data to this rank, then idle
    std::vector<int> recv_from;  // or: receive from these ranks and add
  };
  std::array<std::vector<Role>, 3> stage;  // stages 1-3, one role per rank
  std::vector<int> stage_four;             // ranks of stage 4's binomial reduce, ascending
};

FourStagePlan plan_four_stage(const ReduceLayout& layout, int root) {
  const int p = static_cast<int>(layout.ranks.size());
  FourStagePlan plan;
  for (auto& s : plan.stage) s.assign(static_cast<std::size_t>(p), {});
  // Nodes: their ranks in rank order; the leader is the root where it is a member.
  std::map<std::pair<int, int>, std::vector<int>> members;
  for (int r = 0; r < p; ++r) members[{layout.ranks[r].group, layout.ranks[r].node}].push_back(r);
  std::map<std::pair<int, int>, int> leader;
  for (auto& [key, ranks] : members) leader[key] = std::count(ranks.begin(), ranks.end(), root) ? root : ranks.front();
  const auto root_key = std::pair{layout.ranks[root].group, layout.ranks[root].node};

  // 1. Inside each node, to its leader.
  for (auto& [key, ranks] : members)
    for (int r : ranks)
      if (r != leader[key]) {
        plan.stage[0][r].send_to = leader[key];
        plan.stage[0][leader[key]].recv_from.push_back(r);
      }

  // Each group's nodes in node order.
  std::map<int, std::vector<int>> nodes_of;  // group -> node indices, ascending
  for (auto& [key, ranks] : members)
    if (key.first >= 0) nodes_of[key.first].push_back(key.second);
  std::vector<int> groups;
  for (auto& [g, nodes] : nodes_of) groups.push_back(g);

  // 2. Pairs of groups: node i of the first sends to node i of the second (the other way
  // round where the first holds the root, which must keep its data).
  std::map<int, std::vector<int>> holders;  // group -> node indices still holding data
  for (std::size_t k = 0; k < groups.size(); k += 2) {
    const int a = groups[k];
    if (k + 1 == groups.size()) {
      holders[a] = nodes_of[a];
      continue;
    }
    const int b = groups[k + 1];
    const std::vector<int>& na = nodes_of[a];
    const std::vector<int>& nb = nodes_of[b];
    for (std::size_t i = 0; i < std::max(na.size(), nb.size()); ++i) {
      if (i >= na.size()) {
        holders[b].push_back(nb[i]);
        continue;
      }
      if (i >= nb.size()) {
        holders[a].push_back(na[i]);
        continue;
      }
      std::pair<int, int> from{a, na[i]}, to{b, nb[i]};
      if (from == root_key) std::swap(from, to);
      plan.stage[1][leader[from]].send_to = leader[to];
      plan.stage[1][leader[to]].recv_from.push_back(leader[from]);
      holders[to.first].push_back(to.second);
    }
  }

  // 3. In each group, sets of fan_in + 1 holders in node order; all but the set's root
  // (its first node, or the root's node) send to it at once.
  std::set<int> four;
  for (auto& [g, nodes] : holders) {
    std::sort(nodes.begin(), nodes.end());
    const std::size_t set = static_cast<std::size_t>(layout.fan_in) + 1;
    for (std::size_t first = 0; first < nodes.size(); first += set) {
      const std::size_t last = std::min(nodes.size(), first + set);
      std::pair<int, int> head{g, nodes[first]};
      for (std::size_t i = first; i < last; ++i)
        if (std::pair{g, nodes[i]} == root_key) head = root_key;
      for (std::size_t i = first; i < last; ++i) {
        const std::pair<int, int> node{g, nodes[i]};
        if (node == head) continue;
        plan.stage[2][leader[node]].send_to = leader[head];
        plan.stage[2][leader[head]].recv_from.push_back(leader[node]);
      }
      four.insert(leader[head]);
    }
  }
  // 4. The sets' roots, the nodes outside the groups, and the root.
  for (auto& [key, ranks] : members)
    if (key.first < 0) four.insert(leader[key]);
  four.insert(root);
  plan.stage_four.assign(four.begin(), four.end());
  return plan;
}

}  // namespace detail

// ---- the algorithms ------------------------------------------------------------------

struct PointToPointReduce::RootPlan {
  detail::FourStagePlan plan;
  std::unique_ptr<Comm> four;  // stage 4's ranks; nullptr on the others
};

// Plans are made per root, with stage 4's communicator, on the first reduce to that root:
// split is a collective, and every rank makes that call together, as a reduce requires.
const PointToPointReduce::RootPlan& PointToPointReduce::plan_for(int root) {
  auto it = plans_.find(root);
  if (it != plans_.end()) return *it->second;
  auto made = std::make_unique<RootPlan>();
  made->plan = detail::plan_four_stage(layout_, root);
  const auto& four = made->plan.stage_four;
  const bool member = std::binary_search(four.begin(), four.end(), comm_.rank());
  made->four = comm_.split(member ? 0 : Comm::no_color, comm_.rank());
  return *plans_.emplace(root, std::move(made)).first->second;
}

PointToPointReduce::PointToPointReduce(Comm& comm, const std::string& name, ReduceLayout layout, ScratchSource scratch)
    : comm_(comm),
      four_stage_(name == "four-stage"),
      tree_(own_reduce_tree(name)),
      layout_(std::move(layout)),
      unread_scratch_(std::move(scratch)) {
  if (four_stage_ && !layout_.ranks.empty() &&
      static_cast<int>(layout_.ranks.size()) != comm_.size())
    throw InputError("--reduce-layout: it places " + std::to_string(layout_.ranks.size()) + " ranks, but there are " +
                     std::to_string(comm_.size()));
}

PointToPointReduce::~PointToPointReduce() = default;

bool PointToPointReduce::falls_back() const { return four_stage_ && !layout_.has_groups(); }

template <class T>
T* PointToPointReduce::scratch(std::span<const T> data, std::size_t n, bool& unread) {
  unread = unread_scratch_ && unread_.holds(data.data(), data.size_bytes());
  if (unread)
    if (void* shared = unread_scratch_(n * sizeof(T))) return static_cast<T*>(shared);
  unread = false;
  std::vector<T>& own = [&]() -> std::vector<T>& {
    if constexpr (std::is_same_v<T, float>) return scratch_f_;
    else return scratch_d_;
  }();
  own.resize(n);
  return own.data();
}

void PointToPointReduce::reduce_sum(std::span<float> data, int root) { reduce(data, root); }
void PointToPointReduce::reduce_sum(std::span<double> data, int root) { reduce(data, root); }

template <class T>
void PointToPointReduce::reduce(std::span<T> data, int root) {
  stages_ = StageTimes{};
  if (comm_.size() == 1) return;
  if (tree_) {
    bool unread = false;
    T* room = scratch(std::span<const T>(data), 2 * data.size(), unread);
    return tree_reduce_sum(comm_, data, root, *tree_, room, !unread);
  }
  if (four_stage_ && !falls_back()) return four_stage(data, root);
  binomial(comm_, data, root);
}

// The binomial tree of LAM (seed 002's library), MPICH and SMPI, from point-to-point
// messages: in round k (mask 2^k) a rank whose distance v from the root has bit k set sends
// to v - 2^k and is done; the others receive from v + 2^k and add, one child at a time. One
// scratch buffer per receiving rank, kept.
template <class T>
void PointToPointReduce::binomial(Comm& comm, std::span<T> data, int root) {
  const int p = comm.size();
  const int v = (comm.rank() - root + p) % p;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) {
      comm.send(std::span<const T>(data), (v - mask + root) % p);
      return;
    }
    if (v + mask < p) {
      bool unread = false;
      T* room = scratch(std::span<const T>(data), data.size(), unread);
      comm.recv(std::span<T>(room, data.size()), (v + mask + root) % p);
      if (!unread) add_into(data, room);
    }
  }
}

template <class T>
void PointToPointReduce::four_stage(std::span<T> data, int root) {
  const RootPlan& cached = plan_for(root);
  const detail::FourStagePlan& plan = cached.plan;
  const int me = comm_.rank();
  const double t0 = comm_.now();
  for (std::size_t s = 0; s < 3; ++s) {
    const detail::FourStagePlan::Role& role = plan.stage[s][static_cast<std::size_t>(me)];
    if (role.send_to >= 0) {
      comm_.send(std::span<const T>(data), role.send_to);
    } else if (!role.recv_from.empty()) {
      // All at once: a node takes its senders through its NICs in parallel.
      const std::size_t k = role.recv_from.size(), n = data.size();
      bool unread = false;
      T* room = scratch(std::span<const T>(data), k * n, unread);
      std::vector<std::span<T>> parts;
      for (std::size_t i = 0; i < k; ++i) parts.emplace_back(room + i * n, n);
      comm_.recv_all(std::span<const std::span<T>>(parts), std::span<const int>(role.recv_from));
      for (std::size_t i = 0; !unread && i < k; ++i) add_into(data, room + i * n);
    }
    stages_.end_s[s] = comm_.now() - t0;
  }
  const auto& ranks = plan.stage_four;
  if (std::binary_search(ranks.begin(), ranks.end(), me)) {
    const int sub_root = static_cast<int>(std::lower_bound(ranks.begin(), ranks.end(), root) - ranks.begin());
    binomial(*cached.four, data, sub_root);  // LAM's binomial, as seed 002's
  }
  stages_.end_s[3] = comm_.now() - t0;
}



template void PointToPointReduce::reduce<float>(std::span<float>, int);
template void PointToPointReduce::reduce<double>(std::span<double>, int);

}  // namespace wulf
