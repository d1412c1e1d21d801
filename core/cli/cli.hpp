// The `wulf` command: `wulf train ...` and friends, as a function so tests can run it.
#pragma once

#include "comm/comm.hpp"
#include "comm/compute.hpp"

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace wulf {

// args excludes the program name: {"train", "--problem", "encoder"}.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// One rank of `wulf train --engine real|sim`: args are wulf train's options; comm is MPI's
// world; make_compute is the engine's compute charging.
using ComputeFactory = std::function<std::unique_ptr<Compute>(const ComputeConfig&)>;
int run_rank(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
             std::ostream& out, std::ostream& err);
// One rank of `wulf platform bench` (predict/comm_bench.hpp).
int run_rank_bench(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
                   std::ostream& out, std::ostream& err);
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

}  // namespace wulf
