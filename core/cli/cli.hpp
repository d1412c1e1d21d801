// The `wulf` command: `wulf train ...` and friends, as functions so tests can run them.
#pragma once

#include "cli/runner.hpp"

#include <iosfwd>
#include <utility>
#include <string>
#include <vector>

namespace boost::program_options {
class options_description;
}

namespace wulf {

// args excludes the program name: {"train", "--problem", "encoder"}. The command runs with
// an InputLog of its own (util/files.hpp): none of its outputs may be a file it has read.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `wulf train ...` (cli/train.cpp).
int train_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf calibrate ...` (cli/calibrate.cpp).
int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf study` (cli/study.cpp): the main job.
int study_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf validate ...` (cli/validate.cpp).
int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf model ...` (cli/model.cpp).
int model_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf recommend ...` (cli/recommend.cpp).
int recommend_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf platform info|bench ...` (cli/platform.cpp).
int platform_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf plot REC.json... --out F.png` (cli/plot.cpp): error curves of result records.
int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// A run of one iteration of seed 000's function example on Bat Cave (Table VII's runs: Table
// II's phase times charged, no arithmetic, recursive doubling) on --engine engine (sim or
// testbed) with p ranks and block b, its record at `record`; timeout: each run's --timeout
// seconds (empty: none); extra: further options of wulf train (e.g. --eager-limit);
// allreduce: its --allreduce (seed 000's recursive doubling unless another is asked for).
Job table_vii_job(const std::string& engine, int p, int b, const std::string& record, const std::string& timeout,
                  const std::vector<std::string>& extra = {}, const std::string& allreduce = "rdb");
// The seconds of its iteration; a run that failed is an error of command ("wulf study").
double table_vii_seconds(const JobResult& run, const Job& job, const std::string& command);
// A run of command's that failed: TimedOut for a timeout, else an InputError with what the
// run printed; what names the run ("a simulation").
void check_wulf_run(const JobResult& run, const std::string& command, const std::string& what);
// x's error against reference, in percent.
inline double error_pct(double x, double reference) { return 100.0 * (x - reference) / reference; }
// `wulf validate --testbed --platform P` (cli/validate_platform.cpp): any platform's
// allreduce and reduce grid and one training run, simulation against testbed. The grid's
// sizes (doubles a rank: --elements) and the timed calls a cell (--repeat, their mean).
struct PlatformGrid {
  std::string elements = "4096,16768,54912";  // Bat Cave's sizes of seed 000
  long long repeat = 3;
};
int validate_testbed_platform(const std::string& platform, const PlatformGrid& grid, const std::string& out_path,
                              const std::string& timeout, std::ostream& out, std::ostream& err);
// `wulf validate --testbed` (cli/validate_testbed.cpp): Table V's fit and Table VII four ways.
// allreduce: Table VII's on both engines (--allreduce); Table V's fit is recursive doubling's.
int validate_testbed(const std::string& out_path, const std::string& timeout, const std::string& allreduce,
                     std::ostream& out, std::ostream& err);
// `wulf clean` (cli/clean.cpp): what killed runs left, their temporary files and folders
// and testbed namespaces, removed (remove_temp_leftovers, remove_testbed_leftovers).
int clean_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf testbed check|clean|run` (cli/testbed.cpp).
int testbed_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf testbed run ... -- PROGRAM ARGS` (cli/testbed_run.cpp): any program on a platform's
// emulated cluster; args excludes "run".
int testbed_run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The commands' tables of options, each in its command's file (wulf train's:
// cli/train_options.hpp).
boost::program_options::options_description recommend_options();
boost::program_options::options_description calibrate_options();
boost::program_options::options_description validate_options();
boost::program_options::options_description study_options();
boost::program_options::options_description model_options();
boost::program_options::options_description bench_options();
boost::program_options::options_description testbed_run_options();
// Every command's table, by the command's words ("train", "platform bench", ...), for the
// test that every numeric option states its range and refuses values outside it.
std::vector<std::pair<std::string, boost::program_options::options_description>> command_options();

}  // namespace wulf
