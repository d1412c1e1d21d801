// How ranks talk: the one seam between the strategies and MPI.
//
// The strategies call only this interface. Its MPI implementation (comm/mpi/comm_mpi.cpp) is
// the one source that includes <mpi.h>; it is compiled once against OpenMPI (wulf-rank-real)
// and once against SimGrid's SMPI (wulf-rank-sim). now() is MPI_Wtime: the wall clock under
// mpirun, the simulated clock under smpirun, so every time a strategy measures is in the
// engine's own time. On the testbed (issue 16) the wall clock runs D times slower than the
// platform's (set_time_dilation), and now() reads platform seconds: wall seconds over D.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

// How the messages of wulf's own schedules travel under smpirun (--sim-messages): s4u, as
// SimGrid comms that give SMPI's simulated times; fifo, the same, but those from one rank to
// another one after another (Open MPI's TCP transport: one socket a peer), those of at least
// the eager limit after Open MPI's rendezvous handshake; smpi, as SMPI's MPI requests.
enum class SimMessages { s4u, fifo, smpi };
// Their names, in that order: the option's values and its errors read them.
inline constexpr std::array<std::string_view, 3> sim_messages_names{"s4u", "fifo", "smpi"};
// The SimMessages of that name (sim_messages_names), or none.
std::optional<SimMessages> sim_messages_named(std::string_view name);

// The most values one MPI call takes: its counts and displacements are C ints.
inline constexpr std::size_t mpi_count_limit = 2147483647;  // INT_MAX

// n as the count of one MPI call (what: "MPI_Allreduce of the gradients"), or InputError
// naming the count, the limit and what to change (remedy) where n does not fit an int.
int mpi_count(std::size_t n, std::string_view what,
              std::string_view remedy = "a smaller net (--hidden) or fewer patterns per rank (more ranks, "
                                        "--train-size)");

