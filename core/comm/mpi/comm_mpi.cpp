// The communication seam over MPI. It is compiled twice, into wulf-rank-real against OpenMPI
// and into wulf-rank-sim against SMPI; under SMPI the messages of wulf's own schedules travel
// beside it (messages.hpp).
#include "comm/comm.hpp"
#include "comm/mpi/messages.hpp"
#include "util/errors.hpp"

#include <mpi.h>
#ifdef WULF_SMPI
#include <simgrid/engine.h>
#endif

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <iostream>
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

// The count of one call, named for the message where it exceeds MPI's int (comm.hpp).
int count_of(std::size_t n, const char* call) { return mpi_count(n, call); }

// The reduction of data nobody reads (Comm::set_unread_storage): it adds nothing.
void add_nothing(void* /*in*/, void* /*inout*/, int* /*count*/, MPI_Datatype* /*type*/) {}

// The sum of the allreduce and the reduce. OpenMPI's MPI_SUM is vectorised (its op/avx
// component); SMPI 3.32's is a scalar loop, 6% of 16 simulated ranks of digits at b = 1 024
// (experiments/sim-speed). So the SMPI build (WULF_SMPI) sums with Eigen's vectorised add:
// inout[i] + in[i] for each i, the additions MPI_SUM makes, which give the same bits.
#ifdef WULF_SMPI
template <class T>
void add_elements(void* in, void* inout, int count) {
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(static_cast<T*>(inout), count) +=
      Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(static_cast<const T*>(in), count);
}
void add(void* in, void* inout, int* count, MPI_Datatype* type) {
  if (*type == MPI_FLOAT)
    add_elements<float>(in, inout, *count);
  else
    add_elements<double>(in, inout, *count);
}
#endif

// The engine's clock. Under smpirun (--cfg smpi/wtime:0, simulate-computation off) MPI_Wtime
// is SimGrid's clock, read between two of SMPI's CPU timers (two clock_gettime system calls,
// 6% of a time-only run's CPU at 1 024 GPUs, where progress points read the clock hundreds of
// times an iteration): the clock is read directly, the same value.
double clock() {
#ifdef WULF_SMPI
  return simgrid_get_clock();
#else
  return MPI_Wtime();
#endif
}

