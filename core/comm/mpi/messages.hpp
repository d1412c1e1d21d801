// Point-to-point messages that travel beside the engine's MPI library: those of a communicator
// that Comm::duplicate_for_schedules made for wulf's own schedules (comm/nb_allreduce,
// tree_collectives, staged_reduce). Under SMPI they are SimGrid comms between mailboxes
// (sim/s4u_messages.cpp): SimGrid 3.32 keeps every request that MPI_Test completes in its
// actor's list of activities, which every later completion scans, so a run of overlapped
// buckets, whose progress points test, slows down iteration after iteration
// (experiments/today/README.md, "Why"). Under Open MPI there are none: MPI carries them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

namespace wulf {

class Messages {
 public:
  virtual ~Messages() = default;
  // A send of bytes from data to dest (a rank of the communicator), apart from other tags:
  // its ticket. data must stay as it is until the ticket is done.
  virtual int isend(const void* data, std::size_t bytes, int dest, int tag) = 0;
  // A receive of at most bytes from source (never any source) into data, values of
  // value_bytes each: its ticket.
  virtual int irecv(void* data, std::size_t bytes, std::size_t value_bytes, int source, int tag) = 0;
  // Whether the ticket's message is done; a ticket that tested true is done with.
  virtual bool test(int ticket) = 0;
  // Completes the ticket: the values received (0 for a send).
  virtual std::size_t wait(int ticket) = 0;
};

// The messages of comm, made by every rank of it (a collective), or nullptr where the
// engine's MPI carries them: always under Open MPI; under SMPI where SMPI would charge a
// message more than its flow over the links: an overhead per message (smpi/os, smpi/ois,
// smpi/or, in the configuration or on a host). With `fifo` the messages from one rank to
// another travel one after another (SimMessages::fifo), those of at least handshake_bytes
// (0: none) by Open MPI's rendezvous handshake.
std::unique_ptr<Messages> engine_messages(MPI_Comm comm, bool fifo, std::size_t handshake_bytes);

}  // namespace wulf
