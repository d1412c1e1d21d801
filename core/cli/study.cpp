// `wulf study`: the study a newcomer reads in a minute, and wulf's main job. Seed 000's
// Table VII (the function example on Bat Cave, p = 2, 4, 8, b = 16..128) as the paper
// printed it, as wulf's model computes it, and as wulf's simulator measures it; then the
// same grid predicted for this machine from its own calibration.
#include "cli/cli.hpp"
#include "cli/launcher.hpp"
#include "cli/runner.hpp"
#include "cli/train_options.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "util/paths.hpp"
#include "predict/model.hpp"
#include "train/result_record.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <ostream>

namespace wulf {

Job table_vii_job(const std::string& engine, int p, int b, const std::string& record, const std::string& timeout,
                  const std::vector<std::string>& extra, const std::string& allreduce) {
  const std::string platform = platforms_dir() + "/batcave.xml";
  std::vector<std::string> args{"train",  "--problem", "function",  "--bias",  "off",      "--precision",
                                "double", "--block",   std::to_string(b), "--epochs", "1", "--engine",
                                engine,   "--np",      std::to_string(p), "--platform", platform, "--compute",
                                "calibrated", "--profile", "batcave-function", "--numerics", "off", "--allreduce",
                                allreduce, "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  if (!timeout.empty()) args.insert(args.end(), {"--timeout", timeout});
  return {args, record, {}, {}};
}

double table_vii_seconds(const JobResult& run, const Job& job, const std::string& command) {
  const std::string engine = *(std::find(job.args.begin(), job.args.end(), "--engine") + 1);
  check_wulf_run(run, command, engine == "sim" ? "a simulation" : "a run on the " + engine);
  return json_field<double>(run.record, "/history/1/time_s", job.record);
}

void check_wulf_run(const JobResult& run, const std::string& command, const std::string& what) {
  if (run.code == exit_timeout) throw TimedOut{command + ": " + what + ": " + run.message()};
  if (run.code != exit_ok) throw InputError(command + ": " + what + " failed: " + run.err);
}

namespace {

constexpr const int (&kProcs)[3] = kTableVIIProcs;
constexpr const int (&kBlocks)[4] = kTableVIIBlocks;

// results/study-YYYYMMDD-HHMMSS.json (UTC), in a results/ folder it creates; never an
// existing file, so an earlier study's record is never replaced.
std::string default_record_path() {
  std::filesystem::create_directories("results");
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::string path = std::string("results/study-") + stamp + ".json";
  for (int k = 2; std::filesystem::exists(path); ++k) path = std::string("results/study-") + stamp + "-" + std::to_string(k) + ".json";
  return path;
}

// Seed 000's Table VII beside wulf's model and simulator: the table printed, its cells for
// the record. Its 16 simulations (one rank at each b, then each cell) run at once.
Json bat_cave_table(std::ostream& out, const Runner& runner, const TempDir& dir, const std::string& timeout) {
  const ModelConstants bat = model_constants(read_profile("batcave-function"));
  std::vector<Job> jobs;
  for (int p : {1, kProcs[0], kProcs[1], kProcs[2]})
    for (int b : kBlocks) jobs.push_back(table_vii_job("sim", p, b, dir.file(fmt::format("p{}-b{}.json", p, b)), timeout));
  const std::vector<JobResult> runs = runner.run(jobs);
  std::vector<double> seconds;
  for (std::size_t k = 0; k < runs.size(); ++k) seconds.push_back(table_vii_seconds(runs[k], jobs[k], "wulf study"));
  Json bat_grid = Json::array();
  out << "speedup of one iteration, Bat Cave: paper / model / simulation\n";
  fmt::print(out, "{:>4}", "p");
  for (int b : kBlocks) fmt::print(out, "{:>20}", "b = " + std::to_string(b));
  out << "\n";
  for (int i = 0; i < 3; ++i) {
    fmt::print(out, "{:>4}", kProcs[i]);
    for (int j = 0; j < 4; ++j) {
      const double sim = seconds[static_cast<std::size_t>(j)] / seconds[static_cast<std::size_t>(4 * (i + 1) + j)];
      const std::string cell =
          fmt::format("{:.2f} / {:.2f} / {:.2f}", kTableVII[i][j], model_speedup(bat, kProcs[i], kBlocks[j]), sim);
      fmt::print(out, "{:>20}", cell);
      Json e = Json::object();
      e["p"] = kProcs[i], e["b"] = kBlocks[j], e["paper"] = kTableVII[i][j];
      e["model"] = model_speedup(bat, kProcs[i], kBlocks[j]), e["simulation"] = sim;
      bat_grid.push_back(std::move(e));
    }
    out << "\n";
  }
  return bat_grid;
}

// This machine's constants (wulf calibrate) at each block size of the table, one
// calibration after another (each times this machine).
std::vector<ModelConstants> calibrate_here(const Runner& runner, const TempDir& dir, const std::string& timeout) {
  std::vector<Job> jobs;
  for (int b : kBlocks) {
    const std::string profile = dir.file("b" + std::to_string(b) + ".profile"),
                      machine = dir.file("b" + std::to_string(b) + ".xml");
    std::vector<std::string> args{"calibrate", "--problem", "function", "--block", std::to_string(b), "--np", "2",
                                  "--profile-out", profile, "--platform-out", machine};
    if (!timeout.empty()) args.insert(args.end(), {"--timeout", timeout});
    jobs.push_back({args, "", {profile, machine}, {}});
  }
  const std::vector<JobResult> runs = runner.run(jobs, Spread::one_at_a_time);
  std::vector<ModelConstants> here;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    check_wulf_run(runs[k], "wulf study", "calibrating this machine");
    here.push_back(model_constants(read_profile(jobs[k].files[0])));
  }
  return here;
}

// The model's speedups for this machine: the table printed, its cells for the record.
Json this_machine_table(std::ostream& out, const std::vector<ModelConstants>& here) {
  Json here_grid = Json::array();
  out << "speedup of one iteration, this machine (model, eq. 7)\n";
  fmt::print(out, "{:>4}", "p");
  for (int b : kBlocks) fmt::print(out, "{:>10}", "b = " + std::to_string(b));
  out << "\n";
  for (int p : kProcs) {
    fmt::print(out, "{:>4}", p);
    for (std::size_t j = 0; j < 4; ++j) {
      fmt::print(out, "{:>10.2f}", model_speedup(here[j], p, kBlocks[j]));
      Json e = Json::object();
      e["p"] = p, e["b"] = kBlocks[j], e["model"] = model_speedup(here[j], p, kBlocks[j]);
      e["Ti_s"] = here[j].Ti, e["Tw_s"] = here[j].Tw, e["Tf_s"] = here[j].Tf, e["Tb_s"] = here[j].Tb;
      e["Tu_s"] = here[j].Tu, e["Ts_s"] = here[j].Ts;
      here_grid.push_back(std::move(e));
    }
    out << "\n";
  }
  return here_grid;
}

}  // namespace

namespace po = boost::program_options;

po::options_description study_options() {
  po::options_description options("wulf study [options]: seed 000's Table VII by the paper, wulf's model and\n"
                                  "wulf's simulator, then the same grid predicted for this machine", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("out", po::value<std::string>(), "write the record (JSON) to FILE (default: results/study-<UTC time>.json)")
      ("timeout", timeout_value(), timeout_help("each run (simulation, calibration): ").c_str());
  return options;
}

int study_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  const po::options_description options = study_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  const std::string timeout = vm.count("timeout") ? fmt::format("{}", vm["timeout"].as<double>()) : "";
  std::string record_path;
  if (vm.count("out")) {
    record_path = vm["out"].as<std::string>();
    // the files its runs read: Bat Cave's platform and profile (this machine's are made here)
    if (is_leader())
      check_output(record_path, "--out",
                   {{"Bat Cave's platform", platforms_dir() + "/batcave.xml"},
                    {"Bat Cave's profile", platforms_dir() + "/profiles/batcave-function.profile"}});
  } else if (is_leader()) {
    record_path = default_record_path();
  }
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"]["command"] = "study";
  record["config"]["platform"] = "platforms/batcave.xml";
  record["config"]["profile"] = "batcave-function";
  record["config"]["versions"] = versions_json();
  const TempDir dir("study");
  const Runner runner;

  out << "How much faster does training go on more processors? Seed 000 (Moerchen) predicted it for\n"
         "its function example (a 2-128-128-1 net, 1 024 patterns) on Bat Cave, 8 PIII nodes on\n"
         "100 Mbit Ethernet, from measured constants (its Tables II and V). wulf does it twice: with\n"
         "the paper's equation (7), and by simulating the cluster (platforms/batcave.xml) in SimGrid.\n\n";
  record["bat_cave"] = bat_cave_table(out, runner, dir, timeout);
  out << "Below 1, more processors are slower than one: the allreduce of 16 768 weights after\n"
         "every block costs more than the work it shares out, until the blocks are large.\n\n";

  out << "The same grid for processors like this machine's cores, from its own measured constants\n"
         "(wulf calibrate: the phases on one core, the allreduce over mpirun on 2 ranks; p = 4, 8\n"
         "extrapolate eq. (4) beyond the cores this machine has):\n"
      << std::flush;
  const std::vector<ModelConstants> here = calibrate_here(runner, dir, timeout);
  record["this_machine"] = this_machine_table(out, here);
  fmt::print(out,
             "(allreduce here: Ti {:.3g} us, Tw {:.3g} ns per weight, against Bat Cave's 365.868 us and 798 ns)\n\n",
             here[0].Ti * 1e6, here[0].Tw * 1e9);
  out << "More: wulf model, wulf validate, wulf train --engine real|sim, wulf platform info|bench;\n"
      << "experiments/README.md lists every table and figure reproduced.\n";
  if (is_leader()) {
    write_file_atomically(record_path, record_text(record) + "\n");
    out << "record: " << record_path << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
