// The machine-readable record every run writes (DESIGN.md, "Result record"): the keys
// config, history, final and phases, plus the software versions under config.versions.
#pragma once

#include "util/json.hpp"
#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "train/trainer.hpp"

#include <array>
#include <span>
#include <string>
#include <vector>

namespace wulf {

Json versions_json();
Json evaluation_json(const Evaluation& e);
// history, final and phases of a run, added to record; per_rank: every rank's phase times
// (rank 0's are r.phases too).
void add_train_result(Json& record, const TrainResult& r, std::size_t parameters, ErrorMetric metric,
                      const std::vector<PhaseTimes>& per_rank);

// Seed 002 section 7.2's flop rate: "the total flops that contribute to feed forward value
// and gradient calculations divided by the wall clock time" -- the forward and backward
// flops of every training pattern on every rank over the run's time (wall on seq and real,
// simulated on sim), counted as the kernels perform them (KernelFlops), and beside it the
// 6w per pattern of seed 002's convention. Updates, test passes and the reduce are not
// counted. With a machine cost, section 7.3's price/performance: USD cents per MFlop/s of
// the performed rate.
struct Performance {
  KernelFlops per_pattern;
  double flops = 0;     // performed
  double flops_6w = 0;  // 6w per pattern
  double seconds = 0;
  double flops_per_s = 0;
  double cents_per_mflops = 0;  // 0 without a machine cost
};
Performance training_performance(const std::vector<PhaseTimes>& per_rank, const KernelFlops& flops, double seconds,
                                 double machine_cost_usd);
// The record's "performance" object; machine_cost_usd: 0 for no price/performance.
Json performance_json(const Performance& p, std::size_t ranks, double machine_cost_usd);

// One rank's phase times as a record object.
Json phases_json(const PhaseTimes& p);
// Every rank's phase times, gathered at rank 0 (empty elsewhere): a collective.
std::vector<PhaseTimes> gather_phases(Comm& comm, const PhaseTimes& mine);

// Every rank's compute ledger (Compute::ledger), gathered at rank 0 (empty elsewhere): a
// collective, for runs whose kernels are padded (Compute::pads).
std::vector<ComputeLedger> gather_ledgers(Comm& comm, const ComputeLedger& mine);

// The kernels of a padded run over all ranks, and the one that overran its budget most.
struct BudgetSummary {
  long long kernels = 0, overruns = 0;
  double worst_ratio = 0;  // real seconds over budget wall seconds, the largest of any kernel
  int worst_rank = 0;
  std::string worst_what;  // its phase, or iteration_overhead / collective_overhead
};
BudgetSummary summarize_budget(const std::vector<ComputeLedger>& per_rank);
// One rank's ledger as a record object: per phase its kernels, real_s (the arithmetic, wall
// seconds), charged_s (platform seconds), charged_wall_s (charged_s x dilation: the budget),
// overruns and worst_ratio; and the totals.
Json ledger_json(const ComputeLedger& ledger, double dilation);
// A padded run's compute budget in the record: each rank's ledger under
// phases.ranks[r].compute_budget, the summary under compute_budget, and dilation_too_small
// (some kernel's arithmetic took longer than its budget). Returns the warning to print, or
// "" where every kernel kept to its budget. The warning blames the testbed's dilation, or on
// --engine real (no dilation) the profile.
std::string add_compute_budget(Json& record, const std::vector<ComputeLedger>& per_rank, double dilation,
                               const std::string& engine);

}  // namespace wulf
