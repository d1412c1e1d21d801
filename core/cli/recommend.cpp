// `wulf recommend`: the fastest way to a target error on a platform, or the fewest processors
// that train an epoch within a time (predict/recommend.hpp has the search,
// cli/recommend_search.hpp its tables and record). Its phases for an error: parse (every
// input checked before any run starts), screen the time per iteration, screen the
// iterations to the target, confirm the finalists, report; for a time per epoch: parse,
// screen the time per update, report. Each phase's runs are `wulf train` programs handed to
// the runner (cli/runner.hpp) as a list of jobs, their records read back; under a user's
// mpirun or srun they are shared among its processes.
#include "cli/cli.hpp"
#include "cli/launcher.hpp"
#include "cli/options.hpp"
#include "cli/recommend_search.hpp"
#include "cli/runner.hpp"
#include "cli/train_options.hpp"
#include "comm/allreduce_algorithms.hpp"
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>

namespace po = boost::program_options;

namespace wulf {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

po::options_description recommend_options() {
  po::options_description search("search", 110, 55);
  // clang-format off
  search.add_options()
      ("help,h", "print this help")
      ("platform", po::value<std::string>(), "the SimGrid platform file (XML) to train on")
      ("problem", po::value<std::string>(), "the problem (wulf train --help lists them)")
      ("target-error", number_in("target-error", {.lo = 0, .hi = 1e9, .lo_open = true},
                                 "for every pattern right with --error class, give one below 1/n"),
       "reach this check error (test error, or training error without a test set; --error says which kind)")
      ("target-epoch-seconds", number_in("target-epoch-seconds", {.lo = 0, .hi = 1e12, .lo_open = true}),
       "instead of --target-error (and the only target of a net given by its layers): the fewest processors "
       "whose epoch, its training pass of ceil(n / b) updates, takes at most this many simulated seconds; "
       "screening alone decides, without arithmetic")
      ("screen", one_of(std::vector<std::string>{"simulation", "model"}, "--screen: '{}' (expected simulation or model)")->default_value("simulation"),
       "simulation: every candidate simulated; model (with --target-epoch-seconds): every candidate ranked by the "
       "platform model (wulf model --overlap, --strategy fsdp), then the best --confirm simulated")
      ("confirm", whole_in("confirm", {.lo = 0, .hi = 1000})->default_value(5),
       "--screen model: the K best-ranked candidates that the platform file holds, simulated without arithmetic")
      ("strategies", po::value<std::string>(),
       "strategies to search, a list of block (training-set parallelism), average (weight averaging), ppt "
       "(pattern parallel training; b is each rank's local epoch), overlap (DDP's buckets behind the backward "
       "pass), fsdp (sharded data parallelism) (default: block; with --target-epoch-seconds block,overlap; it "
       "takes block, overlap and fsdp)")
      ("shardings", po::value<std::string>(),
       "fsdp's --sharding to search, a list of full, grad-op, hybrid, none (default: its default, not searched)")
      ("shard-algorithms", po::value<std::string>(),
       "fsdp's --shard-algorithm to search, a list of ring, rings (default: its default, not searched)")
      ("allreduces", po::value<std::string>(),
       ("allreduce algorithms to search for block and overlap, a list of " + allreduce_names(AllreduceRows::scheduled) +
        " (wulf train --help says what each is): block's the MPI library's collective (--allreduce) where it has "
        "one, else wulf's own; overlap's wulf's own non-blocking one (--bucket-allreduce) (default: each one's "
        "default, not searched)").c_str())
      ("bucket-sizes", po::value<std::string>(),
       fmt::format("overlap's bucket sizes in bytes, a list, each in {} (0: a bucket per tensor; default: 0, about "
                   "a quarter of the net's gradient, and the whole net)", range_text(kSearchBucketRange)).c_str())
      ("np", po::value<std::string>(),
       fmt::format("processors, a list, each in {} and at most the platform's cores; 1, the sequential reference, "
                   "is always added (default: 1 and the powers of two up to the platform's cores)",
                   range_text(kSearchNpRange)).c_str())
      ("batches", po::value<std::string>(),
       fmt::format("instead of --blocks: a rank's samples of an update, a list, each in {}; b = p x batch at every "
                   "p", range_text(kBlockRange)).c_str())
      ("blocks", po::value<std::string>(),
       fmt::format("block sizes b, a list, each in {} and at most the training set (default: the problem's block "
                   "times 1, 4, 16, 64, up to the training set)", range_text(kBlockRange)).c_str())
      ("etas", po::value<std::string>(),
       fmt::format("learning rates, a list, each in {} (default: the problem's)", range_text(kSearchEtaRange)).c_str())
      ("alphas", po::value<std::string>(),
       fmt::format("momentum rates, a list, each in {} (default: the problem's)", range_text(kSearchAlphaRange)).c_str())
      ("intervals", po::value<std::string>()->default_value("0"),
       fmt::format("average: patterns per rank between averagings, a list, each in {} (0: after every block)",
                   range_text(kSearchIntervalRange)).c_str())
      ("finalists", whole_in("finalists", {.lo = 1, .hi = 1000})->default_value(3),
       "K: the K fastest estimates are simulated with real arithmetic, with the fastest of each strategy and "
       "the fastest sequential one")
      ("max-epochs", whole_in("max-epochs", {.lo = 1, .hi = 1e8}), "most iterations of any run (default: the problem's)")
      ("prune", on_off_word("prune")->default_value("on"),
       "on: a finalist's simulation stops once it is slower than the best one confirmed before it")
      ("jobs", whole_in("jobs", {.lo = 0, .hi = 256})->default_value(0),
       "runs at once, each a program of its own (0: the cores; under mpirun or srun, each process's share of its "
       "machine's)")
      ("show", whole_in("show", {.lo = 0, .hi = 1e6})->default_value(10), "screening estimates printed")
      ("out", po::value<std::string>(), "write the record (JSON) to FILE")
      ("records", po::value<std::string>(),
       "keep every run's record in folder DIR: time-J.json (the time per iteration), conv-K.json (the "
       "iterations to the target), final-F.json (the finalists); for a time per epoch time-J-1.json and "
       "time-J-2.json (one update and two; -unhidden: overlap's twin)");
  // clang-format on
  po::options_description training = options_named(
      train_options(), "training options passed to every run (wulf train --help)", passed_train_options());
  training.add_options()("timeout", timeout_value(), timeout_help("each run: ").c_str());
  po::options_description options(
      "wulf recommend --platform FILE.xml --problem NAME (--target-error E | --target-epoch-seconds T) [options]", 110,
      55);
  options.add(search).add(training);
  return options;
}

namespace {

// A phase's runs, their records kept with --records; a run that failed ends the line its
// phase began, and the search: a refusal (exit 2) is an input error naming the run, anything
// but a record (finished, or stopped on a fault with exit 3) an internal one. With
// skip_refused (screening) a refused run is its candidates' to skip (skip_refused_timings),
// unless every run was refused: then the search asks for nothing wulf train runs.
std::vector<JobResult> run_phase(const Request& r, const Runner& runner, const std::vector<Job>& jobs,
                                 std::ostream& out, bool skip_refused = false) {
  try {
    std::vector<JobResult> runs = runner.run(jobs);
    const bool all_refused =
        std::all_of(runs.begin(), runs.end(), [](const JobResult& run) { return run.code == exit_input; });
    for (const JobResult& run : runs) {
      if (run.code == exit_input && (!skip_refused || all_refused))
        throw InputError("wulf train refused a run of the search: " + run.message() + " (" + run.command + ")");
      if (run.code == exit_input) continue;
      if (run.code == exit_timeout) throw TimedOut{"a run of the search " + run.message() + " (" + run.command + ")"};
      if (run.code != exit_ok && run.code != exit_diverged)
        throw std::runtime_error("a run of the search failed (code " + std::to_string(run.code) +
                                 "): " + run.message() + " (" + run.command + ")");
    }
    if (r.records && is_leader())
      for (std::size_t k = 0; k < jobs.size(); ++k)
        if (runs[k].code != exit_input)
          write_file_atomically(*r.records + "/" + std::filesystem::path(jobs[k].record).filename().string(),
                                read_text_file(jobs[k].record, "a run's record"));
    return runs;
  } catch (...) {
    out << " stopped\n" << std::flush;
    throw;
  }
}

// Screening's refused runs (a candidate wulf train will not run on this platform: the rings
// allreduce at a p that does not fill a node, say): each timing with a refused job has its
// candidates skipped with wulf train's reason, and is true in the result (nothing to read).
std::vector<bool> skip_refused_timings(const TimingPlan& plan, const std::vector<std::size_t>& first_job,
                                       const std::vector<JobResult>& runs, std::vector<Candidate>& candidates) {
  std::vector<bool> refused(plan.timed.size(), false);
  for (std::size_t j = 0; j < plan.timed.size(); ++j) {
    const std::size_t end = j + 1 < first_job.size() ? first_job[j + 1] : runs.size();
    for (std::size_t k = first_job[j]; k < end && !refused[j]; ++k)
      if (runs[k].code == exit_input) {
        refused[j] = true;
        for (std::size_t i = 0; i < candidates.size(); ++i)
          if (candidates[i].skipped.empty() && plan.timing_of[i] == j)
            candidates[i].skipped = "wulf train refuses its run: " + runs[k].message();
      }
  }
  return refused;
}

// The option that makes candidate c's twin with nothing hidden (c.hides()): its strategy's
// SearchTraits::unhidden_option and value, appended to a run's arguments.
void append_unhidden(std::vector<std::string>& args, const Candidate& c) {
  const SearchTraits& t = *c.strategy->search;
  args.insert(args.end(), {"--" + std::string(t.unhidden_option), std::string(t.unhidden_value)});
}

// Phase 2, screening the time of one iteration, without arithmetic, once per (strategy, p,
// b, a); returns the wall seconds it took.
double screen_iteration_times(const Request& r, const Runner& runner, std::vector<Candidate>& candidates,
                              const TempDir& scratch, std::ostream& out) {
  const auto t0 = Clock::now();
  const TimingPlan plan = plan_timings(candidates);
  std::vector<Job> jobs;
  std::vector<std::size_t> first_job;  // per timing, its first job
  for (std::size_t j = 0; j < plan.timed.size(); ++j) {
    first_job.push_back(jobs.size());
    // Every iteration charges the same simulated time (compute charges depend on counts,
    // not values), so one iteration gives the time per iteration.
    const Candidate& c = candidates[plan.timed[j]];
    std::vector<std::string> a = r.simulation_args(c);
    // Time only: no error is computed, so the target is left out (wulf train refuses it there).
    if (const auto target = std::find(a.begin(), a.end(), "--target-error"); target != a.end() && target + 1 != a.end())
      a.erase(target, target + 2);
    a.insert(a.end(), {"--numerics", "off", "--epochs", "1"});
    jobs.push_back({a, scratch.file("time-" + std::to_string(j) + ".json"), {}, {}});
    if (!c.hides()) continue;
    append_unhidden(a, c);
    jobs.push_back({a, scratch.file("time-" + std::to_string(j) + "-unhidden.json"), {}, {}});
  }
  out << "screening: time per iteration, " << jobs.size() << " simulations without arithmetic ..." << std::flush;
  const std::vector<JobResult> runs = run_phase(r, runner, jobs, out, true);
  const std::vector<bool> refused = skip_refused_timings(plan, first_job, runs, candidates);
  // Per iteration: the run's time, and the communication it waited for after the backward
  // pass (the strategy's note in the history entry of its one iteration).
  auto field = [&](std::size_t k, const char* pointer) {
    return json_field<double>(runs[k].record, pointer, jobs[k].record);
  };
  std::vector<IterationTiming> timings;
  for (std::size_t j = 0, k = 0; j < plan.timed.size(); ++j, ++k) {
    if (refused[j]) {  // its candidates are skipped: nothing is read
      timings.emplace_back();
      k = (j + 1 < first_job.size() ? first_job[j + 1] : jobs.size()) - 1;
      continue;
    }
    IterationTiming t{.time_s = field(k, "/final/time_s") / field(k, "/final/iterations")};
    if (candidates[plan.timed[j]].hides()) {  // its twin's job follows its own
      t.exposed_s = field(k, "/history/1/exposed_comm_s");
      t.alone_s = field(++k, "/history/1/exposed_comm_s");
    }
    timings.push_back(t);
  }
  set_iteration_times(candidates, plan, timings);
  const double wall_s = seconds_since(t0);
  out << " " << wall_seconds(wall_s) << "\n";
  return wall_s;
}

// A time per epoch, its one phase: every (strategy, p, b, allreduce, bucket size) simulated
// without arithmetic on b training samples and on 2b (and overlap's unhidden twin alike);
// the second update is their difference. Returns the wall seconds it took.
double screen_update_times(const Request& r, const Runner& runner, std::vector<Candidate>& candidates,
                           const TempDir& scratch, std::ostream& out) {
  const auto t0 = Clock::now();
  const TimingPlan plan = plan_timings(candidates);
  std::vector<Job> jobs;
  std::vector<std::size_t> first_job;  // per timing, its first job
  for (std::size_t j = 0; j < plan.timed.size(); ++j) {
    first_job.push_back(jobs.size());
    const Candidate& c = candidates[plan.timed[j]];
    for (const bool twin : {false, true}) {
      if (twin && !c.hides()) break;
      for (const std::size_t updates : {1, 2}) {
        std::vector<std::string> a = r.update_args(c, updates * c.b);
        if (twin) append_unhidden(a, c);
        const std::string name =
            "time-" + std::to_string(j) + "-" + std::to_string(updates) + (twin ? "-unhidden" : "");
        jobs.push_back({a, scratch.file(name + ".json"), {}, {}});
      }
    }
  }
  out << "screening: time per update, " << jobs.size() << " simulations without arithmetic (of 1 and 2 updates) ..."
      << std::flush;
  const std::vector<JobResult> runs = run_phase(r, runner, jobs, out, true);
  const std::vector<bool> refused = skip_refused_timings(plan, first_job, runs, candidates);
  auto field = [&](std::size_t k, const char* pointer) {
    return json_field<double>(runs[k].record, pointer, jobs[k].record);
  };
  std::vector<UpdateRuns> timings;
  for (std::size_t j = 0, k = 0; j < plan.timed.size(); ++j) {
    const Candidate& c = candidates[plan.timed[j]];
    if (refused[j]) {  // its candidates are skipped: nothing is read
      timings.emplace_back();
      k = j + 1 < first_job.size() ? first_job[j + 1] : jobs.size();
      continue;
    }
    // The iteration's time, before the final passes; a wulf iteration is the whole (short) epoch.
    UpdateRuns u{.one_s = field(k, "/history/1/time_s"), .two_s = field(k + 1, "/history/1/time_s")};
    // Without a test set the check pass is over the training set: rank 0's check pass time per
    // sample (every check pass is charged per sample, the final passes' too).
    if (r.problem.test_total == 0)
      u.check_s = check_pass_growth_s(field(k + 1, "/phases/test_s") / field(k + 1, "/phases/test_patterns"), c.b, c.p);
    if (c.hides()) {  // its twin's two jobs follow its own
      u.exposed_one_s = field(k, "/history/1/exposed_comm_s"),
      u.exposed_two_s = field(k + 1, "/history/1/exposed_comm_s");
      u.alone_one_s = field(k + 2, "/history/1/exposed_comm_s"),
      u.alone_two_s = field(k + 3, "/history/1/exposed_comm_s");
    }
    k += c.hides() ? 4 : 2;
    timings.push_back(u);
  }
  set_epoch_times(candidates, plan, timings, r.problem.train_total, r.target);
  const double wall_s = seconds_since(t0);
  out << " " << wall_seconds(wall_s) << "\n";
  return wall_s;
}

// Phase 3, screening the iterations to the target: one sequential run with arithmetic per
// (b, eta, alpha); returns the wall seconds it took.
double screen_convergence(const Request& r, const Runner& runner, Search& s, const TempDir& scratch,
                          std::ostream& out) {
  out << "screening: iterations to the target, " << s.points.size() << " sequential run(s) with arithmetic ..."
      << std::flush;
  const auto t0 = Clock::now();
  std::vector<Job> jobs;
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    Candidate seq;
    seq.b = s.points[k].b, seq.eta = s.points[k].eta, seq.alpha = s.points[k].alpha;
    std::vector<std::string> a = r.common;
    const std::vector<std::string> own = candidate_args(seq);
    a.insert(a.end(), own.begin(), own.end());
    a.insert(a.end(), {"--engine", "seq", "--epochs", r.epochs()});
    jobs.push_back({a, scratch.file("conv-" + std::to_string(k) + ".json"), {}, {}});
  }
  const std::vector<JobResult> runs = run_phase(r, runner, jobs, out);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    s.convergence.push_back(outcome_of_record(runs[k].record, jobs[k].record));
    s.convergence.back().wall_s = runs[k].wall_s;
  }
  const double wall_s = seconds_since(t0);
  out << " " << wall_seconds(wall_s) << "\n";
  return wall_s;
}