class MpiComm final : public Comm {
 public:
  explicit MpiComm(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
#ifdef WULF_SMPI
    MPI_Op_create(&add, 1, &sum_);
#endif
  }
  ~MpiComm() override {
    if (no_sum_ != MPI_OP_NULL) MPI_Op_free(&no_sum_);
    if (sum_ != MPI_SUM) MPI_Op_free(&sum_);
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  double now() const override { return clock() / dilation_; }
  void set_time_dilation(double d) override { dilation_ = checked_dilation(d); }
  void set_unread_storage(const void* begin, std::size_t bytes) override {
    unread_.set(begin, bytes);
    if (begin && no_sum_ == MPI_OP_NULL) MPI_Op_create(&add_nothing, 1, &no_sum_);
  }
  void barrier() override { MPI_Barrier(comm_); }

  void allreduce_sum(std::span<float> d) override { allreduce(d); }
  void allreduce_sum(std::span<double> d) override { allreduce(d); }
  std::span<float> allreduce_sum_anywhere(std::span<float> d) override { return allreduce_anywhere(d); }
  std::span<double> allreduce_sum_anywhere(std::span<double> d) override { return allreduce_anywhere(d); }
  void lend_spare_storage(void* begin, std::size_t bytes) override { lent_ = {static_cast<std::byte*>(begin), bytes}; }
  void reduce_sum(std::span<float> d, int root) override { reduce(d, root); }
  void reduce_sum(std::span<double> d, int root) override { reduce(d, root); }
  void bcast(std::span<float> d, int root) override { bcast_(d, root); }
  void bcast(std::span<double> d, int root) override { bcast_(d, root); }
  void allgather(std::span<const float> s, std::span<float> r) override { allgather_(s, r); }
  void allgather(std::span<const double> s, std::span<double> r) override { allgather_(s, r); }
  void gather(std::span<const double> s, std::span<double> r, int root) override { gather_(s, r, root); }
  void gather(std::span<const float> s, std::span<float> r, int root) override { gather_(s, r, root); }
  void scatter(std::span<const float> s, std::span<float> r, int root) override {
    if (rank_ == root) check_scattered(s.size(), r.size(), size_, "MPI_Scatter");
    const int n = count_of(r.size(), "MPI_Scatter");
    MPI_Scatter(s.data(), n, MPI_FLOAT, r.data(), n, MPI_FLOAT, root, comm_);
  }

  void scatterv(std::span<const float> s, std::span<const int> counts, std::span<float> r, int root) override {
    // The displacements are ints too: their sums are checked with the buffers.
    const std::vector<int> displs = scatterv_displacements(s.size(), counts, r.size(), rank_, size_, rank_ == root);
    MPI_Scatterv(s.data(), counts.data(), displs.data(), MPI_FLOAT, r.data(), count_of(r.size(), "MPI_Scatterv"),
                 MPI_FLOAT, root, comm_);
  }

  void send(std::span<const float> d, int dest) override { send_(d, dest); }
  void send(std::span<const double> d, int dest) override { send_(d, dest); }
  int recv(std::span<float> d, int source) override { return recv_(d, source); }
  int recv(std::span<double> d, int source) override { return recv_(d, source); }
  void recv_all(std::span<const std::span<float>> d, std::span<const int> s) override { recv_all_(d, s); }
  void recv_all(std::span<const std::span<double>> d, std::span<const int> s) override { recv_all_(d, s); }
  int irecv(std::span<float> d, int source, int tag) override { return irecv_(d, source, tag); }
  int irecv(std::span<double> d, int source, int tag) override { return irecv_(d, source, tag); }
  std::size_t wait(int ticket) override {
    if (messages_) return messages_->wait(ticket);
    Pending& p = pending_.at(static_cast<std::size_t>(ticket));
    MPI_Status status;
    MPI_Wait(&p.request, &status);
    int values = 0;
    if (!p.send) MPI_Get_count(&status, p.type, &values);
    drop_completed();
    return static_cast<std::size_t>(values);
  }
  int isend(std::span<const float> d, int dest, int tag) override { return isend_(d, dest, tag); }
  int isend(std::span<const double> d, int dest, int tag) override { return isend_(d, dest, tag); }
  bool test(int ticket) override {
    if (messages_) return messages_->test(ticket);
    int done = 0;
    MPI_Test(&pending_.at(static_cast<std::size_t>(ticket)).request, &done, MPI_STATUS_IGNORE);
    if (done) drop_completed();
    return done != 0;
  }
  void send_all(std::span<const float> d, std::span<const int> dests) override { send_all_(d, dests); }
  void send_all(std::span<const double> d, std::span<const int> dests) override { send_all_(d, dests); }
  std::vector<std::string> hosts() override {
    char mine[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(mine, &length);
    std::vector<char> all(rank_ == 0 ? static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME : 0);
    MPI_Gather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm_);
    std::vector<std::string> names;
    for (int r = 0; rank_ == 0 && r < size_; ++r) {
      const char* name = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
      names.emplace_back(name, strnlen(name, MPI_MAX_PROCESSOR_NAME));
    }
    return names;
  }
  // A part of a schedules' communicator is one too.
  std::unique_ptr<Comm> split(int color, int key) override {
    MPI_Comm part = MPI_COMM_NULL;
    MPI_Comm_split(comm_, color == no_color ? MPI_UNDEFINED : color, key, &part);
    if (part == MPI_COMM_NULL) return nullptr;
    return made_of(part, messages_ != nullptr);
  }
  std::unique_ptr<Comm> duplicate_for_schedules() override {
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(comm_, &dup);
    return made_of(dup, sim_messages_ != SimMessages::smpi);
  }
  void set_sim_messages(SimMessages how, std::size_t handshake_bytes) override {
    sim_messages_ = how, handshake_bytes_ = handshake_bytes;
  }

  [[noreturn]] void abort(const std::string& message, int code) override {
    int world_rank = 0, world_size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    // One write, so that no other process's output (mpirun's abort banner) lands inside it.
    std::cerr << ("wulf (rank " + std::to_string(world_rank) + " of " + std::to_string(world_size) +
                  "): " + safe_to_print(message) + "\n")
              << std::flush;
    MPI_Abort(MPI_COMM_WORLD, code);
    throw std::runtime_error(message);  // MPI_Abort does not return; this satisfies [[noreturn]]
  }

 private:
  // A communicator over part (this one's, or a part of it) with this one's settings, its
  // messages beside the library where the engine has them (a collective over part).
  std::unique_ptr<MpiComm> made_of(MPI_Comm part, bool beside_library) {
    auto made = std::make_unique<MpiComm>(part);
    made->dilation_ = dilation_;
    made->set_unread_storage(unread_.begin(), unread_.bytes());
    made->sim_messages_ = sim_messages_, made->handshake_bytes_ = handshake_bytes_;
    if (beside_library) made->messages_ = engine_messages(part, sim_messages_ == SimMessages::fifo, handshake_bytes_);
    return made;
  }
  template <class T>
  void send_(std::span<const T> d, int dest) {
    if (messages_) {
      messages_->wait(messages_->isend(d.data(), d.size_bytes(), dest, 0));
      return;
    }
    MPI_Send(d.data(), count_of(d.size(), "MPI_Send"), mpi_type<T>(), dest, 0, comm_);
  }
  template <class T>
  int recv_(std::span<T> d, int source) {
    if (messages_) {
      if (source == any_source)
        throw std::logic_error("a receive from any source on a communicator of wulf's own schedules");
      messages_->wait(messages_->irecv(d.data(), d.size_bytes(), sizeof(T), source, 0));
      return source;
    }
    MPI_Status status;
    MPI_Recv(d.data(), count_of(d.size(), "MPI_Recv"), mpi_type<T>(), source == any_source ? MPI_ANY_SOURCE : source, 0, comm_,
             &status);
    return status.MPI_SOURCE;
  }
  template <class T>
  void recv_all_(std::span<const std::span<T>> d, std::span<const int> sources) {
    if (messages_) {
      std::vector<int> tickets;
      for (std::size_t i = 0; i < d.size(); ++i) tickets.push_back(irecv_(d[i], sources[i], 0));
      for (const int ticket : tickets) messages_->wait(ticket);
      return;
    }
    std::vector<MPI_Request> requests(d.size());
    for (std::size_t i = 0; i < d.size(); ++i)
      MPI_Irecv(d[i].data(), count_of(d[i].size(), "MPI_Irecv"), mpi_type<T>(), sources[i], 0, comm_, &requests[i]);
    MPI_Waitall(count_of(requests.size(), "MPI_Waitall"), requests.data(), MPI_STATUSES_IGNORE);
  }
  template <class T>
  int irecv_(std::span<T> d, int source, int tag) {
    if (messages_) return messages_->irecv(d.data(), d.size_bytes(), sizeof(T), source, tag);
    const std::size_t ticket = free_slot();
    auto& slot = pending_[ticket];
    slot.type = mpi_type<T>(), slot.send = false;
    MPI_Irecv(d.data(), count_of(d.size(), "MPI_Irecv"), slot.type, source, tag, comm_, &slot.request);
    return static_cast<int>(ticket);
  }
  template <class T>
  int isend_(std::span<const T> d, int dest, int tag) {
    if (messages_) return messages_->isend(d.data(), d.size_bytes(), dest, tag);
    const std::size_t ticket = free_slot();
    auto& slot = pending_[ticket];
    slot.type = mpi_type<T>(), slot.send = true;
    MPI_Isend(d.data(), count_of(d.size(), "MPI_Isend"), slot.type, dest, tag, comm_, &slot.request);
    return static_cast<int>(ticket);
  }
  // A ticket is the request's index in pending_: a free slot (a completed request) is taken
  // again, and the completed ones at the end are dropped.
  std::size_t free_slot() {
    for (std::size_t i = 0; i < pending_.size(); ++i)
      if (pending_[i].request == MPI_REQUEST_NULL) return i;
    pending_.emplace_back();
    return pending_.size() - 1;
  }
  void drop_completed() {
    while (!pending_.empty() && pending_.back().request == MPI_REQUEST_NULL) pending_.pop_back();
  }
  template <class T>
  void send_all_(std::span<const T> d, std::span<const int> dests) {
    if (messages_) {
      std::vector<int> tickets;
      for (const int dest : dests) tickets.push_back(isend_(d, dest, 0));
      for (const int ticket : tickets) messages_->wait(ticket);
      return;
    }
    std::vector<MPI_Request> requests(dests.size());
    for (std::size_t i = 0; i < dests.size(); ++i)
      MPI_Isend(d.data(), count_of(d.size(), "MPI_Isend"), mpi_type<T>(), dests[i], 0, comm_, &requests[i]);
    MPI_Waitall(count_of(requests.size(), "MPI_Waitall"), requests.data(), MPI_STATUSES_IGNORE);
  }
  // The sum, or the reduction that adds nothing where d lies in the unread storage.
  template <class T>
  MPI_Op sum_of(std::span<T> d) const {
    return unread_.holds(d.data(), d.size_bytes()) ? no_sum_ : sum_;
  }
  template <class T>
  void allreduce(std::span<T> d) {
    MPI_Allreduce(MPI_IN_PLACE, d.data(), count_of(d.size(), "MPI_Allreduce"), mpi_type<T>(), sum_of(d), comm_);
  }
  // Comm::allreduce_sum_anywhere: out of place into the spare buffer under SMPI, in place
  // under Open MPI.
  template <class T>
  std::span<T> allreduce_anywhere(std::span<T> d) {
#ifdef WULF_SMPI
    const std::span<T> spare = spare_for(d);
    MPI_Allreduce(d.data(), spare.data(), count_of(d.size(), "MPI_Allreduce"), mpi_type<T>(), sum_of(spare), comm_);
    return spare;
#else
    allreduce(d);
    return d;
#endif
  }
  // The spare buffer for d: the lent storage where it is long enough and apart from d, else
  // this rank's own, made on first need and never value-initialised (no page is touched
  // until the MPI writes it).
  template <class T>
  std::span<T> spare_for(std::span<T> d) {
    const std::span<T> lent(reinterpret_cast<T*>(lent_.data()), lent_.size() / sizeof(T));
    const auto a = reinterpret_cast<std::uintptr_t>(d.data()), b = reinterpret_cast<std::uintptr_t>(lent.data());
    const bool apart = b + lent.size_bytes() <= a || a + d.size_bytes() <= b;
    if (lent.size() >= d.size() && apart) return lent.first(d.size());
    if (own_spare_bytes_ < d.size_bytes()) {
      own_spare_.reset(new std::byte[d.size_bytes()]);
      own_spare_bytes_ = d.size_bytes();
    }
    return {reinterpret_cast<T*>(own_spare_.get()), d.size()};
  }
  template <class T>
  void reduce(std::span<T> d, int root) {
    if (rank_ == root)
      MPI_Reduce(MPI_IN_PLACE, d.data(), count_of(d.size(), "MPI_Reduce"), mpi_type<T>(), sum_of(d), root, comm_);
    else
      MPI_Reduce(d.data(), nullptr, count_of(d.size(), "MPI_Reduce"), mpi_type<T>(), sum_of(d), root, comm_);
  }
  template <class T>
  void bcast_(std::span<T> d, int root) {
    MPI_Bcast(d.data(), count_of(d.size(), "MPI_Bcast"), mpi_type<T>(), root, comm_);
  }
  template <class T>
  void allgather_(std::span<const T> s, std::span<T> r) {
    check_gathered(s.size(), r.size(), size_, "MPI_Allgather");
    const int n = count_of(s.size(), "MPI_Allgather");
    MPI_Allgather(s.data(), n, mpi_type<T>(), r.data(), n, mpi_type<T>(), comm_);
  }
  template <class T>
  void gather_(std::span<const T> s, std::span<T> r, int root) {
    if (rank_ == root) check_gathered(s.size(), r.size(), size_, "MPI_Gather");  // elsewhere recv is unused
    const int n = count_of(s.size(), "MPI_Gather");
    MPI_Gather(s.data(), n, mpi_type<T>(), r.data(), n, mpi_type<T>(), root, comm_);
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  double dilation_ = 1.0;  // wall seconds per platform second (set_time_dilation)
  UnreadRange unread_;                  // set_unread_storage: sums into it are not read
  MPI_Op no_sum_ = MPI_OP_NULL;         // add_nothing, made when there is such storage
  MPI_Op sum_ = MPI_SUM;                // or add, under SMPI
  std::span<std::byte> lent_;           // lend_spare_storage's
  std::unique_ptr<std::byte[]> own_spare_;  // allreduce_sum_anywhere's own spare buffer
  std::size_t own_spare_bytes_ = 0;
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Datatype type = MPI_DOUBLE;
    bool send = false;
  };
  std::vector<Pending> pending_;        // irecv's and isend's requests, by ticket
  // The point-to-point messages of a schedules' communicator where they travel beside MPI
  // (then every one of them does, and pending_ stays empty); whether its duplicates keep
  // theirs in the library or how theirs travel beside it (set_sim_messages).
  std::unique_ptr<Messages> messages_;
  SimMessages sim_messages_ = SimMessages::s4u;
  std::size_t handshake_bytes_ = 0;  // fifo: from this size by the handshake (0: none)
};

}  // namespace

void mpi_init(int* argc, char*** argv) { MPI_Init(argc, argv); }
void mpi_finalize() { MPI_Finalize(); }

std::unique_ptr<Comm> make_mpi_comm() { return std::make_unique<MpiComm>(); }

#ifndef WULF_SMPI
std::unique_ptr<Messages> engine_messages(MPI_Comm, bool, std::size_t) { return nullptr; }  // Open MPI carries them all
#endif

}  // namespace wulf
