// The bare SMPI program of issue 64 item 7: what a time-only `wulf train --strategy fsdp` run
// costs SimGrid at the least. Its ranks send the messages of the run's allgathers and
// reduce-scatters, as many and as large, between the same ranks, and nothing else: no option
// parsing, no net, no compute, no progress points, no record.
//
//   smpirun -np P -platform F -hostfile H --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 \
//     --cfg=smpi/privatization:no wulf-bare-fsdp PLAN
//
// PLAN, a line each (experiments/fsdp/bare.py writes it from the layer file and wulf's record):
//   value_bytes B      the bytes of a value on the wire (2 for bf16)
//   unit V             a unit of V parameters, in the forward order; one line per unit
//   ring R0 R1 ...     a ring, every rank once (the record's rank_rings); none: one ring in
//                      rank order
//
// A unit's V values are padded to a multiple of P and cut into P shards; with k rings each
// shard in k parts, part c going around ring c (comm/shard_schedules.cpp's plan). A collective
// is the ring's P - 1 steps on every ring at once: at each step a rank sends one part to the
// next rank of each ring and receives one from the one before (MPI_Isend, MPI_Irecv,
// MPI_Waitall). The iteration is full sharding's with backward prefetch: the forward gathers
// each unit alone; the backward reduce-scatters each unit from the last, each beside the gather
// of the unit before it (the last unit stays gathered): 2U - 1 gathers and U reduce-scatters.
// Every message is from and into one SMPI_SHARED_MALLOC block of the ranks (smpi/privatization:no),
// so that SMPI copies no data, as wulf's time-only runs do.
//
// Rank 0 prints one JSON line: the ranks, units, rings, the messages each rank sent and the
// simulated seconds.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Plan {
  std::size_t value_bytes = 4;
  std::vector<std::size_t> units;
  std::vector<std::vector<int>> rings;
};

bool read_plan(const char* path, int ranks, Plan& plan) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    if (!(words >> key)) continue;
    if (key == "value_bytes") {
      words >> plan.value_bytes;
    } else if (key == "unit") {
      std::size_t v = 0;
      if (!(words >> v)) return false;
      plan.units.push_back(v);
    } else if (key == "ring") {
      std::vector<int>& ring = plan.rings.emplace_back();
      for (int r = 0; words >> r;) ring.push_back(r);
      std::vector<int> sorted = ring;
      std::sort(sorted.begin(), sorted.end());
      for (int q = 0; q < ranks; ++q)
        if (static_cast<int>(sorted.size()) != ranks || sorted[static_cast<std::size_t>(q)] != q) return false;
    } else {
      return false;
    }
  }
  if (plan.rings.empty()) {
    plan.rings.emplace_back(static_cast<std::size_t>(ranks));
    std::iota(plan.rings[0].begin(), plan.rings[0].end(), 0);
  }
  return !plan.units.empty() && plan.value_bytes > 0;
}

// One lane of a collective: a unit's part around one ring.
struct Lane {
  int to = 0, from = 0;
  std::size_t bytes = 0;
};

class Bare {
 public:
  Bare(const Plan& plan, int rank, int ranks) : plan_(plan), rank_(rank), ranks_(ranks) {
    std::size_t most = 0;
    for (std::size_t u = 0; u < plan.units.size(); ++u)
      for (const Lane& l : lanes(u)) most = std::max(most, l.bytes);
    most_ = most;
    // One block for every rank (the same call site under smpi/privatization:no): sent from its
    // first half, received into its second.
    block_ = static_cast<char*>(SMPI_SHARED_MALLOC(2 * std::max<std::size_t>(most, 1)));
  }
  ~Bare() { SMPI_SHARED_FREE(block_); }

  // The lanes of unit u on this rank: one a ring.
  std::vector<Lane> lanes(std::size_t u) const {
    const auto p = static_cast<std::size_t>(ranks_);
    const std::size_t shard = (plan_.units[u] + p - 1) / p;
    const std::size_t k = plan_.rings.size();
    std::vector<Lane> out;
    for (std::size_t c = 0; c < k; ++c) {
      const std::size_t part_n = (c + 1) * shard / k - c * shard / k;
      if (part_n == 0) continue;
      const std::vector<int>& ring = plan_.rings[c];
      const auto place = static_cast<std::size_t>(std::find(ring.begin(), ring.end(), rank_) - ring.begin());
      out.push_back({ring[(place + 1) % p], ring[(place + p - 1) % p], part_n * plan_.value_bytes});
    }
    return out;
  }

  // The ring's P - 1 steps of every lane given, all lanes at once.
  void steps(const std::vector<Lane>& all) {
    std::vector<MPI_Request> requests(2 * all.size());
    for (int s = 0; s + 1 < ranks_; ++s) {
      for (std::size_t i = 0; i < all.size(); ++i) {
        const int tag = static_cast<int>(i);
        MPI_Irecv(block_ + most_, static_cast<int>(all[i].bytes), MPI_BYTE, all[i].from, tag, MPI_COMM_WORLD,
                  &requests[2 * i]);
        MPI_Isend(block_, static_cast<int>(all[i].bytes), MPI_BYTE, all[i].to, tag, MPI_COMM_WORLD,
                  &requests[2 * i + 1]);
      }
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      sent_ += all.size();
    }
  }

  void iteration() {
    const std::size_t n = plan_.units.size();
    for (std::size_t u = 0; u < n; ++u) steps(lanes(u));  // the forward's gathers
    for (std::size_t u = n; u-- > 0;) {                   // the backward's reduce-scatters
      std::vector<Lane> both = lanes(u);
      if (u > 0)
        for (const Lane& l : lanes(u - 1)) both.push_back(l);  // the prefetched gather beside it
      steps(both);
    }
  }

  std::size_t sent() const { return sent_; }

 private:
  const Plan& plan_;
  int rank_, ranks_;
  std::size_t most_ = 0, sent_ = 0;
  char* block_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Plan plan;
  if (argc != 2 || !read_plan(argv[1], ranks, plan)) {
    if (rank == 0)
      std::fprintf(stderr, "usage: wulf-bare-fsdp PLAN (value_bytes B, unit V lines, ring lines of every rank once)\n");
    MPI_Finalize();
    return 2;
  }
  {
    Bare bare(plan, rank, ranks);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    bare.iteration();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = MPI_Wtime() - t0;
    if (rank == 0)
      std::printf("{\"ranks\": %d, \"units\": %zu, \"rings\": %zu, \"messages_per_rank\": %zu, \"simulated_s\": %.9g}\n",
                  ranks, plan.units.size(), plan.rings.size(), bare.sent(), t);
  }
  MPI_Finalize();
  return 0;
}