// Phase 4, confirmation: the finalists simulated with arithmetic on the platform, one after
// another (each bounded by the fastest before it); returns the wall seconds it took (0 when
// there were none).
double confirm(const Request& r, const Runner& runner, Search& s, const TempDir& scratch, std::ostream& out) {
  s.finalists = pick_finalists(s.candidates, static_cast<std::size_t>(r.finalists));
  if (s.finalists.empty()) return 0;
  const auto t0 = Clock::now();
  out << "confirmation: " << s.finalists.size() << " finalist(s) simulated with real arithmetic on the platform"
      << (r.prune ? " (each stops once slower than the best before it)" : "") << " ..." << std::flush;
  confirm_finalists(s.candidates, s.finalists, r.prune, [&](const Candidate& c, std::size_t f) {
    std::vector<std::string> a = r.confirm_args(c);
    if (c.bound_s > 0) a.insert(a.end(), {"--max-seconds", shortest(c.bound_s)});
    const Job job{a, scratch.file("final-" + std::to_string(f) + ".json"), {}, {}};
    const JobResult run = run_phase(r, runner, {job}, out).front();
    RunOutcome o = outcome_of_record(run.record, job.record);
    o.wall_s = run.wall_s;
    return o;
  });
  const double wall_s = seconds_since(t0);
  out << " " << wall_seconds(wall_s) << "\n";
  return wall_s;
}

