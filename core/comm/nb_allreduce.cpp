#include "comm/nb_allreduce.hpp"

#include "util/errors.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace wulf {

std::string_view to_string(NbAlgorithm a) { return allreduce_of(a).name; }

NbAlgorithm parse_nb_algorithm(std::string_view name, std::string_view what) {
  const AllreduceAlgorithm* a = find_allreduce(name);
  if (a && a->scheduled) return a->schedule;
  throw InputError(std::string(what) + " \"" + std::string(name) + "\": expected " +
                   allreduce_names(AllreduceRows::scheduled));
}

bool is_hierarchical(NbAlgorithm a) { return allreduce_of(a).needs == AllreduceNeeds::nodes; }

bool is_own_blocking_allreduce(std::string_view name) {
  const AllreduceAlgorithm* a = find_allreduce(name);
  return a && a->own_only();
}

std::string rings_fault(std::span<const std::vector<int>> rings, int ranks) {
  if (rings.empty()) return "no ring";
  for (std::size_t c = 0; c < rings.size(); ++c) {
    const std::string ring = "ring " + std::to_string(c);
    if (rings[c].size() != static_cast<std::size_t>(ranks))
      return ring + " holds " + std::to_string(rings[c].size()) + " ranks of " + std::to_string(ranks);
    std::vector<bool> seen(static_cast<std::size_t>(ranks));
    for (const int r : rings[c]) {
      if (r < 0 || r >= ranks) return ring + " holds rank " + std::to_string(r) + ", not one of 0 to " + std::to_string(ranks - 1);
      if (seen[static_cast<std::size_t>(r)]) return ring + " holds rank " + std::to_string(r) + " twice";
      seen[static_cast<std::size_t>(r)] = true;
    }
  }
  return "";
}

std::string node_layout_fault(std::span<const int> node_of, int ranks) {
  if (node_of.size() != static_cast<std::size_t>(ranks))
    return "a node for each of the " + std::to_string(ranks) + " ranks is needed, " + std::to_string(node_of.size()) +
           " given";
  std::map<int, int> count;
  for (int node : node_of) ++count[node];
  for (const auto& [node, n] : count)
    if (n != count.begin()->second)
      return std::to_string(n) + " ranks on node " + std::to_string(node) + ", " +
             std::to_string(count.begin()->second) + " on node " + std::to_string(count.begin()->first) +
             ": hierarchical needs the same number of ranks on every node";
  return "";
}

