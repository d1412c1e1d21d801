// wulf's own non-blocking allreduce (sum) over point-to-point messages, moved on only at the
// caller's progress points (issue 33): the same algorithm with the same progress points on
// every engine. Open MPI over TCP moves a non-blocking collective only inside its calls,
// where SMPI's network moves data without the rank's help; a collective that is a schedule
// of steps, each posted, tested and added by the rank itself, behaves alike in both.
//
//   rdb   recursive doubling as Open MPI's coll_tuned (algorithm 3) and SMPI's rdb lay it
//         out: ranks beyond the largest power of two fold into their neighbour first, then
//         log2 steps with the partner rank ^ 2^k, then the result goes back. Each value's sum
//         is made in the same order wherever it lies in the buffer, so cutting a gradient
//         into buckets changes no bit of it.
//   ring  reduce-scatter then allgather around the ring r -> r + 1, in p chunks (the first
//         n mod p one value longer), as Open MPI's ring (algorithm 4): 2 (p - 1) steps of
//         n / p values each. Which chunk a value lies in decides the order of its sum.
//   rabenseifner  reduce-scatter by recursive halving, then allgather by recursive doubling,
//         as MPICH's and Open MPI's (coll_tuned algorithm 6) Rabenseifner and Gloo's
//         halving-doubling: ranks beyond the largest power of two q fold in and get the result
//         back as in rdb; the q others exchange half of what they hold with the partner
//         rank ^ 2^k (k = 0, 1, ...), each keeping the half of its lower or upper partner, so
//         that after log2 q steps each holds one of q chunks summed; the same partners in the
//         reverse order then swap what they hold. 2 log2 q steps, 2 (q - 1) / q of the data
//         sent: the ring's bytes in log steps instead of p - 1.
//   hierarchical  within the node, then across the nodes, then within the node again, as
//         Horovod's hierarchical allreduce and NCCL on multi-GPU servers: a ring
//         reduce-scatter among the node's L ranks (each ends holding the node's sum of one
//         chunk, 1/L of the data), a ring allreduce of that chunk among the ranks that hold
//         the same chunk on every node (one per node: each NIC of a node carries 1/L), then a
//         ring allgather within the node. Every node must run the same number of ranks.
//   hierarchical-rabenseifner  the same, with Rabenseifner's allreduce across the nodes
//         instead of the ring: Goyal et al.'s servers (rings within, Gloo's halving-doubling
//         across). 2 log2 of the nodes steps across instead of 2 (nodes - 1).
//   rings  k rings at once, as NCCL's channels: the data cut in k parts, part c reduced by a
//         ring allreduce around ring c, each ring an order of all ranks (the platform's: on a
//         DGX-1 each ring crosses from server to server through a NIC of its own, so the k
//         rings use k NICs where one ring uses one). Each ring is a lane of its own: its
//         steps go on while another's wait.
#pragma once

#include "comm/allreduce_algorithms.hpp"
#include "comm/comm.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace wulf {

std::string_view to_string(NbAlgorithm a);
// The schedule of an algorithm of allreduce_table that has one; other text is refused naming
// those that do (what names the option).
NbAlgorithm parse_nb_algorithm(std::string_view name, std::string_view what);
// Whether the algorithm needs each rank's node (the table's AllreduceNeeds::nodes).
bool is_hierarchical(NbAlgorithm a);
// Whether --allreduce's name is one of wulf's own allreduces that run only as wulf's (the
// table's own_only; the others name the MPI library's there).
bool is_own_blocking_allreduce(std::string_view name);

// Which node each rank runs on (rank r's at r), as hierarchical needs it: the node's index or
// any number that is the same for the ranks of one node. What is wrong with it for `ranks`
// ranks ("ranks 0 and 2 ... 3 ranks on node 1, 2 on node 0: hierarchical needs the same number
// on every node"), or "" when nothing is.
std::string node_layout_fault(std::span<const int> node_of, int ranks);
// The rings of `rings`, each an order of the ranks: what is wrong with them for `ranks` ranks
// ("ring 2 holds rank 5 twice"), or "" when nothing is.
std::string rings_fault(std::span<const std::vector<int>> rings, int ranks);

// Where the ranks are, as the algorithms that need it read it.
struct NbLayout {
  std::vector<int> node_of{};             // hierarchical's: rank r's node at r (node_layout_fault)
  std::vector<std::vector<int>> rings{};  // rings': each ring's ranks in its order (rings_fault)
};

// One step of a rank's schedule: a send of [send_at, + send_n) of the data to `to`, a
// receive of recv_n values from `from` (into the scratch and then added at recv_at, or
// straight into the data at recv_at); -1: no such message.
struct NbStep {
  int to = -1, from = -1;
  std::size_t send_at = 0, send_n = 0, recv_at = 0, recv_n = 0;
  bool add = false;
};
// The schedule of rank `rank` of `ranks` for n values, and the scratch it needs (values).
// node_of: hierarchical's layout (node_layout_fault says nothing of it); unused by the others.
// Not rings, which has a schedule per lane (nb_lanes).
std::vector<NbStep> nb_schedule(NbAlgorithm algorithm, int ranks, int rank, std::size_t n,
                                std::span<const int> node_of = {});
