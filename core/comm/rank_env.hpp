// What a rank learns from, and tells, the front end that started it: the status file in which
// it says that it started and how it ended (engine/launch reads it), and on the testbed the
// description of its host (engine/testbed writes it).
#pragma once

#include "nn/layer_table.hpp"

#include "util/json.hpp"
#include "util/text.hpp"

#include <string>

namespace wulf {

// Inside a rank: one line "code rank message" into the front end's status file
// (WULF_STATUS_FILE), from rank 0 when it finishes and from any rank that fails. The file
// must exist (the front end made it); nothing is written otherwise.
void report_rank_status(int code, int rank, const std::string& message);
// Inside a rank, as it starts: "started rank pid host" into the same file, so that the
// front end can name a rank that stops or is killed from outside.
void report_rank_started(int rank);

// The testbed's default eager limit, 4 MiB: messages of Bat Cave's gradients go in one piece.
// Open MPI's rendezvous beyond 64 KiB sends a handshake that waits behind data on the wire,
// which the simulator's rendezvous does not model (docs/testbed.md). A rank under --sim-messages
// fifo takes it for the limit the testbed would run with.
constexpr long long kTestbedEagerBytes = 4 << 20;
// Open MPI's TCP sockets' buffers on the testbed, bytes (engine/testbed's Testbed::command),
// and Open MPI 4.1's btl_tcp_max_send_size.
constexpr long long kSocketBufferBytes = 4 << 20;
constexpr long long kDefaultMaxSendBytes = 128 << 10;
// The time dilation D of a testbed (--dilation, or the default): at least 1 (real time), at
// most 600, where TCP's least retransmission timeout, which the testbed dilates (200 ms times
// D), reaches the largest Linux allows (TCP_RTO_MAX, 120 s): beyond it TCP's timers would no
// longer run D times slower than the platform's.
inline constexpr Range kDilationRange{.lo = 1, .hi = 600};

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
