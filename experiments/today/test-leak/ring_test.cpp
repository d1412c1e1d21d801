// A ring of messages, each completed by MPI_Test or by MPI_Wait, timed in wall seconds per
// 1 000 rounds: SimGrid 3.32 keeps every request that MPI_Test completes in its actor's list
// of activities, which every later completion scans (experiments/today/README.md).
//
// Each round: post an MPI_Irecv from the left and an MPI_Isend to the right (200 000 bytes,
// above SMPI's 65 536-byte detached-send threshold), compute 1e10 flops (the messages arrive
// meanwhile), then complete both: "wait" with MPI_Wait, "test" with MPI_Test (done by
// then), as a progress point of wulf's overlap strategy does; "waitany-self" with MPI_Waitany
// over the request and a zero-byte message to itself (MPI_Issend, never detached), which
// returns the request if it is done and the self-message otherwise; "s4u" the same messages as
// SimGrid s4u comms between the ranks' mailboxes, each tested by Comm::wait_any_for with a
// timeout of 0 (the kernel waits on it for no time: a done comm is finished with a waiter).
#include <mpi.h>
#include <simgrid/s4u.hpp>
#include <smpi/smpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "wait";
  if (mode != "wait" && mode != "test" && mode != "waitany-self" && mode != "s4u") {
    if (rank == 0) std::fprintf(stderr, "ring_test: mode %s: must be wait, test, waitany-self or s4u\n", mode.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 4000;
  // "early": each message is also tested once right after posting, before the compute (not
  // done then), as a progress point that comes too soon.
  const bool early = argc > 3 && std::strcmp(argv[3], "early") == 0;
  std::vector<char> out(200000), in(200000);

  // The round's two messages (0: from the left, 1: to the right), as MPI requests or s4u comms.
  MPI_Request q[2];
  simgrid::s4u::CommPtr comms[2];
  simgrid::s4u::Mailbox* mine = simgrid::s4u::Mailbox::by_name("ring-" + std::to_string(rank));
  simgrid::s4u::Mailbox* right = simgrid::s4u::Mailbox::by_name("ring-" + std::to_string((rank + 1) % size));
  void* got = nullptr;
  auto post = [&] {
    if (mode == "s4u") {
      comms[0] = mine->get_async(&got), comms[1] = right->put_async(out.data(), out.size());
      return;
    }
    MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_CHAR, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_CHAR, (rank + 1) % size, 0, MPI_COMM_WORLD, &q[1]);
  };
  // The self-message of waitany-self: one always under way, replaced when MPI_Waitany returns it.
  char self_out = 0, self_in = 0;
  MPI_Request self_recv = MPI_REQUEST_NULL, self_send = MPI_REQUEST_NULL;
  auto post_self = [&] {
    MPI_Irecv(&self_in, 0, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &self_recv);
    MPI_Issend(&self_out, 0, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &self_send);
  };
  if (mode == "waitany-self") post_self();
  // Whether message k is done now, completing it if so.
  auto test = [&](int k) {
    if (mode == "s4u") return simgrid::s4u::Comm::wait_any_for({comms[k]}, 0.0) == 0;
    if (mode == "test") {
      int done = 0;
      MPI_Test(&q[k], &done, MPI_STATUS_IGNORE);
      return done != 0;
    }
    MPI_Request both[2] = {q[k], self_recv};
    int index = MPI_UNDEFINED;
    MPI_Waitany(2, both, &index, MPI_STATUS_IGNORE);
    q[k] = both[0], self_recv = both[1];
    if (index == 0) return true;
    MPI_Wait(&self_send, MPI_STATUS_IGNORE);
    post_self();
    return false;
  };
  auto wait = [&](int k) {
    if (mode == "s4u") comms[k]->wait();
    else MPI_Wait(&q[k], MPI_STATUS_IGNORE);
  };

  long found_by_test = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int round = 1; round <= rounds; ++round) {
    post();
    bool done[2] = {false, false};
    for (int k = 0; k < 2 && early && mode != "wait"; ++k) done[k] = test(k);
    smpi_execute_flops(1e10);
    for (int k = 0; k < 2; ++k) {
      if (!done[k] && mode != "wait") done[k] = test(k);
      if (done[k]) ++found_by_test;
      else wait(k);
    }
    if (rank == 0 && round % 1000 == 0) {
      const auto t1 = std::chrono::steady_clock::now();
      std::printf("%s: rounds %5d-%5d: %.2f s\n", mode.c_str(), round - 999, round,
                  std::chrono::duration<double>(t1 - t0).count());
      t0 = t1;
    }
  }
  if (mode == "waitany-self") {
    MPI_Wait(&self_send, MPI_STATUS_IGNORE);  // the last self-message, never returned
    MPI_Wait(&self_recv, MPI_STATUS_IGNORE);
  }
  if (rank == 0)
    std::printf("%s: %ld of %d requests found done by the test; simulated time %.9f s\n", mode.c_str(),
                found_by_test, 2 * rounds, MPI_Wtime());
  MPI_Finalize();
  return 0;
}
