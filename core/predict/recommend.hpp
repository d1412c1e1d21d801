// The search behind `wulf recommend` (seed 001 names it as future work): which
// strategy, number of processors p and block size b (and learning rate eta, momentum alpha,
// averaging interval a, the allreduce algorithm and overlap's bucket size) reach a target
// error soonest on a platform.
//
// Time to the target = iterations to the target x time per iteration. Seed 000's lesson is
// that the two pull apart: a larger b makes an iteration cheaper on more processors, but
// needs more iterations. The search measures each factor where it is cheap:
//   - time per iteration: a simulation with --numerics off (no arithmetic, one iteration:
//     every iteration charges the same) of every (strategy, p, b, a) on the platform;
//   - iterations to the target: one sequential run with real arithmetic per (b, eta, alpha).
//     Training-set parallelism (block) applies the same updates as that run at any p (seed
//     000: the same arithmetic whatever p; in wulf the same up to which patterns share a
//     block, since each rank draws its own order). Weight averaging and PPT change the
//     arithmetic with p: for them the sequential count is an assumption, marked as one.
// The estimate is their product. The K fastest estimates, the fastest of each strategy and
// the fastest sequential one (the speed-up's reference) are then simulated with real
// arithmetic on the platform: those confirmed numbers decide.
//
// With a time per epoch as the target (--target-epoch-seconds, any net, and the only target of
// a net given by its layers, which has no arithmetic) screening alone decides, for block and
// overlap, whose b is the samples of one update over all ranks. The epoch is its training
// pass: updates_per_epoch(n, b) = ceil(n / b) updates (a wulf iteration is that pass and then
// the check pass, which is left out). Each timing is simulated without arithmetic twice, on b
// training samples and on 2b (one update, then two, each followed by the same error sums and
// check pass); the second update's time is their difference, and epoch = ceil(n / b) x it.
#pragma once

