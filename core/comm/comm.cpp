#include "comm/comm.hpp"

#include "util/errors.hpp"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

namespace wulf {

std::optional<SimMessages> sim_messages_named(std::string_view name) {
  for (std::size_t i = 0; i < sim_messages_names.size(); ++i)
    if (sim_messages_names[i] == name) return static_cast<SimMessages>(i);
  return std::nullopt;
}

int mpi_count(std::size_t n, std::string_view what, std::string_view remedy) {
  if (n <= mpi_count_limit) return static_cast<int>(n);
  throw InputError(std::string(what) + ": " + std::to_string(n) + " values, more than the " +
                   std::to_string(mpi_count_limit) + " one MPI call can take (its counts are C ints); " +
                   std::string(remedy) + " keeps it under");
}

void check_gathered(std::size_t send, std::size_t recv, int ranks, const char* call) {
  if (recv / static_cast<std::size_t>(ranks) != send || recv % static_cast<std::size_t>(ranks) != 0)
    throw std::length_error(std::string(call) + ": a receive buffer of " + std::to_string(recv) + " values for " +
                            std::to_string(ranks) + " ranks of " + std::to_string(send) + " (it must hold ranks x send)");
}

void check_scattered(std::size_t send, std::size_t recv, int ranks, const char* call) {
  if (send / static_cast<std::size_t>(ranks) != recv || send % static_cast<std::size_t>(ranks) != 0)
    throw std::length_error(std::string(call) + ": a send buffer of " + std::to_string(send) + " values for " +
                            std::to_string(ranks) + " ranks of " + std::to_string(recv) + " (it must hold ranks x recv)");
}

std::vector<int> scatterv_displacements(std::size_t send, std::span<const int> counts, std::size_t recv, int rank,
                                        int ranks, bool root) {
  if (counts.size() != static_cast<std::size_t>(ranks))
    throw std::length_error("scatterv: " + std::to_string(counts.size()) + " counts for " + std::to_string(ranks) +
                            " ranks");
  std::vector<int> displs(counts.size(), 0);
  std::size_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] < 0) throw std::length_error("scatterv: a negative count for rank " + std::to_string(r));
    displs[r] = mpi_count(total, "scatterv: the displacement of rank " + std::to_string(r));
    total += static_cast<std::size_t>(counts[r]);
  }
  mpi_count(total, "scatterv: the values of all ranks");
  if (recv != static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]))
    throw std::length_error("scatterv: a receive buffer of " + std::to_string(recv) + " values for a count of " +
                            std::to_string(counts[static_cast<std::size_t>(rank)]));
  if (root && send != total)
    throw std::length_error("scatterv: a send buffer of " + std::to_string(send) + " values for counts adding up to " +
                            std::to_string(total));
  return displs;
}

double checked_dilation(double d) {
  if (!(d > 0) || !std::isfinite(d)) throw std::invalid_argument("time dilation " + std::to_string(d) + " is not a positive number");
  return d;
}

void gather_for_record(Comm& comm, std::span<const double> mine, std::span<double> all) {
  const std::size_t n = mine.size();
  const int p = comm.size(), v = comm.rank();
  if (v == 0) check_gathered(n, all.size(), p, "gather_for_record");
  // held: the blocks of ranks v, v + 1, ... that reached v so far (rank 0: into all).
  std::vector<double> own;
  std::span<double> held = all;
  if (v != 0) {
    int reach = 1;  // the ranks v's subtree covers: its lowest set bit, or up to p
    while (!(v & reach) && v + reach < p) reach <<= 1;
    own.resize(n * static_cast<std::size_t>(std::min(reach, p - v)));
    held = own;
  }
  std::copy(mine.begin(), mine.end(), held.begin());
  std::size_t blocks = 1;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) {
      comm.send(std::span<const double>(held.data(), blocks * n), v - mask);
      return;
    }
    if (v + mask < p) {
      const std::size_t more = static_cast<std::size_t>(std::min(mask, p - v - mask));
      comm.recv(held.subspan(static_cast<std::size_t>(mask) * n, more * n), v + mask);
      blocks = static_cast<std::size_t>(mask) + more;
    }
  }
}

double SerialComm::now() const {
  if (clock_) return clock_->now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() / dilation_;
}

void SerialComm::set_time_dilation(double d) {
  if (clock_) clock_->set_time_dilation(d);
  else dilation_ = checked_dilation(d);
}

void SerialComm::allgather(std::span<const float> send, std::span<float> recv) {
  check_gathered(send.size(), recv.size(), 1, "allgather");
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::allgather(std::span<const double> send, std::span<double> recv) {
  check_gathered(send.size(), recv.size(), 1, "allgather");
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::gather(std::span<const double> send, std::span<double> recv, int) {
  check_gathered(send.size(), recv.size(), 1, "gather");
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::gather(std::span<const float> send, std::span<float> recv, int) {
  check_gathered(send.size(), recv.size(), 1, "gather");
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::scatter(std::span<const float> send, std::span<float> recv, int) {
  check_scattered(send.size(), recv.size(), 1, "scatter");
  std::copy(send.begin(), send.end(), recv.begin());
}
void SerialComm::scatterv(std::span<const float> send, std::span<const int> counts, std::span<float> recv, int) {
  scatterv_displacements(send.size(), counts, recv.size(), 0, 1, true);
  std::copy(send.begin(), send.end(), recv.begin());
}

std::unique_ptr<Comm> SerialComm::split(int color, int) {
  if (color == no_color) return nullptr;
  if (clock_) return std::make_unique<SerialComm>(*clock_);
  auto part = std::make_unique<SerialComm>();
  part->dilation_ = dilation_;
  return part;
}

void SerialComm::alone() { throw std::logic_error("point-to-point message on a communicator of one rank"); }

void SerialComm::abort(const std::string& message, int code) {
  if (clock_) clock_->abort(message, code);
  std::cerr << "wulf: " << safe_to_print(message) << std::endl;
  std::exit(code);
}

std::vector<std::string> SerialComm::hosts() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {"unknown"};
  return {name};
}

}  // namespace wulf
