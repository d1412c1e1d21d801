// Computation under smpirun that lets the messages of --sim-messages fifo go on meanwhile
// (sim/s4u_messages.cpp).
#pragma once

namespace wulf {

// Executes flops on this rank's host. Meanwhile, under --sim-messages fifo, each send this rank
// has queued behind another to one peer goes on the wire as soon as the one before it is
// delivered: Open MPI has written it into the socket behind that one, and the kernel sends it
// while the rank computes.
void execute_flops(double flops);

}  // namespace wulf
