// A link's latency on the testbed (issue 32, item 5): a wire that holds every frame for a
// fixed time. The kernel here has no netem, so the testbed puts a namespace of its own in
// the middle of each veth pair whose platform link has a latency, and this forwarder copies
// each Ethernet frame from one of its two interfaces to the other once the frame has been
// there for that direction's delay (the link's latency times the dilation). It works at the
// level of frames (packet sockets), so the wire is transparent: ARP, IP and TCP pass as they
// are, and frames leave in the order they came.
//
// A frame's time of arrival is the kernel's (SO_TIMESTAMPNS), so the time the forwarder
// takes to wake does not add to the delay; what it adds is the time from its wake-up at the
// frame's due time to the frame's send (tens of microseconds, measured by the ping-pong of
// `wulf platform bench --engine testbed` against the simulation; README).
#pragma once

#include <string>

namespace wulf {

struct DelayLinkSpec {
  std::string a, b;     // the two interfaces, in this process's network namespace
  double a_to_b_s = 0;  // how long a frame that arrives at a waits before it leaves by b
  double b_to_a_s = 0;
};

// `wulf testbed delay A B SECONDS SECONDS`: opens both interfaces (std::runtime_error naming
// the one that cannot be), then leaves a process of its own that forwards until it gets
// SIGTERM (the namespace's removal ends every process in it) or an interface is gone, and
// returns: the wire is ready when this returns.
void start_delay_link(const DelayLinkSpec& spec);

}  // namespace wulf
