// What a rank learns from, and tells, the front end that started it: the status file in which
// it says that it started and how it ended (engine/launch reads it), and on the testbed the
// description of its host (engine/testbed writes it).
#pragma once

#include "nn/layer_table.hpp"

#include "util/json.hpp"

#include <string>

namespace wulf {

// Inside a rank: one line "code rank message" into the front end's status file
// (WULF_STATUS_FILE), from rank 0 when it finishes and from any rank that fails. The file
// must exist (the front end made it); nothing is written otherwise.
void report_rank_status(int code, int rank, const std::string& message);
// Inside a rank, as it starts: "started rank pid host" into the same file, so that the
// front end can name a rank that stops or is killed from outside.
void report_rank_started(int rank);

// Inside a rank of a testbed run: the description the front end wrote (WULF_TESTBED_FILE),
// or null outside one.
Json testbed_description();
// This rank's host's speed and collective overhead, from the description.
struct TestbedRankFacts {
  double speed_flops = 0;
  double collective_overhead_s = 0;
  std::string device;                         // wulf:device ("": none)
  KindEfficiency efficiency = full_efficiency;  // wulf:efficiency
};
TestbedRankFacts testbed_rank_facts(const Json& description, int rank);

}  // namespace wulf
