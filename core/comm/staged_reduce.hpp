// Reduces that wulf builds itself from point-to-point messages (--reduce wulf-binomial,
// --reduce four-stage), usable by every strategy through the one Comm seam.
//
// four-stage is seed 002's topology-aware reduce (section 5.2, Figure 5), written for any
// layout of ranks in nodes and groups of nodes rather than for Bunyip's 4 x 24:
//   1. inside each node, its other ranks send to the node's first rank (seed 002: shared
//      memory between the two CPUs of a node; here MPI between ranks of one host);
//   2. groups are paired in order (0 with 1, 2 with 3, ...): node i of the first group of a
//      pair sends to node i of the second through the switch the two groups share;
//   3. in every group the nodes still holding data form sets of fan_in + 1 in node order;
//      the other fan_in nodes of a set send to its first node at once, one per NIC;
//   4. a binomial reduce over the sets' first nodes, the nodes outside any group and the
//      root: LAM's (seed 002's library), one child at a time, as wulf-binomial's.
// Nodes missing from a group (a rank count that does not fill the groups) skip the
// stages that would need them. Where there is no layout, or no rank is in a group, the
// whole reduce is that binomial reduce (wulf-binomial).
//
// Both algorithms accumulate in the ranks' own buffers: after the call the root holds the
// sum and the other ranks' data holds partial sums (Comm::reduce_sum allows it).
#pragma once

#include "util/errors.hpp"
#include "comm/comm.hpp"
#include "comm/tree_collectives.hpp"

#include <array>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace wulf {

// Where each rank sits: its node (ranks of one node share it) and the node's group.
struct ReduceLayout {
  struct Place {
    int group = -1;  // -1: outside the groups (a server)
    int node = 0;    // the node's index within its group (outside: an id of its own)
  };
  std::vector<Place> ranks;  // one per rank, in rank order
  int fan_in = 1;            // senders per root in stage 3: the NICs of a node

  // Two forms (both also name the fan-in, `fan-in=3`; the default is 1):
  //   regular:  groups=4,nodes=24,cpus=2[,outside=2]: `outside` ranks first (nodes of
  //             `cpus` ranks outside any group), then group 0's node 0 (cpus ranks),
  //             node 1, ..., group 1, ... A run of np ranks takes the first np places;
  //   explicit: places=G:N/G:N/... one group:node per rank (G = -1 outside), as
  //             `wulf train --engine sim` derives it from the platform.
  // Throws InputError naming --reduce-layout when the text is malformed or holds fewer
  // places than np.
  static ReduceLayout parse(const std::string& text, int np);
  std::string to_string() const;  // the explicit form
  bool has_groups() const;
};

// The time of each stage of the last four-stage reduce, on this rank's clock: the end of
// each stage on this rank, from the call's start.
struct StageTimes {
  std::array<double, 4> end_s{};
};

// The reduce algorithms on top of a communicator; scratch buffers are kept between calls.
class PointToPointReduce {
 public:
  // Memory of at least the given bytes that the receives of unread data may use (nullptr:
  // none), e.g. the simulated ranks' shared memory (Compute::shared_scratch).
  using ScratchSource = std::function<void*(std::size_t bytes)>;
  // name: a --reduce algorithm of is_point_to_point_reduce: wulf-binomial, four-stage, or a
  // tree of Open MPI's (own_reduce_tree: chain, pipeline, binary, binomial, unsegmented).
  PointToPointReduce(Comm& comm, const std::string& name, ReduceLayout layout, ScratchSource scratch = {});
  ~PointToPointReduce();

  void reduce_sum(std::span<float> data, int root);
  void reduce_sum(std::span<double> data, int root);
  const StageTimes& last_stages() const { return stages_; }

  // Sums into [begin, begin + bytes) are never read (Comm::set_unread_storage): a reduce
  // of data inside receives into the scratch source's memory and adds nothing. The
  // messages and their times are the same; a time-only run of thousands of ranks holds no
  // scratch of its own per rank.
  void set_unread_storage(const void* begin, std::size_t bytes) { unread_.set(begin, bytes); }
  // Whether four-stage fell back to wulf-binomial (no rank in a group).
  bool falls_back() const;

 private:
  template <class T>
  void reduce(std::span<T> data, int root);
  template <class T>
  void binomial(Comm& comm, std::span<T> data, int root);
  template <class T>
  void four_stage(std::span<T> data, int root);
  // Room for n values to receive into, and whether the data's sums are unread (then the
  // room is the source's and nothing is added).
  template <class T>
  T* scratch(std::span<const T> data, std::size_t n, bool& unread);
  struct RootPlan;  // who sends to whom, and stage 4's communicator (the .cpp)
  const RootPlan& plan_for(int root);

  Comm& comm_;
  bool four_stage_;   // four-stage, else:
  const Tree* tree_;  // Open MPI's tree (tree_reduce_sum), or nullptr: wulf-binomial
  ReduceLayout layout_;
  StageTimes stages_;
  std::map<int, std::unique_ptr<RootPlan>> plans_;  // per root
  std::vector<float> scratch_f_;
  std::vector<double> scratch_d_;
  ScratchSource unread_scratch_;
  UnreadRange unread_;
};

// The algorithms of --reduce that wulf makes itself: its own (wulf-binomial, four-stage)
// and Open MPI's that SMPI has no equal of (chain, pipeline, binary, binomial:
// comm/tree_collectives); the others are the MPI library's.
bool is_point_to_point_reduce(const std::string& name);

}  // namespace wulf
