// The bare SMPI program of issue 17: what a time-only wulf run costs at the least. Each rank
// makes CALLS allreduces (MPI_SUM, in place) of the same ELEMENTS floats, nothing else: no
// option parsing, no network, no compute. Rank 0 prints the simulated seconds as one JSON line.
// With a third argument `noop`, the reduction is a user operation that adds nothing: what the
// sums themselves cost the simulation (a time-only run never reads them).
//   smpirun -np P -platform F -hostfile H --cfg=smpi/allreduce:rdb wulf-bare-allreduce CALLS ELEMENTS [noop]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
void add_nothing(void*, void*, int*, MPI_Datatype*) {}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool noop = argc == 4 && std::string(argv[3]) == "noop";
  if (argc != 3 && !noop) {
    std::fprintf(stderr, "usage: wulf-bare-allreduce CALLS ELEMENTS [noop]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long calls = std::atol(argv[1]), elements = std::atol(argv[2]);
  if (calls < 1 || elements < 1 || elements > (1L << 30)) {
    std::fprintf(stderr, "wulf-bare-allreduce: CALLS and ELEMENTS must be positive (ELEMENTS at most 2^30)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<float> gradient(static_cast<std::size_t>(elements), 1.0f);
  MPI_Op op = MPI_SUM;
  if (noop) MPI_Op_create(&add_nothing, 1, &op);
  const double t0 = MPI_Wtime();
  for (long c = 0; c < calls; ++c)
    MPI_Allreduce(MPI_IN_PLACE, gradient.data(), static_cast<int>(elements), MPI_FLOAT, op, MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - t0;
  if (noop) MPI_Op_free(&op);
  if (rank == 0)
    std::printf("{\"np\": %d, \"calls\": %ld, \"elements\": %ld, \"op\": \"%s\", \"simulated_s\": %.9g}\n", size,
                calls, elements, noop ? "noop" : "sum", seconds);
  MPI_Finalize();
  return 0;
}
