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
#pragma once

#include "comm/comm.hpp"

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace wulf {

enum class NbAlgorithm { rdb, ring, rabenseifner, hierarchical, hierarchical_rabenseifner };
std::string_view to_string(NbAlgorithm a);
// "rdb", "ring", "rabenseifner", "hierarchical" or "hierarchical-rabenseifner"; other text is
// refused naming them (what names the option).
NbAlgorithm parse_nb_algorithm(std::string_view name, std::string_view what);
// Whether the algorithm needs each rank's node (hierarchical and hierarchical-rabenseifner).
bool is_hierarchical(NbAlgorithm a);
// Whether --allreduce's name is one of wulf's own allreduces that run only as wulf's (the
// hierarchical ones; rdb, ring and rabenseifner name the MPI library's there).
bool is_own_blocking_allreduce(std::string_view name);

// Which node each rank runs on (rank r's at r), as hierarchical needs it: the node's index or
// any number that is the same for the ranks of one node. What is wrong with it for `ranks`
// ranks ("ranks 0 and 2 ... 3 ranks on node 1, 2 on node 0: hierarchical needs the same number
// on every node"), or "" when nothing is.
std::string node_layout_fault(std::span<const int> node_of, int ranks);

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
std::vector<NbStep> nb_schedule(NbAlgorithm algorithm, int ranks, int rank, std::size_t n,
                                std::span<const int> node_of = {});
std::size_t nb_scratch_values(const std::vector<NbStep>& steps);

template <class T>
class NbAllreduce {
 public:
  // The sum of n values over comm's ranks, its schedule made once; it starts at start(), as
  // often as wanted (a bucket's allreduce, block after block).
  // add false: nobody reads the sums (--numerics off), the messages move and nothing is added.
  // tag: its messages' (Comm::irecv), one per allreduce under way at once, from 1 to 32 767.
  // node_of: hierarchical's layout, one entry per rank of comm.
  NbAllreduce(Comm& comm, NbAlgorithm algorithm, std::size_t n, bool add, int tag, std::span<const int> node_of = {});
  NbAllreduce(const NbAllreduce&) = delete;
  NbAllreduce& operator=(const NbAllreduce&) = delete;

  // The values of scratch start needs.
  std::size_t scratch_values() const { return nb_scratch_values(steps_); }
  // Starts the sum of data (n values), posting the first step's messages. data and scratch
  // stay untouched by the caller until done(). The previous sum must be done.
  void start(std::span<T> data, std::span<T> scratch);
  // One progress point: tests the current step's messages (MPI_Test) and, while a step is
  // complete, adds what it received and posts the next. Returns done() (at once when none
  // is under way).
  bool progress();
  // Waits the remaining steps out, in order.
  void finish();
  bool done() const { return step_ == steps_.size(); }
  std::size_t tests() const { return tests_; }  // MPI_Test calls made, over every start

 private:
  void post();
  void complete_step();

  Comm& comm_;
  bool add_;
  int tag_;
  std::vector<NbStep> steps_;
  std::span<T> data_, scratch_;
  std::size_t step_;
  int send_ticket_ = -1, recv_ticket_ = -1;  // -1: none pending
  std::size_t tests_ = 0;
};

extern template class NbAllreduce<float>;
extern template class NbAllreduce<double>;

}  // namespace wulf
