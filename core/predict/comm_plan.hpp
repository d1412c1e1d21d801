// The steps of wulf's own collectives as the models count them (issue 65): each step is the
// messages every rank sends at once (a pattern: from rank, to rank) and the bytes of the
// longest of them. The algorithms are those comm/nb_allreduce and comm/shard_schedules lay out
// rank by rank (ring, rdb, rabenseifner, hierarchical, hierarchical-rabenseifner, rings, and
// the ring's two halves, the allgather and the reduce-scatter), here in closed form: a ring of
// p ranks is one pattern of p messages taken 2 (p - 1) times, not p schedules of 2 (p - 1)
// steps, so that 100 000 ranks cost what their patterns hold. tests/test_comm_plan checks every
// plan against those schedules, step by step.
//
// The model takes every step as a barrier: it ends when its slowest message does, and the next
// starts then. The ranks of a ring, recursive doubling at a power of two and the phases of the
// hierarchical allreduce run so (each waits for its neighbour's message of the same step);
// the lanes of rings run each at its own pace, and are counted here as one step of all their
// messages at once (their rings alike, their steps alike).
#pragma once

#include "comm/nb_allreduce.hpp"
#include "comm/shard_schedules.hpp"

#include <cstddef>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wulf {

using Message = std::pair<int, int>;   // from rank, to rank
using Pattern = std::vector<Message>;  // a step's messages

// `count` steps alike: the pattern's messages, each of at most `bytes`.
struct PlanPhase {
  std::size_t pattern = 0;
  std::size_t count = 0;
  double bytes = 0;
};

// A collective as the model runs it: its steps, phase by phase.
struct CommPlan {
  std::vector<PlanPhase> phases;
  std::size_t steps() const;
  double bytes() const;  // what one rank sends at most over all steps
};

// The distinct patterns of a model's plans, each kept once (a ring of 100 000 ranks is
// 100 000 messages, whichever bucket runs it).
class PatternBook {
 public:
  // The patterns of `ranks` ranks placed as layout says (the ranks' nodes for hierarchical and
  // hybrid sharding, the rings for rings), as nb_lanes and shard_plan take them.
  explicit PatternBook(int ranks, NbLayout layout = {}) : ranks_(ranks), layout_(std::move(layout)) {}
  int ranks() const { return ranks_; }
  const NbLayout& layout() const { return layout_; }
  // The index of the pattern, added if new (the same messages in the same order).
  std::size_t intern(Pattern messages);
  // A plan made before under the same key (the collective, its values), or nullptr; and the
  // plan to keep under it.
  const CommPlan* made(std::size_t key) const;
  void keep(std::size_t key, const CommPlan& plan);
  const Pattern& at(std::size_t i) const { return patterns_[i]; }
  std::size_t size() const { return patterns_.size(); }
  // Every ordered pair of ranks a message of some pattern joins, both ways (a message's
  // acknowledgements go back), sorted, each once.
  std::vector<Message> pairs() const;

 private:
  int ranks_;
  NbLayout layout_;
  std::vector<Pattern> patterns_;
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash_;
  std::unordered_map<std::size_t, CommPlan> plans_;
};

// The allreduce of n values of value_bytes on the book's ranks by the algorithm, as nb_lanes
// lays it out (its fallbacks to recursive doubling included).
CommPlan allreduce_plan(PatternBook& book, NbAlgorithm algorithm, std::size_t n, std::size_t value_bytes);

// One unit of sharded data parallelism as comm/shard_schedules lays it out (shard_plan): the
// gather of its shards and the reduction of its gradients on the book's ranks, for `values`
// values (as sent) of element_bytes. full, grad-op: the ring's halves over all ranks, around
// the one ring in rank order or, where the book's layout has rings, k rings at once, each shard
// cut in k parts; hybrid: within the nodes (the layout's), then the shard's ring allreduce
// across them; none: a ring allreduce of the unit.
struct ShardComm {
  CommPlan gather, reduce;
  std::size_t padded = 0, shard = 0;  // the unit's values padded, and a rank's shard of them
};
ShardComm shard_comm_plan(PatternBook& book, Sharding sharding, std::size_t values, std::size_t element_bytes);

}  // namespace wulf
