// Open MPI 4.1's collectives that SMPI 3.32 has no equal of, made of point-to-point messages
// so that both engines run literally the same messages (issue 32). Each is the algorithm as
// Open MPI's fixed rules run it: the whole message (segment size 0), chains of one.
#pragma once

#include "comm/comm.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace wulf {

// The trees of ompi/mca/coll/base/coll_base_topo.c, over ranks shifted so the root is 0:
//   chain        v - 1 -> v -> v + 1 (a chain of one, the pipeline);
//   binary       Open MPI's level-order tree: v at level L (2^L - 1 <= v < 2^(L+1) - 1) has
//                the children v + 2^L and v + 2^(L+1);
//   binomial     the children v + 2^k for every 2^k above v, the parent v less its highest bit;
//   in_order_binomial  the children v + 2^k for every 2^k below v's lowest bit, the parent v
//                less its lowest bit (the reduce's and gather's binomial tree);
//   knomial      radix 4: the children v + j 4^k (j = 1..3) for every 4^k that divides v,
//                largest first.
enum class Tree { chain, binary, binomial, in_order_binomial, knomial };

struct TreeLinks {
  int parent = -1;            // -1 at the root
  std::vector<int> children;  // in the order Open MPI sends to or receives from them
};
TreeLinks tree_links(Tree tree, int rank, int size, int root);

// The tree of a --bcast or --reduce algorithm wulf runs itself: bcast chain, pipeline,
// bintree, binomial, knomial; reduce chain, pipeline, binary, binomial (the in-order tree).
// nullptr for the others.
const Tree* own_bcast_tree(std::string_view name);
const Tree* own_reduce_tree(std::string_view name);
// Whether --bcast's algorithm is wulf's own: a tree's or scatter-allgather.
bool is_own_bcast(std::string_view name);
// Whether --gather's algorithm is wulf's own (linear-sync).
bool is_own_gather(std::string_view name);

// data[i] += from[i] for every i, vectorised (Eigen): the sum of wulf's own reduces.
template <class T>
void add_into(std::span<T> data, const T* from);

// Open MPI's generic broadcast with one segment: a rank receives data from its parent, then
// sends it to all its children at once.
template <class T>
void tree_bcast(Comm& comm, std::span<T> data, int root, Tree tree);

// Open MPI's broadcast by a binomial scatter of p blocks of ceil(n / p) values, then a
// recursive doubling allgather of them (on ranks that are not a power of two, a rank whose
// partner is missing gets its data by recursive halving); the messages' sizes are those
// that arrive, as Open MPI reads them from each receive's status. Fewer values than ranks:
// the linear broadcast (the root sends to every rank at once).
template <class T>
void scatter_allgather_bcast(Comm& comm, std::span<T> data, int root);

// Open MPI's generic reduce with one segment: a rank receives from its children in order,
// the next receive posted before it waits for the last one, adds each into data, then sends
// data to its parent. room holds 2 x data.size() values (the two receives in flight);
// add: whether to add what arrives (false: sums nobody reads, Comm::set_unread_storage).
// Afterwards the root's data holds the sum, the others' partial sums.
template <class T>
void tree_reduce_sum(Comm& comm, std::span<T> data, int root, Tree tree, T* room, bool add);

// Open MPI's split binary tree broadcast, unsegmented (the fixed rules' segment size 0): the
// data in two halves (the first the larger by one where n is odd); the root sends the first
// half down its left subtree (odd shifted ranks) and the second down its right one (even),
// each node forwarding its half to its children one after the other; then each rank swaps
// halves with its twin in the other subtree (odd v with v + 1), and on an even number of
// ranks the root sends the second half to the last rank, whose twin it would be. Fewer than
// 2 values: the chain.
template <class T>
void split_bintree_bcast(Comm& comm, std::span<T> data, int root);

// Open MPI's linear gather with synchronisation, unsegmented: the root, rank by rank in rank
// order, posts the receive of the block, sends an empty message that lets the rank send, and
// waits for the block; each rank then sends an empty second part. recv as Comm::gather's.
template <class T>
void linear_sync_gather(Comm& comm, std::span<const T> send, std::span<T> recv, int root);

}  // namespace wulf
