// What `wulf recommend` (cli/recommend.cpp) asks and finds: the request, read and checked
// from its options (cli/recommend_request.cpp), and the search's findings with their report,
// the tables it prints phase by phase, the recommendation and the record
// (cli/recommend_report.cpp).
#pragma once

#include "data/problems.hpp"
#include "predict/recommend.hpp"
#include "train/buckets.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <boost/program_options/variables_map.hpp>

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace wulf {

// The ranges of the search's lists: --np (then each at most the platform's cores), --blocks
// (then each at most the training set), --etas, --alphas, --intervals.
inline constexpr Range kSearchNpRange = kRanksRange;
inline constexpr Range kSearchEtaRange{.lo = 0, .hi = 1e6, .lo_open = true};
inline constexpr Range kSearchAlphaRange{.lo = 0, .hi = 1, .hi_open = true};
inline constexpr Range kSearchIntervalRange{.lo = 0, .hi = 2147483647};
inline constexpr Range kSearchBucketRange{.lo = 0, .hi = 1099511627776};  // --bucket-sizes, bytes

// What the search is for: the fastest time to an error (--target-error), or the fewest
// processors that train an epoch within a time (--target-epoch-seconds).
enum class TargetKind { error, epoch_seconds };

// What was asked, every input checked.
struct Request {
  std::string platform;
  std::size_t hosts = 0;
  long long cores = 0;       // over all hosts
  std::string problem_spec;  // as given to --problem, passed on to the runs
  Problem problem;           // its sizes and defaults (wulf train's resolution, no data read)
  std::vector<GradientTensor> tensors;  // the net's, in the backward pass's order
  std::size_t value_bytes = 4;          // of a weight (--precision)
  NetSpec spec;                         // the net (a layer file's: its device memory is checked)
  TrainConfig config;                   // the probe's configuration, which each candidate's copies
  double device_bytes = 0;              // the least of the hosts' wulf:memory; 0: not given
  TargetKind target_kind = TargetKind::error;
  double target = 0;  // the error, or the seconds of an epoch
  long long seed = 1;
  SearchSpace space;
  long long finalists = 3, max_epochs = 0, jobs = 0, show = 10;
  bool prune = true;
  // --screen model: the candidates ranked by the platform model (cli/platform_model.hpp), the
  // best `confirm` the platform file holds simulated.
  bool by_model = false;
  long long confirm = 5;
  std::vector<std::string> given;  // wulf train's options given to recommend, passed to every run
  ErrorMetric metric = ErrorMetric::rmse;
  std::vector<std::string> common;     // wulf train's options every run shares
  std::vector<std::string> sim_args;   // and those of every simulation on the platform
  std::optional<std::string> out;      // --out: where the record goes
  std::optional<std::string> records;  // --records: the folder that keeps every run's record

  bool by_epoch() const { return target_kind == TargetKind::epoch_seconds; }
  std::string epochs() const { return std::to_string(max_epochs); }
  std::size_t gradient_bytes() const;  // the net's gradient
  std::string metric_name() const;
  // wulf train's options that simulate c on the platform, before the phase's own.
  std::vector<std::string> simulation_args(const Candidate& c) const;
  // The run that confirms c, and the one that repeats the choice: with arithmetic, to the target.
  std::vector<std::string> confirm_args(const Candidate& c) const;
  // A time per epoch: the simulation of c on `samples` training samples (b: one update; 2b:
  // two), and the one that repeats the choice, a whole epoch of the n samples.
  std::vector<std::string> update_args(const Candidate& c, std::size_t samples) const;
  std::vector<std::string> epoch_args(const Candidate& c) const;
};

// The names of wulf train's options that recommend takes as wulf train declares them and
// passes on to its runs.
std::vector<std::string> passed_train_options();
// The request of recommend's options, every input checked before any run starts: the options
// passed on to the runs by wulf train's own resolution of one (which also gives the
// problem's sizes and defaults, no data read).
Request parse_request(const boost::program_options::variables_map& vm);

// What the search found, phase by phase.
struct Search {
  std::vector<LearningPoint> points;
  std::vector<Candidate> candidates;    // timed, estimated, the finalists confirmed
  std::vector<RunOutcome> convergence;  // per learning point, its sequential run
  std::vector<std::size_t> finalists;
};

// The report: the speed-ups' references and the choice.
struct Verdict {
  double estimate_reference = 0;  // the fastest sequential estimate (0: none)
  long reference = -1;            // the fastest confirmed sequential candidate (-1: none)
  double reference_s = 0;         // its confirmed time (0: none)
  long choice = -1;               // the fastest confirmed candidate (-1: none)
};
Verdict decide(const std::vector<Candidate>& candidates);

// What the search took on this machine, and how its runs were run: over how many processes
// of a user's launcher (1: this one alone), how many at once in each.
struct WallTimes {
  double timing_s = 0, convergence_s = 0, screening_s = 0, confirmation_s = 0, total_s = 0;
  int processes = 1, runs_at_once = 1;
  Json json() const;
};

// A run's command line as a shell takes it: "wulf train ..." with the arguments that need it quoted.
std::string quoted_command(const std::vector<std::string>& args);
// "0.5 s" of a phase's wall time, as the phase lines end.
std::string wall_seconds(double s);
void print_search(const Request& r, const std::vector<Candidate>& candidates, std::ostream& out);
void print_convergence(const Request& r, const Search& s, std::ostream& out);
void print_estimates(const Request& r, const std::vector<Candidate>& candidates, std::ostream& out);
void print_confirmed(const Request& r, const Search& s, const Verdict& v, std::ostream& out);
// The learning points that never reached the target, and what was skipped.
void print_left_out(const Request& r, const Search& s, std::ostream& out);
void print_recommendation(const Request& r, const Search& s, const Verdict& v, std::ostream& out);
void print_wall_times(const WallTimes& wall, std::ostream& out);
// The record without its wall times: every candidate, the screening and the confirmation,
// the reference and the choice.
Json search_record(const Request& r, const Search& s, const Verdict& v);

// A time per epoch as the target: the table of every candidate timed (fewest processors
// first), what was skipped, the choice (choose_by_epoch) or, when none meets the target, the
// fastest, and the record.
void print_epochs(const Request& r, const std::vector<Candidate>& candidates, long choice, std::ostream& out);
void print_epoch_recommendation(const Request& r, const std::vector<Candidate>& candidates, long choice,
                                std::ostream& out);
Json epoch_record(const Request& r, const std::vector<Candidate>& candidates, long choice);

// --screen model (cli/recommend_model.cpp). What screening by the model covered: the
// candidates it modelled, at how many GPU counts, the file's GPUs (beyond them: extrapolated).
struct ModelScreening {
  std::size_t modelled = 0, gpu_counts = 0, file_gpus = 0;
};
// Every candidate that is run modelled on the platform, p by p (its model_* fields and
// updates), or skipped with the model's reason (a layout its p cannot have).
ModelScreening screen_by_model(const Request& r, std::vector<Candidate>& candidates);
// The modelled candidates, best first: those whose epoch meets the target on the fewest GPUs,
// then the shorter epoch; then the others by their epoch; at equal terms list order.
std::vector<std::size_t> rank_by_model(const std::vector<Candidate>& candidates);
// The first --confirm of the ranking that a simulation of the file can time (within its hosts,
// 2b within the training set); passed_over gets why each one above the last was not.
std::vector<std::size_t> pick_confirmed(const Request& r, const std::vector<Candidate>& candidates,
                                        const std::vector<std::size_t>& ranking, std::vector<std::string>& passed_over);
void print_model_ranking(const Request& r, const std::vector<Candidate>& candidates,
                         const std::vector<std::size_t>& ranking, std::ostream& out);
// The confirmed candidates: the model's rank and the simulation's, both updates and epochs, the
// difference.
void print_model_confirmed(const Request& r, const std::vector<Candidate>& candidates,
                           const std::vector<std::size_t>& ranking, const std::vector<std::size_t>& confirmed,
                           const std::vector<std::string>& passed_over, std::ostream& out);
// A candidate's record: what it is, why it was skipped, the model's figures and, simulated, the
// simulation's.
Json model_candidate_json(const Candidate& c);
// The search's record: its settings and rules, every candidate, the ranking (indices into
// them), the confirmed, what was passed over and the choice with its whole epoch's command.
Json model_record(const Request& r, const std::vector<Candidate>& candidates, const std::vector<std::size_t>& ranking,
                  const std::vector<std::size_t>& confirmed, const std::vector<std::string>& passed_over);

}  // namespace wulf