namespace {

// n values cut into `count` chunks, the first n mod count of them one value longer (as Open
// MPI's ring cuts them): chunk c starts at at(c) and holds at(c + 1) - at(c) values.
struct Chunks {
  std::size_t n, count;
  std::size_t at(std::size_t c) const {
    const std::size_t early = (n + count - 1) / count, late = n / count, split = n % count;
    return c < split ? c * early : split * early + (c - split) * late;
  }
  std::size_t size(std::size_t c) const { return at(c + 1) - at(c); }
};

// The largest power of two at most p, and the rank's place among that many (-1 for a rank
// that folds into its neighbour), as Open MPI's recursive doubling and Rabenseifner pair the
// ranks beyond it: ranks 2i and 2i + 1 (i < p - q) fold into 2i + 1.
struct PowerOfTwo {
  int q, rem, place;
  PowerOfTwo(int p, int r) : q(1) {
    while (q * 2 <= p) q *= 2;
    rem = p - q;
    place = r < 2 * rem ? (r % 2 == 0 ? -1 : r / 2) : r - rem;
  }
  int rank_of(int place_of) const { return place_of < rem ? place_of * 2 + 1 : place_of + rem; }
};

// The fold in of a rank beyond the power of two and the result's way back, around `core`,
// the steps of the power-of-two ranks (empty for a rank that only folds).
std::vector<NbStep> folded(const PowerOfTwo& two, int r, std::size_t n, std::vector<NbStep> core) {
  if (r >= 2 * two.rem) return core;
  if (two.place < 0)  // folds into r + 1, and gets the result back from it
    return {{.to = r + 1, .send_n = n}, {.from = r + 1, .recv_n = n}};
  core.insert(core.begin(), {.from = r - 1, .recv_n = n, .add = true});
  core.push_back({.to = r - 1, .send_n = n});
  return core;
}

std::vector<NbStep> rdb_schedule(int p, int r, std::size_t n) {
  const PowerOfTwo two(p, r);
  std::vector<NbStep> steps;
  if (two.place >= 0)
    for (int mask = 1; mask < two.q; mask <<= 1) {
      const int dst = two.rank_of(two.place ^ mask);
      steps.push_back({.to = dst, .from = dst, .send_n = n, .recv_n = n, .add = true});
    }
  return folded(two, r, n, std::move(steps));
}

std::vector<NbStep> ring_schedule(int p, int r, std::size_t n) {
  const Chunks chunks{n, static_cast<std::size_t>(p)};
  auto chunk = [p](int c) { return static_cast<std::size_t>(((c % p) + p) % p); };
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  std::vector<NbStep> steps;
  for (int k = 0; k < p - 1; ++k) {  // reduce-scatter: r ends holding chunk r + 1 summed
    const std::size_t out = chunk(r - k), in = chunk(r - k - 1);
    steps.push_back({.to = right, .from = left, .send_at = chunks.at(out), .send_n = chunks.size(out),
                     .recv_at = chunks.at(in), .recv_n = chunks.size(in), .add = true});
  }
  for (int k = 0; k < p - 1; ++k) {  // allgather of the summed chunks
    const std::size_t out = chunk(r + 1 - k), in = chunk(r - k);
    steps.push_back({.to = right, .from = left, .send_at = chunks.at(out), .send_n = chunks.size(out),
                     .recv_at = chunks.at(in), .recv_n = chunks.size(in)});
  }
  return steps;
}

// n >= the power of two q: each of q chunks has a value.
std::vector<NbStep> rabenseifner_schedule(int p, int r, std::size_t n) {
  const PowerOfTwo two(p, r);
  const Chunks chunks{n, static_cast<std::size_t>(two.q)};
  std::vector<NbStep> steps;
  if (two.place >= 0) {
    // Reduce-scatter by recursive halving: the chunks [lo, hi) held, halved at each step; the
    // rank whose bit is clear keeps the lower half. The halves sent, for the way back.
    std::size_t lo = 0, hi = static_cast<std::size_t>(two.q);
    struct Halving {
      int partner;
      std::size_t kept_lo, kept_hi, sent_lo, sent_hi;
    };
    std::vector<Halving> halvings;
    for (int mask = 1; mask < two.q; mask <<= 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      const bool lower = (two.place & mask) == 0;
      const Halving h{two.rank_of(two.place ^ mask), lower ? lo : mid, lower ? mid : hi, lower ? mid : lo,
                      lower ? hi : mid};
      steps.push_back({.to = h.partner, .from = h.partner, .send_at = chunks.at(h.sent_lo),
                       .send_n = chunks.at(h.sent_hi) - chunks.at(h.sent_lo), .recv_at = chunks.at(h.kept_lo),
                       .recv_n = chunks.at(h.kept_hi) - chunks.at(h.kept_lo), .add = true});
      halvings.push_back(h);
      lo = h.kept_lo, hi = h.kept_hi;
    }
    // Allgather by recursive doubling: the same partners backwards, each sending what it
    // holds summed and receiving the half it gave away.
    for (auto h = halvings.rbegin(); h != halvings.rend(); ++h)
      steps.push_back({.to = h->partner, .from = h->partner, .send_at = chunks.at(h->kept_lo),
                       .send_n = chunks.at(h->kept_hi) - chunks.at(h->kept_lo), .recv_at = chunks.at(h->sent_lo),
                       .recv_n = chunks.at(h->sent_hi) - chunks.at(h->sent_lo)});
  }
  return folded(two, r, n, std::move(steps));
}

// Steps of a schedule over a group, made the world's: the group's ranks by their world ranks,
// their places in the data moved by `at`.
void append_mapped(std::vector<NbStep>& steps, std::span<const NbStep> part, const std::vector<int>& group,
                   std::size_t at) {
  for (NbStep s : part) {
    if (s.to >= 0) s.to = group[static_cast<std::size_t>(s.to)];
    if (s.from >= 0) s.from = group[static_cast<std::size_t>(s.from)];
    s.send_at += at, s.recv_at += at;
    steps.push_back(s);
  }
}

std::vector<NbStep> hierarchical_schedule(int p, int r, std::size_t n, std::span<const int> node_of,
                                          NbAlgorithm across_algorithm) {
  if (const std::string fault = node_layout_fault(node_of, p); !fault.empty())
    throw std::invalid_argument("hierarchical allreduce: " + fault);  // the front end checked it
  // Each rank's place among its node's ranks (in rank order), and this node's ranks.
  std::vector<int> place(static_cast<std::size_t>(p)), local;
  std::map<int, int> ranks_seen;
  for (int q = 0; q < p; ++q) {
    const int node = node_of[static_cast<std::size_t>(q)];
    place[static_cast<std::size_t>(q)] = ranks_seen[node]++;
    if (node == node_of[static_cast<std::size_t>(r)]) local.push_back(q);
  }
  const int L = static_cast<int>(local.size()), i = place[static_cast<std::size_t>(r)];
  // Fewer values than a node's ranks: no chunk for each; recursive doubling over all ranks.
  if (n < local.size()) return rdb_schedule(p, r, n);
  std::vector<NbStep> steps;
  const std::vector<NbStep> within = L > 1 ? ring_schedule(L, i, n) : std::vector<NbStep>{};
  const std::size_t half = within.size() / 2;
  append_mapped(steps, std::span(within).first(half), local, 0);  // reduce-scatter: the node's sums
  // The chunk this rank now holds summed: the one its last reduce-scatter step added.
  const std::size_t chunk_at = L > 1 ? within[half - 1].recv_at : 0, chunk_n = L > 1 ? within[half - 1].recv_n : n;
  std::vector<int> across;  // the ranks of place i, one per node, in rank order
  for (int q = 0; q < p; ++q)
    if (place[static_cast<std::size_t>(q)] == i) across.push_back(q);
  const int me = static_cast<int>(std::ranges::find(across, r) - across.begin());
  const std::vector<NbStep> cross = nb_schedule(across_algorithm, static_cast<int>(across.size()), me, chunk_n);
  append_mapped(steps, cross, across, chunk_at);
  append_mapped(steps, std::span(within).subspan(half), local, 0);  // allgather within the node
  return steps;
}

}  // namespace