void print_help(const po::options_description& options, std::ostream& out) {
  out << options << "\n"
      << "Screening times one iteration of every (strategy, p, b, allreduce, bucket size) by simulation without\n"
         "arithmetic and counts the iterations to the target once per (b, eta, alpha) by sequential training;\n"
         "their product is the estimate. The finalists are then simulated with real arithmetic on the platform, and "
         "decide.\n"
         "For overlap the screening also times the same buckets started after the backward pass (--bucket-start\n"
         "after-backward), and prints the communication an iteration waits for after the backward pass (exposed),\n"
         "that of the twin (alone) and the part the backward pass hides, 1 - exposed / alone.\n"
         "\n"
         "With --target-epoch-seconds T (any net; a net given by its layers, --problem layers:NAME, takes no other\n"
         "target) it searches block and overlap for the fewest processors whose epoch takes at most T simulated\n"
         "seconds. The epoch is its training pass, ceil(n / b) updates of b samples over all ranks (a wulf iteration\n"
         "is that pass and then the check pass, left out here). Each candidate is simulated without arithmetic on b\n"
         "training samples and on 2b; the second update's time is the difference (the check pass after each cancels)\n"
         "and the epoch is ceil(n / b) times it. Of the candidates within T it takes the fewest processors, then the\n"
         "shorter epoch; when none is within T it says so and names the fastest. There is no run with arithmetic.\n"
         "\n"
         "With --screen model (and --target-epoch-seconds T) every candidate of overlap and fsdp is ranked by the\n"
         "platform model instead (wulf model --overlap, --strategy fsdp; --np may go beyond the file's GPUs where the\n"
         "model extends its servers, marked extrapolated): within T on the fewest processors, then the shorter epoch.\n"
         "The best --confirm that the file holds are then simulated as above, and printed beside the model.\n"
         "\n"
         "Simulations charge compute with --compute flops (the default) or calibrated.\n"
         "Under mpirun or srun (mpirun -np N wulf recommend ...) every process runs its share of each phase's runs\n"
         "and process 0 prints and writes the record.\n";
}

