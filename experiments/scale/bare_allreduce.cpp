// The bare SMPI program of issue 17: what a time-only wulf run costs at the least. Its ranks
// make the collectives a time-only `wulf train --strategy block` run makes, in its order, on
// buffers of the same sizes, and nothing else (no option parsing, no data, no compute):
//   - BEFORE allreduces (MPI_SUM, in place) of 4 doubles (the error sums of the untrained
//     net's evaluations);
//   - CALLS allreduces of ELEMENTS floats (the gradients), out of place into a second buffer,
//     as wulf's SMPI build makes them (Comm::allreduce_sum_spare);
//   - AFTER allreduces of 4 doubles (the error sums of the iterations and the last);
//   - a binomial-tree gather of 12 doubles per rank to rank 0 by sends and receives (the
//     record's phases, as gather_for_record makes it);
//   - a gather of every rank's processor name to rank 0 (the record's hosts).
// Rank 0 prints the simulated seconds of the allreduces as one JSON line. With OP `sum` the
// gradients are each rank's own and reduced by MPI_SUM. With `noop` they are what a time-only
// wulf run makes of them (it never reads those sums): reduced by a user operation that adds
// nothing, from and into one SMPI_SHARED_MALLOC block that every rank uses (its two halves),
// so that SMPI copies no message data. `noop` needs smpi/privatization:no, under which the ranks share globals.
//   smpirun -np P -platform F -hostfile H --cfg=smpi/allreduce:rdb \
//     wulf-bare-allreduce CALLS ELEMENTS sum|noop BEFORE AFTER
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

void add_nothing(void*, void*, int*, MPI_Datatype*) {}

float* shared_gradient = nullptr;  // noop: made by the first rank, one for all: gradient, sums

// n doubles from every rank to rank 0 (all: size * n there), up a binomial tree: rank v
// receives its subtree's blocks from v + 1, v + 2, v + 4, ... and sends them to v less its
// lowest set bit.
void binomial_gather(const std::vector<double>& mine, std::vector<double>& all, int rank, int size) {
  const std::size_t n = mine.size();
  int reach = size;  // the ranks v's subtree covers: its lowest set bit, or up to size
  if (rank != 0)
    for (reach = 1; !(rank & reach) && rank + reach < size;) reach <<= 1;
  std::vector<double> held(n * static_cast<std::size_t>(std::min(reach, size - rank)));
  std::copy(mine.begin(), mine.end(), held.begin());
  std::size_t blocks = 1;
  for (int mask = 1; mask < size; mask <<= 1) {
    if (rank & mask) {
      MPI_Send(held.data(), static_cast<int>(blocks * n), MPI_DOUBLE, rank - mask, 0, MPI_COMM_WORLD);
      return;
    }
    if (rank + mask < size) {
      const std::size_t more = static_cast<std::size_t>(std::min(mask, size - rank - mask));
      MPI_Recv(held.data() + static_cast<std::size_t>(mask) * n, static_cast<int>(more * n), MPI_DOUBLE, rank + mask, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      blocks = static_cast<std::size_t>(mask) + more;
    }
  }
  all = std::move(held);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool given = argc == 6;
  const std::string op_name = given ? argv[3] : "";
  const long calls = given ? std::atol(argv[1]) : 0, elements = given ? std::atol(argv[2]) : 0;
  const long before = given ? std::atol(argv[4]) : -1, after = given ? std::atol(argv[5]) : -1;
  if ((op_name != "sum" && op_name != "noop") || calls < 1 || elements < 1 || elements > (1L << 30) || before < 0 ||
      after < 0) {
    std::fprintf(stderr,
                 "usage: wulf-bare-allreduce CALLS ELEMENTS sum|noop BEFORE AFTER (CALLS and ELEMENTS positive, "
                 "ELEMENTS at most 2^30, BEFORE and AFTER at least 0)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const bool noop = op_name == "noop";
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  const auto n = static_cast<std::size_t>(elements);
  std::vector<float> own(noop ? 0 : 2 * n, 1.0f);
  if (noop && !shared_gradient) shared_gradient = static_cast<float*>(SMPI_SHARED_MALLOC(2 * n * sizeof(float)));
  float* gradient = noop ? shared_gradient : own.data();
  float* gradient_sums = gradient + n;
  double sums[4] = {1, 2, 3, 4};
  MPI_Op op = MPI_SUM;
  if (noop) MPI_Op_create(&add_nothing, 1, &op);
  const double t0 = MPI_Wtime();
  for (long c = 0; c < before; ++c) MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (long c = 0; c < calls; ++c)
    MPI_Allreduce(gradient, gradient_sums, static_cast<int>(elements), MPI_FLOAT, op, MPI_COMM_WORLD);
  for (long c = 0; c < after; ++c) MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - t0;
  if (noop) MPI_Op_free(&op);

  std::vector<double> phases(12, 1.0), all;
  binomial_gather(phases, all, rank, size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(rank == 0 ? static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME : 0);
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("{\"np\": %d, \"calls\": %ld, \"elements\": %ld, \"before\": %ld, \"after\": %ld, \"op\": \"%s\", "
                "\"simulated_s\": %.9g}\n",
                size, calls, elements, before, after, op_name.c_str(), seconds);
  MPI_Finalize();
  return 0;
}
