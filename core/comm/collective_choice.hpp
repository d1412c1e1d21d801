// Which algorithm each collective of a run uses, named once for every engine.
//
// `default` used to mean each engine's own choice: Open MPI 4.1's tuned component picks by
// ranks and message size, SMPI by rules of its own (a reduce then a broadcast for the
// allreduce). On Bat Cave that made the simulation 2 to 5 times slower than the testbed's
// real Open MPI (issue 32). Now `default` resolves, before any rank starts, to the algorithm
// Open MPI 4.1's fixed decision rules choose for the run's ranks and message size
// (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c of Open MPI 4.1.4; the commutative
// branch for the reductions: wulf's are sums), and that algorithm is forced on every
// engine: on Open MPI through coll_tuned's dynamic rules, on SMPI through smpi/<collective>
// where SimGrid 3.32 has the same algorithm (tree, segmentation), else as wulf's own
// point-to-point version on both (comm/tree_collectives). The record names it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

enum class Collective { allreduce, reduce, bcast, allgather, gather };
// "allreduce", "reduce", ...: the name of wulf's option, of SMPI's setting and of Open MPI's
// coll_tuned parameters.
std::string_view to_string(Collective c);

// An algorithm of one collective: wulf's name, Open MPI 4.1's coll_tuned number
// (coll_tuned_<collective>_algorithm; 0: none, wulf's own reduces) and SMPI's equal
// (smpi/<collective>:NAME; empty: none, and wulf's own point-to-point version of Open MPI's
// algorithm runs on both engines).
struct CollectiveAlgorithm {
  std::string_view name;
  int tuned_id = 0;
  std::string_view smpi;
  bool wulfs_own() const { return smpi.empty(); }
};

// The algorithms of c wulf runs, each once.
std::span<const CollectiveAlgorithm> collective_algorithms(Collective c);
// The algorithm of c of that name; nullptr for any other (and for `default`).
const CollectiveAlgorithm* find_algorithm(Collective c, std::string_view name);

// Open MPI 4.1's fixed choice for c on `ranks` ranks, `bytes` the message: the whole vector
// of a reduction or broadcast, each rank's block of a gather or allgather (the sizes Open
// MPI's rules read). Where the rule's algorithm itself runs another for these ranks or this
// size, that other one: the allreduce's segmented ring without a segment size is the ring;
// the reduce's Rabenseifner's, chosen only below 8 bytes, has fewer values than ranks and
// runs the linear reduce; the allgather's recursive doubling on ranks that are not a power
// of two runs Bruck's, its neighbour exchange on odd ranks the ring. Throws InputError
// naming c, the ranks, the bytes and the algorithm where wulf cannot run it on every
// engine (Open MPI's rules name such only for more than 64 ranks).
const CollectiveAlgorithm& open_mpi_choice(Collective c, long long ranks, std::size_t bytes);

// The algorithm a run uses for c: `choice` as given (--reduce ...), or where it is
// "default", Open MPI 4.1's choice for `ranks` and `bytes`. Throws InputError for an
// unknown name.
struct ResolvedCollective {
  std::string name;  // find_algorithm finds it
  bool by_default = false;
  // How it was chosen, for records and the plan: "Open MPI 4.1's choice for 4 ranks and
  // 134144 bytes" or "--reduce".
  std::string chosen_by;
};
ResolvedCollective resolve_collective(Collective c, std::string_view choice, long long ranks, std::size_t bytes);

// mpirun's --mca settings that force a on Open MPI's coll_tuned as its fixed rules run it:
// the algorithm's number, and for chains their fanout of one (the fixed rules pass fanout 0,
// which Open MPI takes as 1, where a forced chain otherwise gets coll_tuned's default 4),
// segment size 0 (coll_tuned's default: unsegmented, as the fixed rules pass it). Empty for
// wulf's own reduces (tuned_id 0). coll_tuned_use_dynamic_rules is the caller's.
std::vector<std::string> open_mpi_forcing(Collective c, const CollectiveAlgorithm& a);

}  // namespace wulf