// The search for a time per epoch: screening alone, then the table, the choice and the record.
int recommend_by_epoch(const Request& r, const Runner& runner, std::ostream& out) {
  std::vector<Candidate> candidates = make_candidates(r.space, learning_points(r.space));
  skip_without_two_updates(candidates, r.problem.train_total);
  skip_unfit(candidates, r.spec, r.config, static_cast<double>(r.value_bytes), r.device_bytes);
  print_search(r, candidates, out);
  const TempDir scratch("recommend");
  const auto t_start = Clock::now();
  WallTimes wall;
  wall.processes = processes(), wall.runs_at_once = runner.pool();
  wall.timing_s = screen_update_times(r, runner, candidates, scratch, out);
  wall.screening_s = wall.timing_s;
  const long choice = choose_by_epoch(candidates);
  print_epochs(r, candidates, choice, out);
  print_epoch_recommendation(r, candidates, choice, out);
  Json record = epoch_record(r, candidates, choice);
  wall.total_s = seconds_since(t_start);
  record["wall"] = wall.json();
  out << "wall time: screening " << wall_seconds(wall.screening_s) << "\n";
  if (r.out && is_leader()) {
    write_file_atomically(*r.out, record_text(record) + "\n");
    out << "record: " << *r.out << "\n";
  }
  return exit_ok;
}

