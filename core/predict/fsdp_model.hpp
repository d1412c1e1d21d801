// The model of --strategy fsdp (issue 65): one update of one rank as train/strategies/fsdp.cpp
// runs it, its collectives' steps moved through time as the overlap model moves its buckets'
// (predict/pipeline.hpp), every rank alike.
//
// The forward pass a layer at a time: before a unit's first layer its gather is issued (its
// collective call charged) and waited out, and with forward prefetch the next unit's issued
// too; each layer's part in its slices, a progress point between slices and after the layer;
// after a unit's last layer its parameters are freed (full, hybrid; not the last unit's). The
// backward pass from the output: before a unit's last layer it is gathered where it was freed,
// and with backward prefetch the unit before it issued; after its first layer its gradients'
// reduction is issued. Prefetches wait while the gather limit's gathers are issued and not yet
// waited for. At a progress point every collective under way whose step is complete posts its
// next (--shard-stream many), or only the first of the one stream, the next starting once it
// is done (one). After the backward pass the reductions are waited out in order; then the
// shard's update. The iteration adds its test share and its errors' sums, as overlap's.
//
// What it leaves out: ranks that are not alike, and every cost beyond the links and the
// charged compute, as the overlap model (predict/overlap_model.hpp).
#pragma once

#include "comm/shard_schedules.hpp"
#include "predict/comm_plan.hpp"
#include "predict/overlap_model.hpp"

#include <cstddef>
#include <vector>

namespace wulf {

// What one rank computes in one update, seconds; per layer l at l - 1.
struct FsdpWork {
  std::vector<double> forward_s, backward_s, recompute_s;  // recompute: the forward again before the backward
  std::vector<int> forward_slices, backward_slices;        // each part in that many slices (at least 1)
  double update_s = 0;                                     // the shard's update
  double call_s = 0;                                       // a collective's call
  double test_s = 0;                                       // per iteration, as OverlapWork's
  int sums = 2;
};

// A unit: its layers, first to last, and its two collectives.
struct FsdpUnit {
  int first = 1, last = 1;
  CommPlan gather, reduce;
};

struct FsdpOptions {
  Sharding sharding = Sharding::full;
  bool forward_prefetch = false, backward_prefetch = true;
  std::size_t gather_limit = 2;  // 0: none
  bool one_stream = false;
};

struct FsdpPrediction {
  double update_s = 0;        // one update, its forward pass to its shard stepped
  double test_s = 0;          // the iteration's test share and its errors' sums
  double forward_end_s = 0, backward_end_s = 0;
  double gather_wait_s = 0;   // waited for gathers (in the passes)
  double reduce_wait_s = 0;   // waited for reductions after the backward pass
  double comm_alone_s = 0;    // every collective's steps one after another, calls included
  std::size_t gathers = 0, reductions = 0;
  int progress_points = 0;
  // Each unit's last gather and its reduction: issued and done, from the update's start (-1:
  // none in this update).
  std::vector<double> gather_issued_s, gather_done_s, reduce_issued_s, reduce_done_s;
  double iteration_s(double updates = 1) const { return updates * update_s + test_s; }
};

// patterns: each pattern's step alone (pattern_networks) for the plans of units and sums;
// ranks: 1 runs no collective.
FsdpPrediction predict_fsdp(const FsdpWork& work, const std::vector<FsdpUnit>& units, const FsdpOptions& options,
                            const std::vector<StepNetwork>& patterns, const CommPlan& sums, int ranks);

}  // namespace wulf