// The buffers of the gathering and scattering collectives against the ranks, checked by
// every Comm before the call (a mismatch is a fault in the caller, never user input):
// recv holds ranks x send values (allgather everywhere, gather at the root); a scatter's
// send holds ranks x recv at the root. Throw std::length_error naming the call.
void check_gathered(std::size_t send, std::size_t recv, int ranks, const char* call);
void check_scattered(std::size_t send, std::size_t recv, int ranks, const char* call);
// scatterv's: one count per rank, recv holds this rank's, the root's send holds their sum
// (which, as the last displacement, must also fit MPI's int). Returns the displacements.
std::vector<int> scatterv_displacements(std::size_t send, std::span<const int> counts, std::size_t recv, int rank,
                                        int ranks, bool root);

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual double now() const = 0;
  // From now on now() reads the wall (or steady) clock over d: the testbed's time dilation,
  // wall seconds per platform second (1: the clock as it is). Communicators that split()
  // makes afterwards inherit it. Throws std::invalid_argument unless d is finite and > 0.
  virtual void set_time_dilation(double d) = 0;

  // Sums into [begin, begin + bytes) are never read: under --numerics off the simulated
  // ranks share that memory (Compute::shared_storage), so no value in it means anything.
  // A reduction whose data lies wholly inside may then move the data without adding it:
  // the messages and the simulated times are the same, the simulator's arithmetic is
  // spared. Communicators that split() makes afterwards inherit it. The default ignores it.
  virtual void set_unread_storage(const void* /*begin*/, std::size_t /*bytes*/) {}

  virtual void barrier() = 0;
  // In place: every rank ends with the element-wise sum over all ranks.
  virtual void allreduce_sum(std::span<float> data) = 0;
  virtual void allreduce_sum(std::span<double> data) = 0;
  // The element-wise sum of data over all ranks, made in data or in a spare buffer of the
  // communicator's own, whichever the engine's MPI makes with fewer passes over memory;
  // returns the one that holds it, valid until the next call (data's values are undefined
  // when it is not data). Open MPI sums in place at no cost, where out of place it first
  // copies data; SMPI gives MPI_IN_PLACE a zero-filled copy of the buffer in every rank, and
  // out of place needs none. The default sums in place.
  virtual std::span<float> allreduce_sum_anywhere(std::span<float> data) {
    allreduce_sum(data);
    return data;
  }
  virtual std::span<double> allreduce_sum_anywhere(std::span<double> data) {
    allreduce_sum(data);
    return data;
  }
  // Storage that allreduce_sum_anywhere may take as its spare buffer, where it is long
  // enough and apart from the data (under --numerics off, the part of the net's block all
  // simulated ranks share: no rank then holds a buffer of its own). The default ignores it.
  virtual void lend_spare_storage(void* /*begin*/, std::size_t /*bytes*/) {}
  // In place at root: data becomes the sum over all ranks. Elsewhere data is left
  // unchanged by the MPI library's reduce, and may hold partial sums after wulf's own
  // (staged_reduce.hpp): callers must not count on it.
  virtual void reduce_sum(std::span<float> data, int root) = 0;
  virtual void reduce_sum(std::span<double> data, int root) = 0;
  virtual void bcast(std::span<float> data, int root) = 0;
  virtual void bcast(std::span<double> data, int root) = 0;
  // Every rank contributes send (the same length on all ranks); recv holds size() * that
  // length, rank r's block at r * send.size().
  virtual void allgather(std::span<const float> send, std::span<float> recv) = 0;
  virtual void allgather(std::span<const double> send, std::span<double> recv) = 0;
  virtual void gather(std::span<const double> send, std::span<double> recv, int root) = 0;
  virtual void gather(std::span<const float> send, std::span<float> recv, int root) = 0;
  // root's send holds size() blocks of recv.size(); rank r receives block r.
  virtual void scatter(std::span<const float> send, std::span<float> recv, int root) = 0;
  // root's send holds counts[0] + counts[1] + ... values; rank r receives the counts[r] of
  // them that follow the first r blocks (recv.size() == counts[r]).
  virtual void scatterv(std::span<const float> send, std::span<const int> counts, std::span<float> recv,
                        int root) = 0;

  // Point to point (the platform benchmark's ping-pong, hand-made collectives, polling).
  // recv takes a rank or any_source and returns the rank the message came from.
  static constexpr int any_source = -1;
  virtual void send(std::span<const float> data, int dest) = 0;
  virtual void send(std::span<const double> data, int dest) = 0;
  virtual int recv(std::span<float> data, int source) = 0;
  virtual int recv(std::span<double> data, int source) = 0;
  // Receives data[i] from sources[i] for every i, all posted at once (MPI_Irecv, then
  // MPI_Waitall): a rank with several network interfaces takes them in parallel.
  virtual void recv_all(std::span<const std::span<float>> data, std::span<const int> sources) = 0;
  virtual void recv_all(std::span<const std::span<double>> data, std::span<const int> sources) = 0;
  // Non-blocking, for hand-made collectives that overlap their messages as Open MPI's do
  // (comm/tree_collectives): irecv posts a receive (MPI_Irecv) of at most data.size() values
  // and returns its ticket, which wait completes, returning the values that came; every
  // ticket must be waited for. send_all sends data to every rank of
  // dests at once (MPI_Isend each, then MPI_Waitall), as a tree's node to its children.
  // tag: apart from every other message between the two ranks (wulf's overlapped buckets,
  // each its own, so that no bucket's message is taken for another's); 0 elsewhere.
  virtual int irecv(std::span<float> data, int source, int tag = 0) = 0;
  virtual int irecv(std::span<double> data, int source, int tag = 0) = 0;
  virtual std::size_t wait(int ticket) = 0;
  virtual void send_all(std::span<const float> data, std::span<const int> dests) = 0;
  virtual void send_all(std::span<const double> data, std::span<const int> dests) = 0;
  // A send that does not wait (MPI_Isend): its ticket, which wait or test completes (wait
  // then returns 0); data must stay as it is until then.
  virtual int isend(std::span<const float> data, int dest, int tag = 0) = 0;
  virtual int isend(std::span<const double> data, int dest, int tag = 0) = 0;
  // Whether the ticket's request is complete (MPI_Test), the library's chance to move its
  // messages on: Open MPI over TCP moves a message only inside its calls. A ticket that
  // tested true is done with. Under SMPI it costs no simulated time (smpi/test:0).
  virtual bool test(int ticket) = 0;
  // MPI_Comm_split (a collective over this communicator): the ranks of one color form a
  // communicator, ordered by key; a rank that passes no_color gets nullptr.
  static constexpr int no_color = -1;
  virtual std::unique_ptr<Comm> split(int color, int key) = 0;
  // A duplicate of this communicator (a collective over it) for wulf's own schedules: the
  // collectives made of point-to-point messages (comm/nb_allreduce, tree_collectives,
  // staged_reduce) and overlap's buckets, which name the source of every receive. Under SMPI
  // its messages, and those of the communicators split from it, travel beside the MPI
  // library as SimGrid comms that give SMPI's simulated times (comm/mpi/messages.hpp), unless
  // set_sim_messages(SimMessages::smpi) came first (--sim-messages). The default: split(0, rank()).
  virtual std::unique_ptr<Comm> duplicate_for_schedules() { return split(0, rank()); }
  // Under fifo the messages of at least handshake_bytes (0: none) go by Open MPI's rendezvous.
  virtual void set_sim_messages(SimMessages /*how*/, std::size_t /*handshake_bytes*/) {}

  // The host each rank runs on, in rank order, at rank 0 (elsewhere empty): a collective.
  // MPI's processor name: the machine under mpirun, the platform's host under smpirun.
  virtual std::vector<std::string> hosts() = 0;

  // Ends every rank: the message names this rank; never returns.
  [[noreturn]] virtual void abort(const std::string& message, int code) = 0;
};

