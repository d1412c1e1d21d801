// The terms of a run's memory estimate that a strategy decides (job/memory_estimate.hpp adds
// them up): what it holds beside the net, the patterns of one forward and backward pass, its
// own collectives' buffers. A strategy's descriptor (strategy.hpp) fills a StrategyMemory
// from a MemoryShape; the defaults are block's.
#pragma once

#include "data/partition.hpp"

#include <cmath>
#include <span>
#include <string>
#include <vector>

namespace wulf {

struct TrainConfig;
struct NetSpec;

// One buffer of a run, or one kind of buffer, in bytes.
struct MemoryPart {
  enum class Kind {
    held,     // on its rank for the run
    passing,  // held a while (loading, evaluating): once per smpirun process, per rank process under mpirun
    process,  // once per process, not per rank (the simulator itself)
    // --numerics off under smpirun: memory every simulated rank shares, in SMPI's shared
    // malloc (Compute::shared_storage, shared_scratch), counted once in `first`. SMPI maps one
    // file block over it again and again, so this machine holds the block and the mappings'
    // page tables, not the bytes (memory_estimate.hpp).
    shared,
  };
  std::string what;    // for people: "PPT's allgather buffers, (w + 1) x (p + 1) values per rank"
  double first = 0;    // bytes on rank 0
  double each = 0;     // bytes on every other rank
  Kind kind = Kind::held;
  std::string shrink;  // the options that shrink it, e.g. "fewer ranks (--np) or --strategy block"
};

// Adds a part that weighs anything.
inline void add_part(std::vector<MemoryPart>& parts, std::string what, double first, double each,
                     MemoryPart::Kind kind, std::string shrink) {
  if (first > 0 || each > 0) parts.push_back({std::move(what), first, each, kind, std::move(shrink)});
}

// What the estimate reads of a job, as doubles (a product of counts may pass 2^64).
struct MemoryShape {
  int p = 1;               // ranks
  double T = 4;            // bytes of one value of the net
  double w = 0;            // weights
  double n = 0, m = 0;     // training and test patterns
  double in = 0, out = 0;  // inputs and outputs
  double input_bytes = 4;  // bytes of one stored input: a float, or 1 (Dataset::input_bytes)
  double pattern = 0;      // bytes of one stored pattern: its inputs, its float targets and its label
  double units = 0;        // units of the layers after the input, summed
  bool numerics = true;    // the arithmetic is done (the net, the data and the activations exist)
  // What makes the net smaller, for a refusal: an MLP's --hidden, or a layer file's own layers.
  std::string smaller_net = "a smaller net (--hidden)";
  bool sim = false;
  std::string reduce = "default";     // the reduce algorithm (--reduce)
  std::string allreduce = "default";  // the allreduce algorithm (--allreduce)
  int fan_in = 3;                  // four-stage's fan-in
  std::span<const TrainConfig> sessions;  // a table of sessions' configurations (session.hpp)
  const NetSpec* spec = nullptr;  // the net (fsdp's units: its layers' parameters)

  // Rank 0's share of total over parts ranks, and the largest other one's.
  static double share(double total, int parts, bool first) {
    if (parts <= 1) return first ? total : 0;
    if (first) return static_cast<double>(share_of(static_cast<std::size_t>(total), parts, 0).count);
    return std::ceil(total / parts);
  }
  double share(double total, bool first) const { return share(total, p, first); }
  double wT() const { return w * T; }
};

// A strategy's terms. The estimate sets the defaults from the shape before the strategy's
// memory hook changes what differs.
struct StrategyMemory {
  // The update's state, in updates' states (momentum's w values, RPROP's 2 w) on rank 0 and
  // on each other rank, and more bytes of vectors beside them (cg's).
  double updates_first = 1, updates_each = 1;
  double vectors_first = 0, vectors_each = 0;
  bool sums_anywhere = false;          // allreduces the w values with Comm::allreduce_sum_anywhere (SMPI: a spare w)
  std::vector<MemoryPart> beside_net;  // more it holds beside the net (root's threads' nets)
  double columns = 0;                  // patterns of one forward and backward pass of a rank (default: ceil(b / p))
  std::string columns_shrink = "a smaller --block";  // what shrinks them
  double order_patterns = 0;           // patterns in a rank's order of patterns (default: its share, both ranks)
  int holders = 0;                     // ranks the sets are shared over for evaluation (0: all of them)
  std::vector<MemoryPart> collectives; // its own collectives' buffers (ppt's allgather, scatter's gather)
  bool reduces_weights = false;        // allreduces or reduces the w values (the library's temporaries)
  double reduce_scratch = 0;           // buffers of w values those reduces hold (default: the library's and wulf's)
  bool net_storage = true;             // the net's parameters and gradients have memory (fsdp time only: none)
};

// How a strategy holds the model on a modelled device (job/device_memory.hpp): the whole net on
// every rank (sharding "none"), or sharded as FSDP and ZeRO shard it ("full", "grad-op",
// "hybrid": comm/shard_schedules.hpp) in units of unit_layers layers (0: the layer file's
// units) with gather_limit units prefetched (0: no limit); and whether the gradients are also
// copied into buckets (DDP's flat buffers), and what avoids that copy.
struct DeviceHolding {
  std::string sharding = "none";
  int unit_layers = 0;
  std::size_t gather_limit = 0;
  bool bucket_copy = false;
  std::string no_bucket_copy;
};

}  // namespace wulf
