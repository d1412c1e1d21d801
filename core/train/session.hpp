// Training-session parallelism (seed 000 section II, --strategy session): the runs of a
// parameter sweep (--sweep "eta=0.5,1.5;alpha=0.5,0.9;block=4,16") are spread over the
// ranks, session i on rank i mod p; each rank trains its sessions one after another on the
// whole data set, and the results come back to rank 0 as one table.
#pragma once

#include "util/errors.hpp"
#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "train/trainer.hpp"

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace wulf {

// The sweep's configurations: the cartesian product of the listed values, the rest from
// base, in the order eta, alpha, block, seed (the last key varies fastest). Keys: eta, alpha,
// block, seed. Throws InputError naming a bad key or value.
std::vector<TrainConfig> sweep_configs(const TrainConfig& base, const std::string& sweep);

struct SessionOutcome {
  std::size_t index = 0;  // in sweep_configs' order
  int rank = 0;
  TrainConfig config;
  std::string status;
  int iterations = 0;
  double seconds = 0;     // engine time of the session
  double train_error = 0, test_error = 0, test_accuracy = 0;  // in config.metric; accuracy if a classifier
  // Per iteration of the session: iteration, time_s (the session's own engine seconds),
  // train_error, test_error (config.metric), test_accuracy (NaN where not measured).
  std::vector<std::array<double, 5>> history;
};

// Runs this rank's sessions and returns all sessions' outcomes on rank 0 (empty elsewhere).
// phases gets the time of this rank's sessions; after_iteration runs after each of their
// iterations (run_train's).
template <class T>
std::vector<SessionOutcome> train_sessions(const NetSpec& spec, const Dataset& train, const Dataset& test,
                                           const std::vector<TrainConfig>& sessions, Comm& comm, Compute& compute,
                                           PhaseTimes& phases, const std::function<void()>& after_iteration = {});

}  // namespace wulf