// --screen model: every candidate ranked by the platform model, the best --confirm that the
// file holds simulated (as screen_update_times times them), both side by side, and the record.
int recommend_by_model(const Request& r, const Runner& runner, std::ostream& out) {
  std::vector<Candidate> candidates = make_candidates(r.space, learning_points(r.space));
  skip_unfit(candidates, r.spec, r.config, static_cast<double>(r.value_bytes), r.device_bytes);
  print_search(r, candidates, out);
  const TempDir scratch("recommend");
  const auto t_start = Clock::now();
  WallTimes wall;
  wall.processes = processes(), wall.runs_at_once = runner.pool();
  out << "screening by the model ..." << std::flush;
  const ModelScreening screened = screen_by_model(r, candidates);
  wall.screening_s = seconds_since(t_start);
  fmt::print(out, " {} candidates modelled at {} GPU counts (beyond the file's {} GPUs extrapolated) {}\n",
             screened.modelled, screened.gpu_counts, screened.file_gpus, wall_seconds(wall.screening_s));
  const std::vector<std::size_t> ranking = rank_by_model(candidates);
  print_model_ranking(r, candidates, ranking, out);
  std::vector<std::string> passed_over;
  const std::vector<std::size_t> picked = pick_confirmed(r, candidates, ranking, passed_over);
  if (!picked.empty()) {
    const auto t0 = Clock::now();
    std::vector<Job> jobs;
    for (std::size_t f = 0; f < picked.size(); ++f)
      for (const std::size_t updates : {1, 2})
        jobs.push_back({r.update_args(candidates[picked[f]], updates * candidates[picked[f]].b),
                        scratch.file("confirm-" + std::to_string(f) + "-" + std::to_string(updates) + ".json"), {}, {}});
    out << "confirmation: " << picked.size() << " candidate(s), " << jobs.size()
        << " simulations without arithmetic (of 1 and 2 updates) ..." << std::flush;
    const std::vector<JobResult> runs = run_phase(r, runner, jobs, out, true);
    for (std::size_t f = 0; f < picked.size(); ++f) {
      Candidate& c = candidates[picked[f]];
      const std::size_t k = 2 * f;
      if (runs[k].code == exit_input || runs[k + 1].code == exit_input) {
        c.skipped = "wulf train refuses its run: " + runs[runs[k].code == exit_input ? k : k + 1].message();
        continue;
      }
      const auto field = [&](std::size_t j, const char* pointer) {
        return json_field<double>(runs[j].record, pointer, jobs[j].record);
      };
      UpdateRuns u{.one_s = field(k, "/history/1/time_s"), .two_s = field(k + 1, "/history/1/time_s")};
      if (r.problem.test_total == 0)
        u.check_s = check_pass_growth_s(field(k + 1, "/phases/test_s") / field(k + 1, "/phases/test_patterns"), c.b, c.p);
      c.runs = u;
      c.finalist = true;
      c.update_s = second_update(u).time_s;
      c.epoch_s = static_cast<double>(c.updates) * c.update_s;
      c.meets = c.epoch_s <= r.target;
    }
    wall.confirmation_s = seconds_since(t0);
    out << " " << wall_seconds(wall.confirmation_s) << "\n";
  }
  print_model_confirmed(r, candidates, ranking, picked, passed_over, out);
  Json record = model_record(r, candidates, ranking, picked, passed_over);
  record["screening"] = {{"modelled", screened.modelled}, {"gpu_counts", screened.gpu_counts},
                         {"file_gpus", screened.file_gpus}};
  if (!ranking.empty()) {
    const Candidate& best = candidates[ranking.front()];
    fmt::print(out, "\nrecommended by the model: {} on {} GPUs, b = {} ({} a GPU): an epoch of {:.1f} s{}{}\n",
               best.label(), best.p, best.b, best.b / static_cast<std::size_t>(best.p), best.model_epoch_s,
               best.model_meets ? "" : fmt::format(" (none within the target of {} s: the fastest)", shortest(r.target)),
               best.extrapolated ? " (extrapolated beyond the file's GPUs)" : "");
    out << "  one epoch of it simulated whole, its check pass included:\n  " << quoted_command(r.epoch_args(best)) << "\n";
  }
  wall.total_s = seconds_since(t_start);
  record["wall"] = wall.json();
  fmt::print(out, "wall time: model {}, confirmation {}, total {}\n", wall_seconds(wall.screening_s),
             wall_seconds(wall.confirmation_s), wall_seconds(wall.total_s));
  if (r.out && is_leader()) {
    write_file_atomically(*r.out, record_text(record) + "\n");
    out << "record: " << *r.out << "\n";
  }
  return exit_ok;
}

}  // namespace

