// The platform benchmark's measurements, run by every rank of a parallel job
// (`wulf-rank-sim bench ...`, started by `wulf platform bench`): a ping-pong between ranks
// 0 and 1, and collective calls, timed with the engine's clock. Under mpirun also the batch
// gradient and its reduce (`wulf-rank-real bench --what gradient`, gradient_bench.hpp).
#pragma once

#include "util/errors.hpp"
#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "util/json.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace wulf {

struct CommBenchConfig {
  std::string what;                  // "pingpong", a collective (allreduce, reduce, bcast, allgather, gather) or "gradient"
  std::vector<std::size_t> sizes;    // pingpong: bytes; collectives: elements; gradient: patterns in all
  bool doubles = true;               // collectives: element type (8 or 4 bytes)
  int repeat = 3;
  bool back_to_back = false;         // collectives: the repeats in a row, one barrier before the first
  double gap_s = 0;                  // back_to_back: compute charged before each call (platform seconds), as a
                                     // training's between its allreduces
  bool unread = false;               // collectives: the sums are never read (Comm::set_unread_storage)
  double bw_scale = 1.0;   // what-if: links' bandwidth and latency times these
  double lat_scale = 1.0;
  double dilation = 1.0;   // testbed: wall seconds per platform second (times are reported over it)
  // wulf's own algorithms (comm/own_comm.hpp's OwnCollectives): a reduce (wulf-binomial,
  // four-stage, chain, pipeline, binary), a bcast's tree, the linear-sync gather; others
  // leave the call to the library.
  std::string reduce = "default";
  std::string reduce_layout;       // four-stage: ReduceLayout's text (empty: none)
  std::string bcast = "default";
  std::string gather = "default";
  // The allreduce: hierarchical, hierarchical-rabenseifner and rings are wulf's own
  // (comm/nb_allreduce), over rank_nodes (rank r's node at r) or rank_rings (each ring's ranks
  // in order); anything else leaves it to the library, which runs what the engine was told.
  std::string allreduce = "default";
  // allreduce redbcast as reduce to rank 0 then bcast from rank 0, each the algorithm named
  // above (wulf's own or the library's, which the engine was told), in place of the library's
  // own redbcast: under smpirun, whose redbcast runs SMPI's own reduce and bcast
  // (OwnCollectives::composed_redbcast).
  bool composed_redbcast = false;
  std::vector<int> rank_nodes;
  std::vector<std::vector<int>> rank_rings;
  bool check = false;              // reduce, bcast, allgather, gather: check the values exactly instead of timing
  static constexpr int every_root = -1;
  int root = 0;                    // the root of the check (every_root: each rank in turn)
  std::string net = "jocr";  // gradient: jocr or digits
  int sgemm_n = 1024;        // gradient: the n x n SGEMM it is compared with
};

// The benchmark as the front end hands it to the rank program (`bench --job-text JSON`), every
// field named as in CommBenchConfig; the reader checks it (validate) and throws InputError
// naming source and the field.
Json comm_bench_json(const CommBenchConfig& config);
CommBenchConfig comm_bench_from_json(const Json& j, const std::string& source);
// Throws InputError for a benchmark that cannot run: an unknown what or net, no sizes, a
// scale, dilation, repeat or SGEMM size out of range.
void validate(const CommBenchConfig& config);

// Runs the measurements on comm's ranks; rank 0 prints one JSON object per size to out:
// {"what": ..., "np": p, "size": s, "bytes": b, "time_s": t}. For a collective, t is the
// mean over the repeats of the time from a barrier to the last rank's return; with
// back_to_back, the time from one barrier to the last rank's return from the last of the
// repeats, which follow one another with no barrier between them (as in training), over
// the repeats, less gap_s (the compute charged before each call); the row then also holds
// "calls_s", rank 0's time in each call in turn (from its start to its return), whose
// sequence shows a cycle the ranks fall into.
// compute charges the platform's fixed cost of each collective call (charge_collective).
// With check, a reduce, bcast, allgather or gather of whole numbers ((rank + 1) * (i % 13 + 1), exact
// in float) to or from root is compared with what it must give; rank 0 prints {"check":
// what, ..., "ok": true|false} and the call throws when a value differs.
// With a four-stage reducer (the comm's own), reduce rows also carry "stages_s": the time
// at which the last rank ended each of the four stages.
class PointToPointReduce;
void run_comm_bench(const CommBenchConfig& config, Comm& comm, Compute& compute, std::ostream& out,
                    const PointToPointReduce* reducer = nullptr);
// --what gradient runs run_gradient_bench instead (its own JSON fields).

// The rows rank 0 printed, from the ranks' whole output: every line that is a JSON object
// (the MPI's and the simulator's own lines are skipped); source names the run in errors.
std::vector<Json> read_bench_rows(const std::string& output, const std::string& source);

}  // namespace wulf
