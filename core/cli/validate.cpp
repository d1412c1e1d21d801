// `wulf validate`: seed 000's Table VI on this machine. For each problem it calibrates
// (wulf calibrate), predicts the time of one iteration with the model and with the
// simulator on the platform calibration wrote, measures it with real mpirun, and prints
// predicted against measured with the error of each.
#include "cli/cli.hpp"
#include "cli/launcher.hpp"
#include "cli/runner.hpp"
#include "cli/options.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "data/problems.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "predict/model.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <thread>

namespace po = boost::program_options;

namespace wulf {
namespace {

// A run's failure as validate reports it: a timeout names the run, another failure prints
// what the run printed and names it.
void check_run(const JobResult& run, const std::string& what, std::ostream& err) {
  if (run.code == exit_timeout) throw TimedOut{"wulf validate: " + what + ": " + run.message()};
  if (run.code != exit_ok) {
    err << run.err;
    throw InputError("wulf validate: " + what + " failed (code " + std::to_string(run.code) + ")");
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double per_iteration(const Json& record, const std::string& path) {
  return json_field<double>(record, "/final/time_s", path) / json_field<double>(record, "/final/iterations", path);
}

// wulf validate's options, checked: the table's rows and how each is measured.
struct ValidateJob {
  std::vector<std::string> problems;
  std::vector<long long> nps, blocks;
  long long iterations = 0, repeat = 0;
  std::optional<long long> train_size;  // none: by problem (train_size_of)
  std::string machine;
  std::string out;        // the record to write (empty: none)
  long long cores = 0;    // this machine's
  std::vector<std::string> timeout;  // "--timeout" and its seconds for each run, or nothing
};

ValidateJob read_validate_job(const po::variables_map& vm) {
  ValidateJob job;
  if (vm.count("out")) {
    job.out = vm["out"].as<std::string>();
    if (is_leader()) check_writable(job.out, "--out");  // and against the files read, below
  }
  job.problems = split_list(vm["problems"].as<std::string>());
  job.nps = whole_list(vm["np"].as<std::string>(), "np", kRanksHereRange);
  job.blocks = whole_list(vm["block"].as<std::string>(), "block", kBlockRange);
  job.iterations = vm["iterations"].as<long long>();
  job.repeat = vm["repeat"].as<long long>();
  if (vm.count("train-size")) job.train_size = vm["train-size"].as<long long>();
  job.machine = vm["machine"].as<std::string>();
  if (vm.count("timeout")) job.timeout = {"--timeout", fmt::format("{}", vm["timeout"].as<double>())};
  job.cores = std::max(1u, std::thread::hardware_concurrency());
  const long long most = *std::max_element(job.nps.begin(), job.nps.end());
  for (long long b : job.blocks)
    if (b < most) throw InputError("--block " + std::to_string(b) + " is smaller than --np " + std::to_string(most));
  // Each problem's shape is read here, as its runs will read it (an unknown one is refused
  // before any run), so that --out is compared with its files too (MNIST's, a fann: file).
  ProblemOptions shape;
  shape.mnist_dir = default_mnist_dir();
  shape.shape_only = true;
  for (const std::string& problem : job.problems) make_problem(problem, shape);
  if (!job.out.empty() && is_leader()) check_output(job.out, "--out", {});
  return job;
}

// MNIST's 60 000 images would make every run minutes long; 4 096 keep iterations at 7-60 ms.
std::string train_size_of(const ValidateJob& job, const std::string& problem) {
  if (job.train_size) return std::to_string(*job.train_size);
  const ProblemKind* kind = problem_kind(problem);
  return std::string(kind && kind->data == ProblemData::mnist ? "4096" : "0");
}

// One row of the table: its runs' times, one per round.
struct Cell {
  std::string problem;
  long long p, b;
  std::vector<double> measured, model, sim;
};

// A round's runs, one after another in the order they are listed (calibrations and real
// runs time this machine, and each simulation reads the calibration before it), with the
// line each prints as it starts.
struct Round {
  const ValidateJob& job;
  const TempDir& dir;
  std::vector<Job> jobs;
  std::vector<std::string> says;

  std::size_t add(Job j, std::string line) {
    jobs.push_back(std::move(j));
    says.push_back(std::move(line));
    return jobs.size() - 1;
  }

  // wulf calibrate of problem at each block size a rank works with, b / p: wulf's passes are
  // matrix products, whose time per pattern depends on the number of columns (seed 000's
  // per-pattern loops did not), and p ranks each take b / p of a block.
  std::size_t calibration(const std::string& problem, long long local_block) {
    // The allreduce is fitted where it runs one rank per core (above, ranks take turns
    // on the cores and the time is that of the operating system's scheduler).
    std::string fit_np = "2";
    for (long long p : job.nps)
      if (p > 2 && p <= job.cores) fit_np += "," + std::to_string(p);
    const std::string name = std::to_string(jobs.size());
    const std::string profile = dir.file("profile-" + name), machine = dir.file("machine-" + name + ".xml");
    std::vector<std::string> cal{"calibrate", "--problem", problem, "--block", std::to_string(local_block),
                                 "--iterations", std::to_string(job.iterations), "--np", fit_np,
                                 "--train-size", train_size_of(job, problem), "--profile-out", profile,
                                 "--platform-out", machine, "--machine", job.machine};
    cal.insert(cal.end(), job.timeout.begin(), job.timeout.end());
    return add({cal, "", {profile, machine}, {}},
               "calibrating " + problem + " at b " + std::to_string(local_block) + " ...");
  }

  const std::string& profile_of(std::size_t calibration) const { return jobs[calibration].files[0]; }

  // A cell's measured (real) and simulated iteration, c the calibration at its b / p; the
  // index of the real run, the simulation's follows it.
  std::size_t measurement(const Cell& cell, std::size_t c) {
    const std::string& problem = cell.problem;
    const long long p = cell.p, b = cell.b;
    const std::vector<std::string> common{"train", "--problem", problem, "--bias", "off", "--precision", "double",
                                          "--block", std::to_string(b), "--epochs", std::to_string(job.iterations),
                                          "--train-size", train_size_of(job, problem), "--quiet", "--allreduce",
                                          "rdb", "--np", std::to_string(p)};
    std::vector<std::string> real = common, sim = common;
    for (auto* run : {&real, &sim}) run->insert(run->end(), job.timeout.begin(), job.timeout.end());
    real.insert(real.end(), {"--engine", "real"});
    // With the arithmetic on, so that a problem without a test set also makes its exact
    // pass over the training set, as the measured run does.
    sim.insert(sim.end(), {"--engine", "sim", "--platform", jobs[c].files[1], "--compute", "calibrated",
                           "--profile", profile_of(c)});
    if (p > job.cores) sim.insert(sim.end(), {"--grow", std::to_string(p)});
    const std::string name = std::to_string(jobs.size());
    const std::size_t at =
        add({real, dir.file("real-" + name + ".json"), {}, {}},
            "  " + problem + ", p " + std::to_string(p) + ", b " + std::to_string(b) + ": measuring and simulating ...");
    add({sim, dir.file("sim-" + name + ".json"), {}, {}}, "");
    return at;
  }
};

// Every round visits every row, calibrating before it measures; rows take the median of
// their rounds, so that one disturbed calibration or measurement (this machine is shared)
// does not make a row.
std::vector<Cell> measure_rounds(const ValidateJob& job, const Runner& runner, std::ostream& out, std::ostream& err) {
  const TempDir dir("validate");
  std::vector<Cell> cells;
  for (const std::string& problem : job.problems)
    for (long long b : job.blocks)
      for (long long p : job.nps) cells.push_back(Cell{problem, p, b, {}, {}, {}});
  for (long long round = 1; round <= job.repeat; ++round) {
    if (job.repeat > 1) out << "round " << round << " of " << job.repeat << std::endl;
    Round runs{job, dir, {}, {}};
    std::vector<std::size_t> sequential, calibration, real;  // per cell, the index of its runs
    for (std::size_t next = 0; next < cells.size();) {
      const std::size_t seq = runs.calibration(cells[next].problem, cells[next].b);
      for (std::size_t row = 0; row < job.nps.size(); ++row, ++next) {
        const Cell& cell = cells[next];
        const std::size_t c = cell.p == 1 ? seq : runs.calibration(cell.problem, std::max<long long>(1, cell.b / cell.p));
        sequential.push_back(seq), calibration.push_back(c), real.push_back(runs.measurement(cell, c));
      }
    }
    const std::vector<JobResult> results = runner.run(runs.jobs, Spread::one_at_a_time, [&](std::size_t i) {
      if (!runs.says[i].empty()) out << runs.says[i] << std::endl;
    });
    for (std::size_t i = 0; i < results.size(); ++i)
      check_run(results[i],
                runs.jobs[i].args[0] == "calibrate" ? "calibrating " + runs.jobs[i].args[2] : "'" + results[i].command + "'",
                err);
    for (std::size_t k = 0; k < cells.size(); ++k) {
      Cell& cell = cells[k];
      const double b = static_cast<double>(cell.b);
      cell.measured.push_back(per_iteration(results[real[k]].record, runs.jobs[real[k]].record));
      cell.sim.push_back(per_iteration(results[real[k] + 1].record, runs.jobs[real[k] + 1].record));
      cell.model.push_back(cell.p == 1 ? model_sequential(model_constants(read_profile(runs.profile_of(sequential[k]))), b)
                                       : model_parallel(model_constants(read_profile(runs.profile_of(calibration[k]))),
                                                        static_cast<int>(cell.p), b));
    }
  }
  return cells;
}

// The table's rows (medians, errors, rounds) and the mean absolute errors over the rows
// with one rank per core.
struct Table {
  Json rows = Json::array();
  double sum_model = 0, sum_sim = 0;
  int count = 0;
};

Table tabulate(const std::vector<Cell>& cells, long long cores) {
  Table t;
  for (const Cell& cell : cells) {
    const double measured = median(cell.measured), modelled = median(cell.model), simulated = median(cell.sim);
    Json row = Json::object();
    row["problem"] = cell.problem;
    row["p"] = cell.p;
    row["b"] = cell.b;
    row["measured_s"] = measured;
    row["model_s"] = modelled;
    row["sim_s"] = simulated;
    row["model_error"] = modelled / measured - 1;
    row["sim_error"] = simulated / measured - 1;
    row["oversubscribed"] = cell.p > cores;
    Json rounds = Json::object();
    for (const auto& [name, values] : {std::pair{"measured_s", &cell.measured}, std::pair{"model_s", &cell.model},
                                       std::pair{"sim_s", &cell.sim}}) {
      Json list = Json::array();
      for (double v : *values) list.push_back(v);
      rounds[name] = std::move(list);
    }
    row["rounds"] = std::move(rounds);
    // Ranks that take turns on the cores measure the scheduler, which a platform of
    // independent hosts does not describe: shown, not counted.
    if (cell.p <= cores) {
      t.sum_model += std::abs(modelled / measured - 1);
      t.sum_sim += std::abs(simulated / measured - 1);
      ++t.count;
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

void print_table(std::ostream& out, const Json& rows, long long cores) {
  out << "\none iteration on this machine (" << cores << " cores): predicted against measured\n";
  fmt::print(out, "{:>14}{:>4}{:>7}{:>13}{:>13}{:>9}{:>13}{:>9}\n", "problem", "p", "b", "measured", "model", "error",
             "simulated", "error");
  for (const Json& r : rows)
    fmt::print(out, "{:>14}{:>4}{:>7}{:>10.3f} ms{:>10.3f} ms{:>+8.1f}%{:>10.3f} ms{:>+8.1f}%{}\n",
               r.at("problem").get<std::string>(), static_cast<long long>(r.at("p").get<double>()),
               static_cast<long long>(r.at("b").get<double>()), 1e3 * r.at("measured_s").get<double>(),
               1e3 * r.at("model_s").get<double>(), 100 * r.at("model_error").get<double>(), 1e3 * r.at("sim_s").get<double>(),
               100 * r.at("sim_error").get<double>(), r.at("oversubscribed").get<bool>() ? "  (oversubscribed)" : "");
}

}  // namespace

po::options_description validate_options() {
  po::options_description options("wulf validate [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("problems", po::value<std::string>()->default_value("digits,digits:20x20"),
       "the problems, a list (by default seed 000's and seed 003's digit nets: iterations of 7-60 ms)")
      ("np", po::value<std::string>()->default_value("1,2"),
       fmt::format("ranks, a list, each in {} (p above this machine's cores oversubscribe it)",
                   range_text(kRanksHereRange)).c_str())
      ("block", po::value<std::string>()->default_value("256,1024"),
       fmt::format("block sizes, a list, each in {}", range_text(kBlockRange)).c_str())
      ("iterations", whole_in("iterations", {.lo = 1, .hi = 1e6})->default_value(20),
       "iterations per calibrated, measured or simulated run (short runs on a busy machine are noisy)")
      ("repeat", whole_in("repeat", {.lo = 1, .hi = 1000})->default_value(3),
       "rounds of calibrate, measure and simulate, interleaved over the table; each row takes the median "
       "of its rounds (--testbed --platform: the calls each cell of the grid takes the mean of)")
      ("train-size", whole_in("train-size", kPatternCountRange),
       "use only the first N training patterns (0: all; default: 4096 for digits problems, all for others)")
      ("machine", po::value<std::string>()->default_value("this-machine"), "name of this machine in the files written")
      ("timeout", timeout_value(), timeout_help("each run (calibration, training): ").c_str())
      ("testbed", "instead: seed 000's Table V fit (Ti, Tw) and Table VII for Bat Cave by paper, model, simulation "
                  "and testbed (real Open MPI over an emulated Bat Cave here; root; docs/testbed.md)")
      ("allreduce", allreduce_value()->default_value("rdb"),
       "--testbed: Table VII's allreduce on both engines: rdb (seed 000's recursive doubling), default (Open MPI "
       "4.1's choice, as wulf train --allreduce default), redbcast, ring or rabenseifner; Table V's fit is "
       "recursive doubling's")
      ("platform", po::value<std::string>(),
       "--testbed: instead of Bat Cave's tables, platform FILE's allreduce and reduce grid (p = 2, 4, 8, 4 096 to "
       "54 912 doubles) and a training run, simulation against testbed, the algorithms Open MPI 4.1's choice")
      ("elements", po::value<std::string>(),
       fmt::format("--testbed --platform: the grid's sizes, doubles a rank, a list, each in {} (default {})",
                   range_text(kBenchElementsRange), PlatformGrid{}.elements).c_str())
      ("out", po::value<std::string>(), "write the table (JSON) to FILE");
  return options;
}

int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = validate_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  const bool platform_grid = vm.count("testbed") && vm.count("platform");
  if (vm.count("elements") && !platform_grid) throw InputError("--elements is for wulf validate --testbed --platform");
  if (vm.count("testbed")) {
    for (const char* other : {"problems", "np", "block", "iterations", "train-size", "machine"})
      if (!vm[other].defaulted() && vm.count(other))
        throw InputError(std::string("--") + other + " is for wulf validate without --testbed");
    if (!vm["repeat"].defaulted() && !platform_grid)
      throw InputError("--repeat is for wulf validate without --testbed, or with --testbed --platform");
    const std::string path = vm.count("out") ? vm["out"].as<std::string>() : "";
    const std::string timeout = vm.count("timeout") ? fmt::format("{}", vm["timeout"].as<double>()) : "";
    if (vm.count("platform")) {
      if (!vm["allreduce"].defaulted()) throw InputError("--allreduce is for wulf validate --testbed without --platform");
      PlatformGrid grid;
      if (vm.count("elements"))
        grid.elements = fmt::format("{}", fmt::join(size_list(vm["elements"].as<std::string>(), "elements",
                                                              kBenchElementsRange), ","));
      if (!vm["repeat"].defaulted()) grid.repeat = vm["repeat"].as<long long>();
      return validate_testbed_platform(vm["platform"].as<std::string>(), grid, path, timeout, out, err);
    }
    if (!path.empty() && is_leader()) check_writable(path, "--out");
    return validate_testbed(path, vm.count("timeout") ? fmt::format("{}", vm["timeout"].as<double>()) : "",
                            vm["allreduce"].as<std::string>(), out, err);
  }
  if (!vm["allreduce"].defaulted()) throw InputError("--allreduce is for wulf validate --testbed");
  if (vm.count("platform")) throw InputError("--platform is for wulf validate --testbed");
  const ValidateJob job = read_validate_job(vm);
  Table table = tabulate(measure_rounds(job, Runner(), out, err), job.cores);
  print_table(out, table.rows, job.cores);
  const int count = table.count;
  const double mae_model = count ? table.sum_model / count : NAN, mae_sim = count ? table.sum_sim / count : NAN;
  if (count)
    fmt::print(out,
               "mean absolute error over the {} rows with one rank per core, median of {} round(s): model {:.1f}%, "
               "simulation {:.1f}% (target for the simulation: 5%, seed 000's model reached about 5%)\n",
               count, job.repeat, 100 * mae_model, 100 * mae_sim);
  else
    out << "no row has one rank per core: no mean absolute error\n";
  if (!job.out.empty() && is_leader()) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"]["command"] = "validate";
    record["config"]["cores"] = job.cores;
    record["config"]["iterations"] = job.iterations;
    record["config"]["repeat"] = job.repeat;
    record["config"]["versions"] = versions_json();
    record["rows"] = std::move(table.rows);
    record["mean_absolute_error"]["rows"] = count;
    if (count) {
      record["mean_absolute_error"]["model"] = mae_model;
      record["mean_absolute_error"]["sim"] = mae_sim;
    }
    write_file_atomically(job.out, record_text(record) + "\n");
    out << "record: " << job.out << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