std::size_t nb_scratch_values(const std::vector<NbStep>& steps);
// The ring's schedule alone, at any n >= ranks: its first ranks - 1 steps a reduce-scatter
// after which rank r holds chunk (r + 1) mod ranks summed, its last ranks - 1 the allgather of
// the chunks (comm/shard_schedules.hpp cuts it in those halves).
std::vector<NbStep> nb_ring_schedule(int ranks, int rank, std::size_t n);
// Steps of a schedule over a group, made the world's: the group's ranks (0, 1, ... in part)
// by their world ranks group[0], group[1], ..., their places in the data moved by `at`.
void nb_append_mapped(std::vector<NbStep>& steps, std::span<const NbStep> part, const std::vector<int>& group,
                      std::size_t at);
// The schedules of the rank's lanes, which go on each at its own pace: one for every
// algorithm but rings, one per ring for rings.
std::vector<std::vector<NbStep>> nb_lanes(NbAlgorithm algorithm, int ranks, int rank, std::size_t n,
                                          const NbLayout& layout);

template <class T>
class NbAllreduce {
 public:
  // The sum of n values over comm's ranks, its schedule made once; it starts at start(), as
  // often as wanted (a bucket's allreduce, block after block).
  // add false: nobody reads the sums (--numerics off), the messages move and nothing is added.
  // tag: its messages' (Comm::irecv), lane c's tag + c; one range of lanes(algorithm, layout)
  // tags per allreduce under way at once, within 1 to 32 767.
  // layout: where the ranks of comm are, for hierarchical and rings.
  NbAllreduce(Comm& comm, NbAlgorithm algorithm, std::size_t n, bool add, int tag, const NbLayout& layout = {});
  // Any schedules of steps, one a lane, run the same way: an allreduce's, or sharded data
  // parallelism's allgather and reduce-scatter (comm/shard_schedules.hpp).
  NbAllreduce(Comm& comm, std::vector<std::vector<NbStep>> lanes, bool add, int tag);
  NbAllreduce(const NbAllreduce&) = delete;
  NbAllreduce& operator=(const NbAllreduce&) = delete;

  // The lanes (tags) an allreduce of the algorithm takes: the rings for rings, else 1.
  static std::size_t lanes(NbAlgorithm algorithm, const NbLayout& layout) {
    return algorithm == NbAlgorithm::rings ? std::max<std::size_t>(1, layout.rings.size()) : 1;
  }
  // The values of scratch start needs.
  std::size_t scratch_values() const { return scratch_values_; }
  // Starts the sum of data (n values), posting each lane's first step's messages. data and
  // scratch stay untouched by the caller until done(). The previous sum must be done.
  void start(std::span<T> data, std::span<T> scratch);
  // One progress point: tests each lane's current step's messages (MPI_Test) and, while its
  // step is complete, adds what it received and posts the next. Returns done() (at once when
  // none is under way).
  bool progress();
  // Waits the remaining steps out, a step of each lane in turn.
  void finish();
  // Waits one step of each lane still open (finish's turn).
  void wait_step();
  bool done() const { return open_lanes_ == 0; }
  std::size_t tests() const { return tests_; }  // MPI_Test calls made, over every start
  std::size_t sent() const { return sent_; }    // values this rank has posted to send, over every start
  // The values this rank has put on the wire by now, over every start: every send complete,
  // and of each send under way what it has carried at the rate of this allreduce's last
  // complete send (its values over the seconds from its post to the progress point that saw
  // it complete), at most its own values; before any send is complete, none of one under way.
  double on_wire(double now) const;

 private:
  struct Lane {
    std::vector<NbStep> steps;
    std::size_t step = 0, scratch_at = 0;
    int send = -1, recv = -1;  // the current step's tickets; -1: none pending
    double send_posted = 0;    // when the current step's send was posted (Comm::now)
    bool done() const { return step == steps.size(); }
  };
  void post(Lane& lane, int tag);
  void complete_step(Lane& lane, int tag);
  void send_complete(const Lane& lane);

  Comm& comm_;
  bool add_;
  int tag_;
  std::vector<Lane> lanes_;
  std::size_t scratch_values_ = 0, open_lanes_ = 0;
  std::span<T> data_, scratch_;
  std::size_t tests_ = 0, sent_ = 0, delivered_ = 0;
  double send_rate_ = 0;  // values a second of the last complete send; 0: none yet
};

extern template class NbAllreduce<float>;
extern template class NbAllreduce<double>;

}  // namespace wulf