#include "util/json.hpp"
#include "train/trainer.hpp"

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace wulf {

// What is searched: the cross product of the lists. p = 1 is the sequential run, the same
// for every strategy.
struct SearchSpace {
  std::vector<Strategy> strategies;  // block, average, ppt
  std::vector<int> nps;              // holds 1
  std::vector<std::size_t> blocks;   // block: patterns per update over all ranks;
                                     // average: each rank's block; ppt: each rank's local epoch
  std::vector<double> etas, alphas;
  std::vector<std::size_t> intervals;  // average: patterns per rank between averagings (0: every block)
  // The strategies' allreduce algorithm (SearchTraits::allreduce_option: block's --allreduce,
  // overlap's --bucket-allreduce); empty: each strategy's default, not searched.
  std::vector<std::string> allreduces;
  // overlap's --bucket-bytes; empty: its default, not searched. bucket_counts: the buckets
  // each cuts the net into; bucket_same_as: the index of the first size that cuts it alike
  // (its own where none before does).
  std::vector<std::size_t> bucket_bytes, bucket_counts, bucket_same_as;
  // fsdp's --sharding and --shard-algorithm (SearchTraits::sharding_option,
  // shard_algorithm_option); empty: its default, not searched.
  std::vector<std::string> shardings, shard_algorithms;
  // Samples of an update a rank (--batches): b = p x batch, only those made; empty: every b
  // of blocks at every p.
  std::vector<std::size_t> batches;
  std::size_t train_patterns = 0;  // n, the whole training set
};

// What the number of iterations to the target depends on: one sequential run each.
struct LearningPoint {
  std::size_t b = 0;
  double eta = 0, alpha = 0;
};

// How a training run with real arithmetic ended, read from its record.
struct RunOutcome {
  std::string status;  // final.status: target_reached, max_iterations, time_limit, diverged, ...
  bool reached = false;
  int iterations = 0;  // iterations run; when reached, the first at or below the target
  double time_s = 0;   // at the end (simulated, or wall for --engine seq)
  double final_error = std::numeric_limits<double>::quiet_NaN();  // the check error at the end
  double best_error = std::numeric_limits<double>::quiet_NaN();   // the lowest check error
  int best_iteration = 0;
  double wall_s = 0;  // what the run took on this machine
};

// The check error is the test error, or the training error where there is no test set
// (wulf train's --target-error rule). A field missing from the record, or of another type,
// is an InputError naming source, the record's file.
RunOutcome outcome_of_record(const Json& record, const std::string& source);

// Where a candidate's iterations to the target come from.
enum class ConvergenceBasis {
  exact,    // p = 1: the sequential run is this run
  same,     // block: the same updates, up to which patterns share a block
  assumed,  // average, ppt: the arithmetic changes with p; the sequential count is a guess
};
std::string_view to_string(ConvergenceBasis b);

// The strategies wulf recommend searches (those whose descriptor has SearchTraits), in the
// registry's order, and their names as a list: "block, average" + last + "ppt".
std::vector<Strategy> searched_strategies();
std::string searched_strategy_names(std::string_view last);

// What the two short simulations of one timing measured for a time per epoch (simulated
// seconds, numerics off): an epoch of b training samples (one update) and of 2b (two), each
// with the same error sums and check pass after it.
struct UpdateRuns {
  double one_s = 0, two_s = 0;
  // Without a test set the check pass runs over the training set, b samples more in the
  // longer run: their time (check_pass_growth_s), taken off the difference; 0 with a test set.
  double check_s = 0;
  // A strategy that hides communication: the communication waited for after the backward
  // pass in each run (exposed) and in its unhidden twin's (alone); NaN for the others.
  double exposed_one_s = std::numeric_limits<double>::quiet_NaN();
  double exposed_two_s = std::numeric_limits<double>::quiet_NaN();
  double alone_one_s = std::numeric_limits<double>::quiet_NaN();
  double alone_two_s = std::numeric_limits<double>::quiet_NaN();
};

struct Candidate {
  Strategy strategy{};  // p = 1: block on one rank, the sequential run
  int p = 1;
  std::size_t b = 1;
  double eta = 0, alpha = 0;
  std::size_t interval = 0;  // the strategy's interval option (SearchTraits), where it has one
  std::string allreduce;     // SearchTraits::allreduce_option's value; empty: the default
  std::optional<std::size_t> bucket_bytes;  // SearchTraits::bucket_option's value; none: the default
  std::size_t buckets = 0;                  // the buckets it cuts the net into
  std::string sharding, shard_algorithm;    // SearchTraits' sharding options' values; empty: the default
  std::size_t point = 0;     // index of its LearningPoint
  std::string skipped;       // why it is not run (b < p, ...); empty: it is
  ConvergenceBasis basis = ConvergenceBasis::exact;
  // Screening.
  double iteration_s = std::numeric_limits<double>::quiet_NaN();  // simulated, numerics off
  // A strategy that hides communication (SearchTraits::unhidden_option), per iteration: the
  // communication it waits for after the backward pass (exposed_s), the same with nothing
  // hidden (alone_s), and the part hidden, 1 - exposed_s / alone_s; NaN for the others.
  double exposed_s = std::numeric_limits<double>::quiet_NaN();
  double alone_s = std::numeric_limits<double>::quiet_NaN();
  double hidden = std::numeric_limits<double>::quiet_NaN();
  bool hides() const { return !sequential() && !strategy->search->unhidden_option.empty(); }
  // A time per epoch as the target (screening only): its timing's two short simulations, the
  // second update's time, the updates of an epoch, the epoch, and whether it is within the target.
  std::optional<UpdateRuns> runs;
  double update_s = std::numeric_limits<double>::quiet_NaN();
  std::size_t updates = 0;
  double epoch_s = std::numeric_limits<double>::quiet_NaN();
  bool meets = false;
  bool estimate_reached = false;
  int estimate_iterations = 0;
  double estimate_s = std::numeric_limits<double>::quiet_NaN();
  // Screened by the model (wulf recommend --screen model): an update, the epoch of its updates,
  // whether that is within the target, the communication waited for after the compute in an
  // update; extrapolated: p is beyond the platform file's hosts (no simulation of the file
  // checks it). The simulation that confirms it fills runs, update_s and epoch_s.
  double model_update_s = std::numeric_limits<double>::quiet_NaN();
  double model_epoch_s = std::numeric_limits<double>::quiet_NaN();
  double model_exposed_s = std::numeric_limits<double>::quiet_NaN();
  bool model_meets = false, extrapolated = false;
  // Confirmation (finalists only).
  bool finalist = false;
  double bound_s = 0;  // the --max-seconds it ran under (0: none)
  std::optional<RunOutcome> confirmed;

  bool sequential() const { return p == 1; }
  // "sequential", "block", "block rdb", "average a=300", "ppt", "overlap 512KiB ring",
  // "overlap tensor" (a bucket per tensor).
  std::string label() const;
};

// The distinct (b, eta, alpha) of the space, in list order.
std::vector<LearningPoint> learning_points(const SearchSpace& space);
// Every candidate of the space: p = 1 once per learning point; for p > 1 one per strategy
// (and averaging interval). Those that cannot run say why in `skipped`: block with b < p,
// average with b above a rank's share n / p, ppt with a local epoch above n.
std::vector<Candidate> make_candidates(const SearchSpace& space, const std::vector<LearningPoint>& points);
// Which candidates share a time per iteration: those of the same strategy, p, b, averaging
// interval, allreduce and bucket size (eta and alpha change the arithmetic, not what an
// iteration costs), so screening simulates each such time once.
struct TimingPlan {
  std::vector<std::size_t> timed;      // one candidate per distinct timing, in list order
  std::vector<std::size_t> timing_of;  // per candidate that is run, its timing's index in timed
};
TimingPlan plan_timings(const std::vector<Candidate>& candidates);
// What the simulations of one timing measured, per iteration: its time, and for a strategy
// that hides communication, the exposed communication and that of its unhidden twin.
struct IterationTiming {
  double time_s = 0;
  double exposed_s = std::numeric_limits<double>::quiet_NaN();
  double alone_s = std::numeric_limits<double>::quiet_NaN();
};
// Gives every candidate that is run the time per iteration (and for one that hides
// communication, how much) of its timing, timings[j] being plan.timed[j]'s.
void set_iteration_times(std::vector<Candidate>& candidates, const TimingPlan& plan,
                         const std::vector<IterationTiming>& timings);

// The estimate of every candidate that was timed, from its learning point's sequential run.
void estimate(std::vector<Candidate>& candidates, const std::vector<RunOutcome>& convergence);
// The candidates whose estimate reaches the target, fastest first; at equal times fewer
// processors, then list order.
std::vector<std::size_t> rank_by_estimate(const std::vector<Candidate>& candidates);
// The fastest sequential estimate that reaches the target, the screening's speed-up
// reference; 0 when there is none.
double sequential_estimate_reference(const std::vector<Candidate>& candidates);
// The K fastest estimates that reach the target, the fastest of each strategy on p > 1 and
// the fastest sequential one (once each): the sequential one first, then by estimate.
std::vector<std::size_t> pick_finalists(const std::vector<Candidate>& candidates, std::size_t k);
// Simulates the finalists with arithmetic, one after another in their order: run(c, f) is
// finalist f's outcome. With prune, each runs under a bound, c.bound_s, of the fastest time
// confirmed before it (0: none yet), so one that is slower stops early instead of running to
// the end; that is why they cannot run at once.
using ConfirmRun = std::function<RunOutcome(const Candidate& c, std::size_t f)>;
void confirm_finalists(std::vector<Candidate>& candidates, const std::vector<std::size_t>& finalists, bool prune,
                       const ConfirmRun& run);
// The finalists by their confirmed runs: those that reached the target first, fastest first
// (at equal times fewer processors), then the others in the finalists' order.
std::vector<std::size_t> order_by_confirmed(const std::vector<Candidate>& candidates,
                                            std::vector<std::size_t> finalists);
// The confirmed sequential candidate that reached the target soonest (the speed-up's
// reference), and the confirmed candidate that did (the choice); -1 when there is none.
long best_sequential(const std::vector<Candidate>& candidates);
long best_confirmed(const std::vector<Candidate>& candidates);

// A time per epoch as the target (the header's comment has the method).
// The updates of an epoch of n samples in blocks of b over all ranks: ceil(n / b), the last
// one holding the n mod b samples left where b does not divide n.
std::size_t updates_per_epoch(std::size_t n, std::size_t b);
// The longer run's check pass over the training set (no test set) takes b more samples than
// the shorter's: per_sample_s (a rank's check pass time per sample) times the growth of the
// largest rank share, ceil(2b / p) - ceil(b / p).
double check_pass_growth_s(double per_sample_s, std::size_t b, int p);
// The second update of the runs: its time, two_s - one_s - check_s, and for a strategy that
// hides communication, its exposed and unhidden communication (the differences of the runs').
IterationTiming second_update(const UpdateRuns& runs);
// Candidates that cannot be timed so, 2b above the n training samples: skipped, saying why.
void skip_without_two_updates(std::vector<Candidate>& candidates, std::size_t n);
// Skips every candidate whose ranks' devices would not hold the net given by its layers
// (job/device_memory.hpp) where the platform's hosts give their memory (device_bytes, the
// least of them; 0: not given, nothing skipped). base: the run's configuration, each
// candidate's strategy, b and options set on a copy; value_bytes of a parameter.
void skip_unfit(std::vector<Candidate>& candidates, const NetSpec& spec, const TrainConfig& base, double value_bytes,
                double device_bytes);
// Gives every candidate that is run its timing's runs (runs[j] being plan.timed[j]'s), the
// second update's time (and what it hides), its updates per epoch of n samples, its epoch
// and whether that is at most target_s.
void set_epoch_times(std::vector<Candidate>& candidates, const TimingPlan& plan, const std::vector<UpdateRuns>& runs,
                     std::size_t n, double target_s);
// The choice: of the candidates whose epoch meets the target, the one on the fewest
// processors, at equal p the shorter epoch, then the earlier in the list; -1 when none meets it.
long choose_by_epoch(const std::vector<Candidate>& candidates);
// The shortest epoch timed (at equal times fewer processors, then list order); -1: none timed.
long fastest_epoch(const std::vector<Candidate>& candidates);
// The timed candidates in the table's order: by p, then the shorter epoch, then list order.
std::vector<std::size_t> order_by_processors(const std::vector<Candidate>& candidates);
// The record of a candidate searched for a time per epoch.
Json epoch_candidate_json(const Candidate& c);

// wulf train's options that make candidate c, after the options all runs share; without
// learning, no --eta and --alpha (a time per epoch: they change the arithmetic, not the time).
std::vector<std::string> candidate_args(const Candidate& c, bool learning = true);
// A number as the fewest digits that read back to the same double.
std::string shortest(double v);

Json outcome_json(const RunOutcome& o);
// speedup: the reference's time over the candidate's, estimated (screening) and confirmed;
// a reference of 0: none.
Json candidate_json(const Candidate& c, double estimate_reference_s, double confirmed_reference_s);

}  // namespace wulf
