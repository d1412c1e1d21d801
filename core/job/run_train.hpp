// One rank's part of a `wulf train` run: it trains on comm's ranks (SerialComm for
// --engine seq); rank 0 prints the progress and the result and writes the record.
#pragma once

#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "job/train_job.hpp"

#include <iosfwd>

namespace wulf {

// The exit code: exit_ok, or exit_diverged when training stopped on a fault.
int run_train(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out, std::ostream& err);

}  // namespace wulf
