// The communication seam over MPI: the one file of wulf that includes <mpi.h>. It is
// compiled twice, into wulf-rank-real against OpenMPI and into wulf-rank-sim against SMPI.
#include "comm.hpp"

#include <mpi.h>

#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace wulf {
namespace {

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

int count_of(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("a message of more than 2^31 elements");
  return static_cast<int>(n);
}

class MpiComm final : public Comm {
 public:
  MpiComm() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  double now() const override { return MPI_Wtime(); }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  void allreduce_sum(std::span<float> d) override { allreduce(d); }
  void allreduce_sum(std::span<double> d) override { allreduce(d); }
  void reduce_sum(std::span<float> d, int root) override { reduce(d, root); }
  void reduce_sum(std::span<double> d, int root) override { reduce(d, root); }
  void bcast(std::span<float> d, int root) override { bcast_(d, root); }
  void bcast(std::span<double> d, int root) override { bcast_(d, root); }
  void allgather(std::span<const float> s, std::span<float> r) override { allgather_(s, r); }
  void allgather(std::span<const double> s, std::span<double> r) override { allgather_(s, r); }
  void gather(std::span<const double> s, std::span<double> r, int root) override { gather_(s, r, root); }
  void gather(std::span<const float> s, std::span<float> r, int root) override { gather_(s, r, root); }
  void scatter(std::span<const float> s, std::span<float> r, int root) override {
    MPI_Scatter(s.data(), count_of(r.size()), MPI_FLOAT, r.data(), count_of(r.size()), MPI_FLOAT, root,
                MPI_COMM_WORLD);
  }

  void scatterv(std::span<const float> s, std::span<const int> counts, std::span<float> r, int root) override {
    std::vector<int> displs(counts.size(), 0);
    for (std::size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
    MPI_Scatterv(s.data(), counts.data(), displs.data(), MPI_FLOAT, r.data(), count_of(r.size()), MPI_FLOAT, root,
                 MPI_COMM_WORLD);
  }

  void send(std::span<const float> d, int dest) override {
    MPI_Send(d.data(), count_of(d.size()), MPI_FLOAT, dest, 0, MPI_COMM_WORLD);
  }
  void recv(std::span<float> d, int source) override {
    MPI_Recv(d.data(), count_of(d.size()), MPI_FLOAT, source, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  [[noreturn]] void abort(const std::string& message, int code) override {
    std::cerr << "wulf (rank " << rank_ << " of " << size_ << "): " << message << std::endl;
    MPI_Abort(MPI_COMM_WORLD, code);
    throw std::runtime_error(message);  // MPI_Abort does not return; this satisfies [[noreturn]]
  }

 private:
  template <class T>
  void allreduce(std::span<T> d) {
    MPI_Allreduce(MPI_IN_PLACE, d.data(), count_of(d.size()), mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
  }
  template <class T>
  void reduce(std::span<T> d, int root) {
    if (rank_ == root)
      MPI_Reduce(MPI_IN_PLACE, d.data(), count_of(d.size()), mpi_type<T>(), MPI_SUM, root, MPI_COMM_WORLD);
    else
      MPI_Reduce(d.data(), nullptr, count_of(d.size()), mpi_type<T>(), MPI_SUM, root, MPI_COMM_WORLD);
  }
  template <class T>
  void bcast_(std::span<T> d, int root) {
    MPI_Bcast(d.data(), count_of(d.size()), mpi_type<T>(), root, MPI_COMM_WORLD);
  }
  template <class T>
  void allgather_(std::span<const T> s, std::span<T> r) {
    MPI_Allgather(s.data(), count_of(s.size()), mpi_type<T>(), r.data(), count_of(s.size()), mpi_type<T>(),
                  MPI_COMM_WORLD);
  }
  template <class T>
  void gather_(std::span<const T> s, std::span<T> r, int root) {
    MPI_Gather(s.data(), count_of(s.size()), mpi_type<T>(), r.data(), count_of(s.size()), mpi_type<T>(), root,
               MPI_COMM_WORLD);
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

void mpi_init(int* argc, char*** argv) { MPI_Init(argc, argv); }
void mpi_finalize() { MPI_Finalize(); }

std::unique_ptr<Comm> make_mpi_comm() { return std::make_unique<MpiComm>(); }

}  // namespace wulf
