// The machine-readable record every run writes (DESIGN.md, "Result record"): the keys
// config, history, final and phases, plus the software versions under config.versions.
#pragma once

#include "util/json.hpp"
#include "comm/comm.hpp"
#include "train/trainer.hpp"

#include <array>
#include <span>
#include <vector>

namespace wulf {

Json versions_json();
Json evaluation_json(const Evaluation& e);
// history, final and phases of a run, added to record; per_rank: every rank's phase times
// (rank 0's are r.phases too).
void add_train_result(Json& record, const TrainResult& r, std::size_t parameters, ErrorMetric metric,
                      const std::vector<PhaseTimes>& per_rank);

// Seed 002 section 7.2's flop rate: "the total flops that contribute to feed forward value
// and gradient calculations divided by the wall clock time" -- the forward (2w) and backward
// (4w) flops of every training pattern on every rank over the run's time (wall on seq and
// real, simulated on sim). Updates, test passes and the reduce are not counted. With a
// machine cost, section 7.3's price/performance: USD cents per MFlop/s of that rate.
struct Performance {
  double flops = 0;
  double seconds = 0;
  double flops_per_s = 0;
  double cents_per_mflops = 0;  // 0 without a machine cost
};
Performance training_performance(const std::vector<PhaseTimes>& per_rank, std::size_t weights, double seconds,
                                 double machine_cost_usd);
// The record's "performance" object; machine_cost_usd: 0 for no price/performance.
Json performance_json(const Performance& p, std::size_t ranks, double machine_cost_usd);

// One rank's phase times as a record object.
Json phases_json(const PhaseTimes& p);
// Every rank's phase times, gathered at rank 0 (empty elsewhere): a collective.
std::vector<PhaseTimes> gather_phases(Comm& comm, const PhaseTimes& mine);

}  // namespace wulf
