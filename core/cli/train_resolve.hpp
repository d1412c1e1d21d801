// `wulf train`'s options (cli/train_options) resolved into the job every rank runs.
#pragma once

#include "job/train_job.hpp"

#include <boost/program_options/variables_map.hpp>

#include <string>
#include <vector>

namespace wulf {

// The job of vm (train_options()): the problem's defaults where the options say nothing,
// its data's shape read (the whole data under --engine seq), checked against this machine's
// memory, the record's config made. Throws InputError for an option that does not fit.
TrainJob resolve(const boost::program_options::variables_map& vm);

// The job of the record named by --rerun (its "config"), with the overrides vm gives: where
// and how it runs (--engine, --np, --platform, --compute, --profile, --dilation, --hostfile,
// --mpirun-args, --oversubscribe, the collectives, --data-dir) and its outputs (--out,
// --weights-out, --quiet; the record's own are not written again). Any other option is
// refused; so is a record of an older wulf, or one whose config does not read as a job, with
// the field named. The data is read and the job checked as resolve does.
TrainJob resolve_rerun(const boost::program_options::variables_map& vm);

// The memory `wulf ARGS` would hold on this machine at once, where ARGS is a `wulf train` run
// (args[0] "train"): its own front end's estimate (config.memory_estimate.machine_bytes), for
// the sweep runner's pool (cli/runner.hpp). 0 for any other command, or where the arguments do
// not resolve: the run then says what is wrong itself.
double train_memory_bytes(const std::vector<std::string>& args);

// --hosts (of wulf train and wulf testbed run): a file of one host name per line (blank lines
// and # comments skipped), else a list; one host per rank of np, and no --ranks-per-host
// beside it. The names are checked against the platform when it is read (place_ranks).
std::vector<std::string> rank_hosts(const std::string& text, long long np, long long ranks_per_host);

// The MNIST folder a run reads without --data-dir: $WULF_MNIST_DIR, else the one found at
// build time.
std::string default_mnist_dir();

}  // namespace wulf