// The memory of Comm::set_unread_storage, [begin, begin + bytes), and whether data lies
// wholly inside it (an empty range holds nothing).
class UnreadRange {
 public:
  void set(const void* begin, std::size_t bytes) {
    begin_ = static_cast<const char*>(begin);
    bytes_ = begin ? bytes : 0;
  }
  bool holds(const void* data, std::size_t bytes) const {
    const char* d = static_cast<const char*>(data);
    return begin_ && d >= begin_ && d + bytes <= begin_ + bytes_;
  }
  const void* begin() const { return begin_; }
  std::size_t bytes() const { return bytes_; }

 private:
  const char* begin_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace wulf

namespace wulf {

// One rank and no MPI: the sequential engine, where now() is the steady clock; or one rank
// on its own inside a parallel run (the session strategy), on that run's clock.
class SerialComm final : public Comm {
 public:
  SerialComm() = default;
  explicit SerialComm(Comm& clock) : clock_(&clock) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  double now() const override;
  // With a clock_, that clock's: it is the run's communicator, whose dilation it sets.
  void set_time_dilation(double d) override;
  void barrier() override {}
  void allreduce_sum(std::span<float>) override {}
  void allreduce_sum(std::span<double>) override {}
  void reduce_sum(std::span<float>, int) override {}
  void reduce_sum(std::span<double>, int) override {}
  void bcast(std::span<float>, int) override {}
  void bcast(std::span<double>, int) override {}
  void allgather(std::span<const float> send, std::span<float> recv) override;
  void allgather(std::span<const double> send, std::span<double> recv) override;
  void gather(std::span<const double> send, std::span<double> recv, int) override;
  void gather(std::span<const float> send, std::span<float> recv, int) override;
  void scatter(std::span<const float> send, std::span<float> recv, int) override;
  void scatterv(std::span<const float> send, std::span<const int> counts, std::span<float> recv, int root) override;
  // One rank has nobody to talk to: point to point is a fault in the caller.
  void send(std::span<const float>, int) override { alone(); }
  void send(std::span<const double>, int) override { alone(); }
  int recv(std::span<float>, int) override { alone(); }
  int recv(std::span<double>, int) override { alone(); }
  void recv_all(std::span<const std::span<float>> d, std::span<const int>) override {
    if (!d.empty()) alone();
  }
  void recv_all(std::span<const std::span<double>> d, std::span<const int>) override {
    if (!d.empty()) alone();
  }
  int irecv(std::span<float>, int, int) override { alone(); }
  int irecv(std::span<double>, int, int) override { alone(); }
  std::size_t wait(int) override { alone(); }
  void send_all(std::span<const float>, std::span<const int> dests) override {
    if (!dests.empty()) alone();
  }
  void send_all(std::span<const double>, std::span<const int> dests) override {
    if (!dests.empty()) alone();
  }
  int isend(std::span<const float>, int, int) override { alone(); }
  int isend(std::span<const double>, int, int) override { alone(); }
  bool test(int) override { alone(); }
  std::unique_ptr<Comm> split(int color, int) override;
  std::vector<std::string> hosts() override;  // this machine's name
  [[noreturn]] void abort(const std::string& message, int code) override;

 private:
  [[noreturn]] static void alone();
  Comm* clock_ = nullptr;
  double dilation_ = 1.0;
};

// d as a time dilation, or std::invalid_argument (a fault in the caller: the options were checked).
double checked_dilation(double d);

// What the result record needs from every rank once a run is over, gathered at rank 0 as
// gather(mine, all, 0) does (all: size() blocks of mine.size(), rank order; used at rank 0
// only), through a binomial tree of comm's point-to-point messages: a rank waits for one
// message at a time. SMPI's linear MPI_Gather makes the root wait on size() - 1 requests at
// once, which costs the simulator time that grows faster than the square of the ranks
// (experiments/scale). Not for data inside a run: its time would not be the library's.
void gather_for_record(Comm& comm, std::span<const double> mine, std::span<double> all);

}  // namespace wulf