std::vector<NbStep> nb_ring_schedule(int ranks, int rank, std::size_t n) { return ring_schedule(ranks, rank, n); }

void nb_append_mapped(std::vector<NbStep>& steps, std::span<const NbStep> part, const std::vector<int>& group,
                      std::size_t at) {
  append_mapped(steps, part, group, at);
}

std::vector<NbStep> nb_schedule(NbAlgorithm algorithm, int ranks, int rank, std::size_t n,
                                std::span<const int> node_of) {
  if (algorithm == NbAlgorithm::rings) throw std::logic_error("nb_schedule: rings has a schedule per lane (nb_lanes)");
  if (ranks <= 1 || n == 0) return {};
  if (algorithm == NbAlgorithm::hierarchical) return hierarchical_schedule(ranks, rank, n, node_of, NbAlgorithm::ring);
  if (algorithm == NbAlgorithm::hierarchical_rabenseifner)
    return hierarchical_schedule(ranks, rank, n, node_of, NbAlgorithm::rabenseifner);
  // Fewer values than ranks (than the power of two): chunks would be empty; Open MPI's ring
  // and Rabenseifner turn to recursive doubling too.
  if (algorithm == NbAlgorithm::ring && n >= static_cast<std::size_t>(ranks)) return ring_schedule(ranks, rank, n);
  if (algorithm == NbAlgorithm::rabenseifner && n >= static_cast<std::size_t>(PowerOfTwo(ranks, rank).q))
    return rabenseifner_schedule(ranks, rank, n);
  return rdb_schedule(ranks, rank, n);
}

std::size_t nb_scratch_values(const std::vector<NbStep>& steps) {
  std::size_t most = 0;
  for (const NbStep& s : steps)
    if (s.add) most = std::max(most, s.recv_n);
  return most;
}

