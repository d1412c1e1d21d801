// One `wulf train` run, resolved from its options and the problem's defaults: everything
// the front end checks before any rank starts and every rank then trains by.
#pragma once

#include "comm/compute.hpp"
#include "comm/staged_reduce.hpp"
#include "data/problems.hpp"
#include "nn/mlp.hpp"
#include "train/trainer.hpp"
#include "util/json.hpp"

#include <boost/program_options/variables_map.hpp>

#include <string>
#include <vector>

namespace wulf {

// Everything a training run needs, resolved from options and problem defaults.
struct TrainJob {
  Problem problem;
  NetSpec spec;
  TrainConfig config;
  bool double_precision = false;
  bool quiet = false;
  std::string out_path;
  std::string weights_path;      // --weights-out
  std::string weights_in;        // --weights-in, whose values are initial_weights
  std::vector<double> initial_weights;
  Json config_json;  // the record's "config"
  double load_seconds = 0;
  // The engine: seq, real or sim, on np ranks.
  std::string engine = "seq";
  int np = 1;
  std::string allreduce = "default";
  std::string reduce = "default";
  ReduceLayout reduce_layout;  // four-stage (empty: the library reduce)
  bool has_reduce_layout = false;
  std::string bcast = "default";
  std::string platform;
  ComputeConfig compute;
  std::string oversubscribe = "auto";
  Strategy strategy = Strategy::block;
  std::string sweep;                  // session: the --sweep text
  std::vector<TrainConfig> sessions;  // session: the sweep
  long long grow = 0;                 // sim what-if: hosts of the grown cluster (0: none)
  long long eager_limit = 0;          // sim, testbed: --eager-limit bytes (0: the engine's default)
  long long ranks_per_host = 0;       // sim: most ranks on one host (0: its cores)
  // Things the user should know before training that do not stop it (the front end prints
  // them): targets the output activation cannot reach, say.
  std::vector<std::string> warnings;
  std::string hostfile;                    // real --hostfile (empty: this machine)
  std::vector<std::string> mpirun_args;    // real --mpirun-args, word by word
  std::vector<std::string> rank_hosts;  // sim --hosts: rank r's host at r (empty: the platform's order)
  double machine_cost_usd = 0;        // price/performance (0: none; sim: the platform's)
};

// Where this rank stands; the front end is rank 0 of 1.
struct RankPlace {
  int rank = 0;
  int ranks = 1;
  bool in_rank_program = false;
};

// The job of vm (train_options()); throws InputError for an option that does not fit. A
// rank reads the part of the data its place and strategy give it; the front end of a
// parallel run only checks the data's shape.
TrainJob resolve(const boost::program_options::variables_map& vm, const RankPlace& place);

}  // namespace wulf