int recommend_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  const po::options_description options = recommend_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    print_help(options, out);
    return exit_ok;
  }
  const Request r = parse_request(vm);
  const Runner runner(r.jobs);
  if (r.by_model) return recommend_by_model(r, runner, out);
  if (r.by_epoch()) return recommend_by_epoch(r, runner, out);
  Search s;
  s.points = learning_points(r.space);
  s.candidates = make_candidates(r.space, s.points);
  skip_unfit(s.candidates, r.spec, r.config, static_cast<double>(r.value_bytes), r.device_bytes);
  print_search(r, s.candidates, out);

  const TempDir scratch("recommend");
  const auto t_start = Clock::now();
  WallTimes wall;
  wall.processes = processes(), wall.runs_at_once = runner.pool();
  wall.timing_s = screen_iteration_times(r, runner, s.candidates, scratch, out);
  wall.convergence_s = screen_convergence(r, runner, s, scratch, out);
  print_convergence(r, s, out);
  estimate(s.candidates, s.convergence);
  wall.screening_s = seconds_since(t_start);
  print_estimates(r, s.candidates, out);
  wall.confirmation_s = confirm(r, runner, s, scratch, out);

  const Verdict v = decide(s.candidates);
  print_confirmed(r, s, v, out);
  print_left_out(r, s, out);
  Json record = search_record(r, s, v);
  print_recommendation(r, s, v, out);
  wall.total_s = seconds_since(t_start);
  record["wall"] = wall.json();
  print_wall_times(wall, out);
  if (r.out && is_leader()) {
    write_file_atomically(*r.out, record_text(record) + "\n");
    out << "record: " << *r.out << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