std::vector<std::vector<NbStep>> nb_lanes(NbAlgorithm algorithm, int ranks, int rank, std::size_t n,
                                          const NbLayout& layout) {
  if (algorithm != NbAlgorithm::rings) return {nb_schedule(algorithm, ranks, rank, n, layout.node_of)};
  if (const std::string fault = rings_fault(layout.rings, ranks); !fault.empty())
    throw std::invalid_argument("rings allreduce: " + fault);  // the front end checked them
  // Part c of the data around ring c, each a ring allreduce of its own (recursive doubling
  // where the part has fewer values than ranks, as the ring does).
  const Chunks parts{n, layout.rings.size()};
  std::vector<std::vector<NbStep>> lanes;
  for (std::size_t c = 0; c < layout.rings.size(); ++c) {
    const std::vector<int>& ring = layout.rings[c];
    const int place = static_cast<int>(std::ranges::find(ring, rank) - ring.begin());
    std::vector<NbStep> lane;
    if (ranks > 1 && parts.size(c) > 0)
      append_mapped(lane, nb_schedule(NbAlgorithm::ring, ranks, place, parts.size(c)), ring, parts.at(c));
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

template <class T>
NbAllreduce<T>::NbAllreduce(Comm& comm, NbAlgorithm algorithm, std::size_t n, bool add, int tag,
                            const NbLayout& layout)
    : NbAllreduce(comm, nb_lanes(algorithm, comm.size(), comm.rank(), n, layout), add, tag) {}

template <class T>
NbAllreduce<T>::NbAllreduce(Comm& comm, std::vector<std::vector<NbStep>> lanes, bool add, int tag)
    : comm_(comm), add_(add), tag_(tag) {
  for (std::vector<NbStep>& steps : lanes) {
    Lane lane;
    lane.scratch_at = scratch_values_;
    scratch_values_ += nb_scratch_values(steps);
    lane.step = steps.size();
    lane.steps = std::move(steps);
    lanes_.push_back(std::move(lane));
  }
}

template <class T>
void NbAllreduce<T>::start(std::span<T> data, std::span<T> scratch) {
  if (!done()) throw std::logic_error("NbAllreduce: started again before done");
  if (scratch.size() < scratch_values()) throw std::length_error("NbAllreduce: scratch too short");
  data_ = data, scratch_ = scratch;
  for (std::size_t c = 0; c < lanes_.size(); ++c) {
    Lane& lane = lanes_[c];
    lane.step = 0;
    if (lane.done()) continue;
    ++open_lanes_;
    post(lane, tag_ + static_cast<int>(c));
  }
}

template <class T>
void NbAllreduce<T>::post(Lane& lane, int tag) {
  const NbStep& s = lane.steps[lane.step];
  if (s.from >= 0) {
    const std::span<T> into = s.add ? scratch_.subspan(lane.scratch_at, s.recv_n) : data_.subspan(s.recv_at, s.recv_n);
    lane.recv = comm_.irecv(into, s.from, tag);
  }
  if (s.to >= 0) {
    lane.send = comm_.isend(std::span<const T>(data_.subspan(s.send_at, s.send_n)), s.to, tag);
    lane.send_posted = comm_.now();
    sent_ += s.send_n;
  }
}

template <class T>
void NbAllreduce<T>::send_complete(const Lane& lane) {
  const std::size_t n = lane.steps[lane.step].send_n;
  delivered_ += n;
  const double seconds = comm_.now() - lane.send_posted;
  if (seconds > 0) send_rate_ = static_cast<double>(n) / seconds;
}

template <class T>
double NbAllreduce<T>::on_wire(double now) const {
  double values = static_cast<double>(delivered_);
  if (send_rate_ > 0)
    for (const Lane& lane : lanes_)
      if (lane.send >= 0)
        values += std::min(static_cast<double>(lane.steps[lane.step].send_n),
                           send_rate_ * std::max(0.0, now - lane.send_posted));
  return values;
}

template <class T>
void NbAllreduce<T>::complete_step(Lane& lane, int tag) {
  const NbStep& s = lane.steps[lane.step];
  if (s.add && add_) {
    T* d = data_.data() + s.recv_at;
    const T* in = scratch_.data() + lane.scratch_at;
    for (std::size_t i = 0; i < s.recv_n; ++i) d[i] = in[i] + d[i];
  }
  if (++lane.step < lane.steps.size()) post(lane, tag);
  else --open_lanes_;
}

template <class T>
bool NbAllreduce<T>::progress() {
  for (std::size_t c = 0; c < lanes_.size(); ++c) {
    Lane& lane = lanes_[c];
    while (!lane.done()) {
      if (lane.recv >= 0) {
        ++tests_;
        if (!comm_.test(lane.recv)) break;
        lane.recv = -1;
      }
      if (lane.send >= 0) {
        ++tests_;
        if (!comm_.test(lane.send)) break;
        send_complete(lane);
        lane.send = -1;
      }
      complete_step(lane, tag_ + static_cast<int>(c));
    }
  }
  return done();
}

template <class T>
void NbAllreduce<T>::wait_step() {
  for (std::size_t c = 0; c < lanes_.size(); ++c) {
    Lane& lane = lanes_[c];
    if (lane.done()) continue;
    if (lane.recv >= 0) comm_.wait(lane.recv), lane.recv = -1;
    if (lane.send >= 0) comm_.wait(lane.send), send_complete(lane), lane.send = -1;
    complete_step(lane, tag_ + static_cast<int>(c));
  }
}

template <class T>
void NbAllreduce<T>::finish() {
  while (!done()) wait_step();
}

template class NbAllreduce<float>;
template class NbAllreduce<double>;

}  // namespace wulf
