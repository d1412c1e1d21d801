// One rank's part of a `wulf train` run: it trains on comm's ranks (SerialComm for
// --engine seq); rank 0 prints the progress and the result and writes the record.
#pragma once

#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "job/train_job.hpp"

#include <functional>
#include <iosfwd>

namespace wulf {

// The exit code: exit_ok, or exit_diverged when training stopped on a fault. after_iteration
// runs after each iteration (of each session): the front end's check for a signal or its time
// limit under --engine seq, which may throw; nothing in a rank.
int run_train(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out, std::ostream& err,
              const std::function<void()>& after_iteration = {});

}  // namespace wulf
