// Sharded data parallelism's collectives (PyTorch FSDP, DeepSpeed ZeRO; --strategy fsdp) as
// schedules of wulf's own non-blocking steps (comm/nb_allreduce.hpp), the same on every engine.
//
// A unit (a group of consecutive layers) has its parameters flattened into one buffer, padded
// with zeros to a multiple of the ranks it is sharded over, as FSDP's FlatParameter is, and cut
// into that many equal shards. A rank keeps one shard of the parameters, of the gradients and
// of the optimizer's state. Before the unit computes, the allgather brings every rank's shard
// into the padded buffer; once its gradients are made, the reduce-scatter leaves each rank the
// sum over the ranks of its own shard. Both are the two halves of the ring allreduce (Open MPI's
// ring, coll_tuned 4; NCCL's ring reduce-scatter and allgather): p - 1 steps of one shard each.
// Or, given rings (the hosts' wulf:rings, as the rings allreduce takes them), k rings at once
// as NCCL's channels run them: each shard cut in k parts, part c gathered and reduce-scattered
// around ring c, each ring a lane of its own (NbAllreduce); on a DGX each ring leaves a server
// through a NIC of its own, so k rings use k NICs where the one ring uses one.
//
//   full     FULL_SHARD, ZeRO-3: sharded over all ranks; the gathered parameters are freed
//            after the unit's forward and gathered again for its backward;
//   grad-op  SHARD_GRAD_OP, ZeRO-2: sharded over all ranks; the gathered parameters are kept
//            from the forward to the backward and freed after it;
//   hybrid   HYBRID_SHARD: full's, sharded over the ranks of a node (the hosts' wulf:node, as the
//            hierarchical allreduce's); each shard's gradient is then allreduced (a ring) across
//            the ranks that hold the same shard on the other nodes;
//   none     NO_SHARD, ZeRO-1's communication (DDP's): nothing sharded, the gradients
//            allreduced (a ring) over all ranks.
#pragma once

#include "comm/nb_allreduce.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace wulf {

enum class Sharding { full, grad_op, hybrid, none };
// Their names, in that order: the option's values and its errors read them.
inline constexpr std::array<std::string_view, 4> sharding_names{"full", "grad-op", "hybrid", "none"};
std::optional<Sharding> sharding_named(std::string_view name);
// Whether the gathered parameters are freed after the forward (full, and hybrid, which is
// full within a node), or kept until the backward.
inline bool frees_after_forward(Sharding s) { return s == Sharding::full || s == Sharding::hybrid; }
// Whether a rank holds only a shard of the parameters between iterations (all but none).
inline bool shards_parameters(Sharding s) { return s != Sharding::none; }

// One unit of `values` parameters as rank `rank` of `ranks` holds and moves it.
struct ShardPlan {
  std::size_t values = 0;    // the unit's parameters
  std::size_t padded = 0;    // values rounded up to a multiple of the shard group's ranks
  std::size_t shard = 0;     // padded / the group's ranks: what this rank keeps
  std::size_t owned_at = 0;  // where its shard lies in the padded buffer
  int group = 1;             // the ranks it is sharded over
  // The allgather of the shards into the padded buffer (no steps: nothing is sharded), and
  // the gradients' reduction: reduce-scatter into the shard (hybrid: then its allreduce across
  // the nodes; none: an allreduce of the whole unit). Each a schedule per lane: one, or one a
  // ring.
  std::vector<std::vector<NbStep>> gather, reduce;
};

// The plan of a unit. node_of: each rank's node (hybrid's; node_layout_fault says nothing of
// it), unused by the others. rings: empty for the one ring in rank order, else the rings, each
// an order of all ranks (rings_fault), for full and grad-op. Throws std::invalid_argument for
// hybrid on a faulty layout, for faulty rings, and for rings with hybrid or none.
ShardPlan shard_plan(Sharding sharding, int ranks, int rank, std::size_t values, std::span<const int> node_of = {},
                     std::span<const std::vector<int>> rings = {});

}  // namespace wulf
