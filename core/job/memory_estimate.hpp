// How much memory a run takes, estimated from its options before any rank starts, and the
// check that refuses a run this machine cannot hold (`--force` runs it all the same).
//
// The estimate adds up the buffers each rank allocates (the net, the update's state, the
// rank's data as its strategy's DataLayout gives it, the activations of one block or
// evaluation chunk, the collectives' buffers) and the fixed cost of the processes they live
// in. Where the ranks live decides what one machine holds:
//   seq   the run is this process;
//   sim   every simulated rank lives in the one smpirun process: the sum over the ranks,
//         with --numerics off counting what is still allocated (PPT's allgather buffers,
//         scatter's buffers, MPI's temporaries), but not what the simulated ranks share
//         (the net, overlap's and fsdp's flat buffers: SMPI's shared malloc). SMPI maps one
//         file block over and over such memory, so that however large it is this machine
//         holds the block and the page tables of the mappings (8 bytes a page of 4 KiB);
//         the resident set (/usr/bin/time's %M) counts the block once per mapping, the
//         proportional set (/proc/PID/smaps_rollup's Pss) once. Each block is a mapping of
//         the process, which the kernel's vm.max_map_count limits: the launch gives SMPI
//         blocks large enough (smpi_shared_block_bytes);
//   real  one process per rank: all of them on this machine, or the count Open MPI gives a
//         rank started by the user's launcher (OMPI_COMM_WORLD_LOCAL_SIZE); with --hostfile
//         the ranks' hosts are not known here, and only one rank is checked against this
//         machine.
// Ranks of an smpirun take turns until they first block, so what a rank holds only for a
// while (the data as it is loaded, an evaluation chunk) is counted once per process there;
// under mpirun every rank process counts its own. The fixed costs were measured with
// /usr/bin/time on a Release build (ARCHITECTURE.md, "Memory").
#pragma once

#include "util/machine.hpp"

#include "job/train_job.hpp"
#include "train/memory_terms.hpp"
#include "util/json.hpp"

#include <optional>
#include <string>
#include <vector>

namespace wulf {

struct MemoryEstimate {
  std::vector<MemoryPart> parts;
  int ranks = 1;          // in the run
  int ranks_here = 1;     // of them on this machine
  std::string where;      // what the machine holds, for people: "the smpirun process of 196 simulated ranks"
  double per_rank_bytes = 0;  // the rank that needs most, its process's fixed cost apart
  double process_bytes = 0;   // the largest process: the run (seq), smpirun (sim), one rank (real)
  double machine_bytes = 0;   // everything this machine holds for the run (the front end included)
  bool one_process = true;    // the ranks share one process (seq, sim): what passes is counted once
  double shared_bytes = 0;    // the simulated ranks' shared memory (MemoryPart::Kind::shared), mapped
  std::size_t shared_block = 0;  // the file block SMPI maps over it (smpi_shared_block_bytes); 0: none
  const MemoryPart* largest_shared() const;  // the largest shared part (one mapping), or nullptr

  // A part's bytes in machine_bytes, and the part that weighs most there.
  double weight(const MemoryPart& part) const;
  const MemoryPart& biggest() const;
  Json to_json() const;  // the record's config.memory_estimate
};

// SMPI's file block for `shared_bytes` of shared memory (smpi/shared-malloc-blocksize): its
// default, 1 MiB, or the smallest power of two above it that maps them in at most half the
// mappings the kernel allows a process (max_map_count; vm.max_map_count where 0), the other
// half left to the simulator (each simulated rank's stack is two).
std::size_t smpi_shared_block_bytes(double shared_bytes, long long max_map_count = 0);

// Adds up parts for ranks ranks, ranks_here of them on this machine, sim: all in one process.
void total_memory(MemoryEstimate& e, bool one_process);

// The estimate of a resolved `wulf train` run.
MemoryEstimate estimate_memory(const TrainJob& job);

// The estimate of one smpirun of `wulf platform bench`: `what` (pingpong, allreduce, reduce,
// allgather) on np ranks, elements values of value_bytes each per rank (pingpong: one
// message of elements bytes); reduce names wulf's own reduce where it is one.
MemoryEstimate estimate_bench_memory(const std::string& what, int np, std::size_t elements, std::size_t value_bytes,
                                     const std::string& reduce);


// Throws InputError when the estimate exceeds the machine's memory, unless force. The
// message names who (e.g. "wulf platform bench: the allgather of 54912 values on 196
// ranks"; empty: the run), the estimate, the memory, the biggest part and what shrinks it.
void check_memory_fits(const MemoryEstimate& e, const std::optional<MachineMemory>& machine, bool force,
                       const std::string& who);

// Throws InputError when the largest shared part (SMPI reserves each as one mapping of its
// size, however little of it it touches) is more than the kernel grants one mapping (limit:
// mapping_limit()), unless force: the message names the part, its size, the limit and what
// makes it fit (a smaller net, or vm.overcommit_memory 1, under which the kernel grants it).
void check_shared_mapping(const MemoryEstimate& e, const std::optional<MachineMemory>& limit, bool force);

// What a run that ran out of memory all the same (--force past the estimate, or an estimate
// short of the truth) is told: its estimate against this machine's memory, the biggest part
// and what shrinks it, and --precision float only where the run computes in double.
std::string out_of_memory_advice(const TrainJob& job);

// The counts that the run's collectives will pass to MPI (the parameters, PPT's allgather,
// scatter's shares and their sum), each checked against MPI's int before any rank starts
// (mpi_count, comm.hpp); nothing to check under --engine seq.
void check_message_counts(const TrainJob& job);

}  // namespace wulf
