// The `wulf` command: `wulf train ...` and friends, as a function so tests can run it.
#pragma once

#include "comm.hpp"
#include "compute.hpp"

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace wulf {

// Exit codes of the command.
enum ExitCode : int {
  exit_ok = 0,
  exit_internal = 1,  // a bug or the machine (out of memory, ...)
  exit_input = 2,     // bad options, files or data: nothing was run
  exit_diverged = 3,  // training diverged or stopped on a fault (stopped_on_fault); the record says where
};

// args excludes the program name: {"train", "--problem", "encoder"}.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// One rank of `wulf train --engine real|sim`: args are wulf train's options; comm is MPI's
// world; make_compute is the engine's compute charging.
using ComputeFactory = std::function<std::unique_ptr<Compute>(const ComputeConfig&)>;
int run_rank(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
             std::ostream& out, std::ostream& err);
// One rank of `wulf platform bench` (comm_bench.hpp).
int run_rank_bench(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
                   std::ostream& out, std::ostream& err);
// `wulf calibrate ...` (calibrate_cli.cpp).
int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf study` (study_cli.cpp): the main job.
int study_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf validate ...` (validate_cli.cpp).
int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf model ...` (model_cli.cpp).
int model_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf recommend ...` (recommend_cli.cpp).
int recommend_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf platform info|bench ...` (platform_cli.cpp).
int platform_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `wulf plot REC.json... --out F.png` (plot_cli.cpp): error curves of result records.
int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace wulf
