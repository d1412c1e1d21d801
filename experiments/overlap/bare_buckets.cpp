// The bare SMPI peer of issue 33's item 7: what SimGrid itself spends on the messages that a
// time-only `wulf train --strategy overlap --bucket-bytes 0 --bucket-allreduce rdb` run moves,
// with nothing of wulf (no options, data, net, compute, record). Each rank makes UPDATES
// rounds; in each it reduces one buffer per SIZE (floats, SMPI_SHARED_MALLOC, nothing added:
// a time-only run never reads the sums) by recursive doubling over MPI_Isend/MPI_Irecv, with
// the partners of Open MPI's and wulf's rdb (P must be a power of two here):
//   sequential  the buffers one after another, each step waited (MPI_Waitall) before the
//               next: the messages of `block` with one allreduce per tensor, in lockstep;
//   concurrent  every buffer's first step posted at once, then MPI_Waitany over all the
//               steps under way, each buffer posting its next step as soon as its current
//               one is done: the buckets of `overlap` in flight together (in a time-only
//               digits run the backward pass is short beside the allreduces, so they are).
// Rank 0 prints the simulated seconds as one JSON line.
//   smpirun -np P -platform F -hostfile H --cfg=smpi/privatization:no \
//     wulf-bare-buckets sequential|concurrent UPDATES SIZE...
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

float* shared = nullptr;  // one block for every rank's buffers (nobody reads them)

struct Bucket {
  int count = 0;    // floats
  int step = 0;     // the mask of the step under way is 1 << step
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int pending = 0;  // of req, not yet complete
};

void post(Bucket& b, int rank, int tag) {
  const int partner = rank ^ (1 << b.step);
  MPI_Irecv(shared + b.count, b.count, MPI_FLOAT, partner, tag, MPI_COMM_WORLD, &b.req[0]);
  MPI_Isend(shared, b.count, MPI_FLOAT, partner, tag, MPI_COMM_WORLD, &b.req[1]);
  b.pending = 2;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "";
  const long updates = argc > 2 ? std::atol(argv[2]) : 0;
  std::vector<Bucket> buckets;
  long most = 0;
  for (int i = 3; i < argc; ++i) {
    const long n = std::atol(argv[i]);
    if (n < 1 || n > (1L << 28)) buckets.clear(), i = argc;
    else buckets.push_back({.count = static_cast<int>(n)}), most = n > most ? n : most;
  }
  if ((mode != "sequential" && mode != "concurrent") || updates < 1 || buckets.empty() || (size & (size - 1)) != 0) {
    std::fprintf(stderr, "usage: wulf-bare-buckets sequential|concurrent UPDATES SIZE... (UPDATES positive, each "
                         "SIZE from 1 to 2^28 floats, a power-of-two number of ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (!shared) shared = static_cast<float*>(SMPI_SHARED_MALLOC(2 * static_cast<std::size_t>(most) * sizeof(float)));
  int steps = 0;
  while ((1 << steps) < size) ++steps;
  const double t0 = MPI_Wtime();
  for (long u = 0; u < updates && steps > 0; ++u) {
    if (mode == "sequential") {
      for (Bucket& b : buckets)
        for (b.step = 0; b.step < steps; ++b.step) {
          post(b, rank, 1);
          MPI_Waitall(2, b.req, MPI_STATUSES_IGNORE);
        }
      continue;
    }
    std::vector<MPI_Request> all(2 * buckets.size(), MPI_REQUEST_NULL);
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      buckets[k].step = 0;
      post(buckets[k], rank, static_cast<int>(k) + 1);
      all[2 * k] = buckets[k].req[0], all[2 * k + 1] = buckets[k].req[1];
    }
    for (std::size_t left = buckets.size(); left > 0;) {
      int i = MPI_UNDEFINED;
      MPI_Waitany(static_cast<int>(all.size()), all.data(), &i, MPI_STATUS_IGNORE);
      Bucket& b = buckets[static_cast<std::size_t>(i) / 2];
      if (--b.pending > 0) continue;
      if (++b.step == steps) {
        --left;
        continue;
      }
      const auto k = static_cast<std::size_t>(&b - buckets.data());
      post(b, rank, static_cast<int>(k) + 1);
      all[2 * k] = b.req[0], all[2 * k + 1] = b.req[1];
    }
  }
  const double seconds = MPI_Wtime() - t0;
  if (rank == 0)
    std::printf("{\"np\": %d, \"mode\": \"%s\", \"updates\": %ld, \"buckets\": %zu, \"simulated_s\": %.9g}\n", size,
                mode.c_str(), updates, buckets.size(), seconds);
  MPI_Finalize();
  return 0;
}
