// A ring of messages, each completed by MPI_Test or by MPI_Wait, timed in wall seconds per
// 1 000 rounds: SimGrid 3.32 keeps every request that MPI_Test completes in its actor's list
// of activities, which every later completion scans (experiments/today/README.md).
//
// Each round: post an MPI_Irecv from the left and an MPI_Isend to the right (200 000 bytes,
// above SMPI's 65 536-byte detached-send threshold), compute 1e10 flops (the messages arrive
// meanwhile), then complete both: "wait" with MPI_Waitall, "test" with MPI_Test (done by
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
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "wait";
  const bool by_test = std::strcmp(mode, "test") == 0, by_waitany = std::strcmp(mode, "waitany-self") == 0;
  const bool by_s4u = std::strcmp(mode, "s4u") == 0;
  simgrid::s4u::Mailbox* mine = simgrid::s4u::Mailbox::by_name("ring-" + std::to_string(rank));
  simgrid::s4u::Mailbox* right = simgrid::s4u::Mailbox::by_name("ring-" + std::to_string((rank + 1) % size));
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 4000;
  // "early": each request is also tested once right after posting, before the compute (not
  // done then), as a progress point that comes too soon.
  const bool early = argc > 3 && std::strcmp(argv[3], "early") == 0;
  std::vector<char> out(200000), in(200000);
  long completed_by_test = 0;
  // The self-message: one always under way, replaced when MPI_Waitany returns it.
  char self_out = 0, self_in = 0;
  MPI_Request self_recv = MPI_REQUEST_NULL, self_send = MPI_REQUEST_NULL;
  auto post_self = [&] {
    MPI_Irecv(&self_in, 0, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &self_recv);
    MPI_Issend(&self_out, 0, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &self_send);
  };
  auto test_by_waitany = [&](MPI_Request& r) {
    MPI_Request both[2] = {r, self_recv};
    int index = MPI_UNDEFINED;
    MPI_Waitany(2, both, &index, MPI_STATUS_IGNORE);
    r = both[0], self_recv = both[1];
    if (index == 0) return true;
    MPI_Wait(&self_send, MPI_STATUS_IGNORE);
    post_self();
    return false;
  };
  if (by_waitany) post_self();
  auto t0 = std::chrono::steady_clock::now();
  for (int round = 1; round <= rounds; ++round) {
    if (by_s4u) {
      void* got = nullptr;
      const simgrid::s4u::CommPtr comms[2] = {mine->get_async(&got), right->put_async(out.data(), out.size())};
      bool found[2] = {false, false};
      for (int k = 0; k < 2 && early; ++k) found[k] = simgrid::s4u::Comm::wait_any_for({comms[k]}, 0.0) == 0;
      smpi_execute_flops(1e10);
      for (int k = 0; k < 2; ++k) {
        if (found[k]) continue;
        if (simgrid::s4u::Comm::wait_any_for({comms[k]}, 0.0) == 0) ++completed_by_test;
        else comms[k]->wait();
      }
    } else {
    MPI_Request q[2];
    MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_CHAR, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_CHAR, (rank + 1) % size, 0, MPI_COMM_WORLD, &q[1]);
    int found[2] = {0, 0};
    for (int k = 0; k < 2 && early && (by_test || by_waitany); ++k) {
      if (by_waitany) found[k] = test_by_waitany(q[k]);
      else MPI_Test(&q[k], &found[k], MPI_STATUS_IGNORE);
    }
    smpi_execute_flops(1e10);
    if (by_test || by_waitany) {
      for (int k = 0; k < 2; ++k) {
        MPI_Request& r = q[k];
        int done = found[k];
        if (done) continue;
        if (by_waitany) done = test_by_waitany(r);
        else MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) ++completed_by_test;
        else MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
    } else {
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    }
    }
    if (rank == 0 && round % 1000 == 0) {
      const auto t1 = std::chrono::steady_clock::now();
      std::printf("%s: rounds %5d-%5d: %.2f s\n", mode, round - 999, round,
                  std::chrono::duration<double>(t1 - t0).count());
      t0 = t1;
    }
  }
  if (by_waitany) {
    MPI_Wait(&self_send, MPI_STATUS_IGNORE);  // the last self-message, never returned
    MPI_Wait(&self_recv, MPI_STATUS_IGNORE);
  }
  if (rank == 0)
    std::printf("%s: %ld of %d requests found done by the test; simulated time %.9f s\n", mode, completed_by_test,
                2 * rounds, MPI_Wtime());
  MPI_Finalize();
  return 0;
}
