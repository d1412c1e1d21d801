// A training job as JSON: what the front end hands to the ranks, what the record keeps as its
// "config", and what `wulf train --rerun RECORD` runs again.
#pragma once

#include "job/train_job.hpp"
#include "util/json.hpp"

#include <string>

namespace wulf {

// The format of the job in a record's config; a record without it, or of another, is not a
// job this wulf can run again.
inline constexpr int job_format = 1;

// The job with the facts of its data (sizes, the problem's description, the versions): the
// record's "config" without "memory_estimate". Keys and their order are those of the records
// of earlier wulfs, with the fields that make it a whole job after them.
Json job_json(const TrainJob& job);
// The record's config.protocol on the platform engines: how a message's data moves (the
// testbed: Open MPI's eager protocol up to its limit, over fixed socket buffers; sim: SMPI's
// thresholds, its rendezvous unless --eager-limit), the settings that make it so, and why the
// two defaults are not one setting (experiments/testbed, section 7). eager_limit 0: the default.
Json protocol_json(bool testbed, long long eager_limit);
// Open MPI's eager limit for the job: the one given, else (eager_limit 0) the testbed's,
// kTestbedEagerBytes, its btl_tcp_eager_limit. Under --sim-messages fifo a message of at least
// this many bytes goes by Open MPI's rendezvous handshake.
long long open_mpi_eager_bytes(long long eager_limit);

// The job a config holds (job_json's, or a record's "config"). The problem's data is not read
// (load_problem) and nothing is checked against files (check_job). Throws InputError
// "SOURCE: config.FIELD: what is wrong" for a field that is missing, of the wrong type or out
// of range, and for a config without job_format (a record of an older wulf).
TrainJob job_from_json(const Json& config, const std::string& source);

}  // namespace wulf
