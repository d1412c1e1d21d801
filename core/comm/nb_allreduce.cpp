#include "comm/nb_allreduce.hpp"

#include "util/errors.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace wulf {

std::string_view to_string(NbAlgorithm a) {
  return a == NbAlgorithm::rdb ? "rdb" : a == NbAlgorithm::ring ? "ring" : "hierarchical";
}

NbAlgorithm parse_nb_algorithm(std::string_view name, std::string_view what) {
  if (name == "rdb") return NbAlgorithm::rdb;
  if (name == "ring") return NbAlgorithm::ring;
  if (name == "hierarchical") return NbAlgorithm::hierarchical;
  throw InputError(std::string(what) + " \"" + std::string(name) + "\": expected ring, rdb or hierarchical");
}

std::string node_layout_fault(std::span<const int> node_of, int ranks) {
  if (node_of.size() != static_cast<std::size_t>(ranks))
    return "a node for each of the " + std::to_string(ranks) + " ranks is needed, " + std::to_string(node_of.size()) +
           " given";
  std::map<int, int> count;
  for (int node : node_of) ++count[node];
  for (const auto& [node, n] : count)
    if (n != count.begin()->second)
      return std::to_string(n) + " ranks on node " + std::to_string(node) + ", " +
             std::to_string(count.begin()->second) + " on node " + std::to_string(count.begin()->first) +
             ": hierarchical needs the same number of ranks on every node";
  return "";
}

namespace {

std::vector<NbStep> rdb_schedule(int p, int r, std::size_t n) {
  std::vector<NbStep> steps;
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  int newrank = r - rem;
  if (r < 2 * rem) {
    if (r % 2 == 0) {  // folds into r + 1, and gets the result back from it
      steps.push_back({.to = r + 1, .send_n = n});
      steps.push_back({.from = r + 1, .recv_n = n});
      return steps;
    }
    steps.push_back({.from = r - 1, .recv_n = n, .add = true});
    newrank = r / 2;
  }
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int newdst = newrank ^ mask;
    const int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
    steps.push_back({.to = dst, .from = dst, .send_n = n, .recv_n = n, .add = true});
  }
  if (r < 2 * rem) steps.push_back({.to = r - 1, .send_n = n});
  return steps;
}

std::vector<NbStep> ring_schedule(int p, int r, std::size_t n) {
  const std::size_t ranks = static_cast<std::size_t>(p), early = (n + ranks - 1) / ranks, late = n / ranks,
                    split = n % ranks;
  auto at = [&](int c) {
    const auto i = static_cast<std::size_t>(c);
    return i < split ? i * early : split * early + (i - split) * late;
  };
  auto size = [&](int c) { return static_cast<std::size_t>(c) < split ? early : late; };
  auto chunk = [p](int c) { return ((c % p) + p) % p; };
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  std::vector<NbStep> steps;
  for (int k = 0; k < p - 1; ++k) {  // reduce-scatter: r ends holding chunk r + 1 summed
    const int out = chunk(r - k), in = chunk(r - k - 1);
    steps.push_back(
        {.to = right, .from = left, .send_at = at(out), .send_n = size(out), .recv_at = at(in), .recv_n = size(in), .add = true});
  }
  for (int k = 0; k < p - 1; ++k) {  // allgather of the summed chunks
    const int out = chunk(r + 1 - k), in = chunk(r - k);
    steps.push_back({.to = right, .from = left, .send_at = at(out), .send_n = size(out), .recv_at = at(in), .recv_n = size(in)});
  }
  return steps;
}

// Steps of a schedule over a group, made the world's: the group's ranks by their world ranks,
// their places in the data moved by `at`.
void append_mapped(std::vector<NbStep>& steps, std::span<const NbStep> part, const std::vector<int>& group,
                   std::size_t at) {
  for (NbStep s : part) {
    if (s.to >= 0) s.to = group[static_cast<std::size_t>(s.to)];
    if (s.from >= 0) s.from = group[static_cast<std::size_t>(s.from)];
    s.send_at += at, s.recv_at += at;
    steps.push_back(s);
  }
}

std::vector<NbStep> hierarchical_schedule(int p, int r, std::size_t n, std::span<const int> node_of) {
  if (const std::string fault = node_layout_fault(node_of, p); !fault.empty())
    throw std::invalid_argument("hierarchical allreduce: " + fault);  // the front end checked it
  // Each rank's place among its node's ranks (in rank order), and this node's ranks.
  std::vector<int> place(static_cast<std::size_t>(p)), local;
  std::map<int, int> ranks_seen;
  for (int q = 0; q < p; ++q) {
    const int node = node_of[static_cast<std::size_t>(q)];
    place[static_cast<std::size_t>(q)] = ranks_seen[node]++;
    if (node == node_of[static_cast<std::size_t>(r)]) local.push_back(q);
  }
  const int L = static_cast<int>(local.size()), i = place[static_cast<std::size_t>(r)];
  // Fewer values than a node's ranks: no chunk for each; recursive doubling over all ranks.
  if (n < local.size()) return rdb_schedule(p, r, n);
  std::vector<NbStep> steps;
  const std::vector<NbStep> within = L > 1 ? ring_schedule(L, i, n) : std::vector<NbStep>{};
  const std::size_t half = within.size() / 2;
  append_mapped(steps, std::span(within).first(half), local, 0);  // reduce-scatter: the node's sums
  // The chunk this rank now holds summed: the one its last reduce-scatter step added.
  const std::size_t chunk_at = L > 1 ? within[half - 1].recv_at : 0, chunk_n = L > 1 ? within[half - 1].recv_n : n;
  std::vector<int> across;  // the ranks of place i, one per node, in rank order
  for (int q = 0; q < p; ++q)
    if (place[static_cast<std::size_t>(q)] == i) across.push_back(q);
  const int me = static_cast<int>(std::ranges::find(across, r) - across.begin());
  const std::vector<NbStep> cross = nb_schedule(NbAlgorithm::ring, static_cast<int>(across.size()), me, chunk_n);
  append_mapped(steps, cross, across, chunk_at);
  append_mapped(steps, std::span(within).subspan(half), local, 0);  // allgather within the node
  return steps;
}

}  // namespace

std::vector<NbStep> nb_schedule(NbAlgorithm algorithm, int ranks, int rank, std::size_t n,
                                std::span<const int> node_of) {
  if (ranks <= 1 || n == 0) return {};
  if (algorithm == NbAlgorithm::hierarchical) return hierarchical_schedule(ranks, rank, n, node_of);
  // Fewer values than ranks: chunks would be empty; Open MPI's ring turns to recursive doubling too.
  if (algorithm == NbAlgorithm::ring && n >= static_cast<std::size_t>(ranks)) return ring_schedule(ranks, rank, n);
  return rdb_schedule(ranks, rank, n);
}

std::size_t nb_scratch_values(const std::vector<NbStep>& steps) {
  std::size_t most = 0;
  for (const NbStep& s : steps)
    if (s.add) most = std::max(most, s.recv_n);
  return most;
}

template <class T>
NbAllreduce<T>::NbAllreduce(Comm& comm, NbAlgorithm algorithm, std::size_t n, bool add, int tag,
                            std::span<const int> node_of)
    : comm_(comm), add_(add), tag_(tag), steps_(nb_schedule(algorithm, comm.size(), comm.rank(), n, node_of)),
      step_(steps_.size()) {}

template <class T>
void NbAllreduce<T>::start(std::span<T> data, std::span<T> scratch) {
  if (!done()) throw std::logic_error("NbAllreduce: started again before done");
  if (scratch.size() < scratch_values()) throw std::length_error("NbAllreduce: scratch too short");
  data_ = data, scratch_ = scratch, step_ = 0;
  if (!done()) post();
}

template <class T>
void NbAllreduce<T>::post() {
  const NbStep& s = steps_[step_];
  if (s.from >= 0) {
    const std::span<T> into = s.add ? scratch_.first(s.recv_n) : data_.subspan(s.recv_at, s.recv_n);
    recv_ticket_ = comm_.irecv(into, s.from, tag_);
  }
  if (s.to >= 0) send_ticket_ = comm_.isend(std::span<const T>(data_.subspan(s.send_at, s.send_n)), s.to, tag_);
}

template <class T>
void NbAllreduce<T>::complete_step() {
  const NbStep& s = steps_[step_];
  if (s.add && add_) {
    T* d = data_.data() + s.recv_at;
    const T* in = scratch_.data();
    for (std::size_t i = 0; i < s.recv_n; ++i) d[i] = in[i] + d[i];
  }
  if (++step_ < steps_.size()) post();
}

template <class T>
bool NbAllreduce<T>::progress() {
  while (!done()) {
    if (recv_ticket_ >= 0) {
      ++tests_;
      if (!comm_.test(recv_ticket_)) return false;
      recv_ticket_ = -1;
    }
    if (send_ticket_ >= 0) {
      ++tests_;
      if (!comm_.test(send_ticket_)) return false;
      send_ticket_ = -1;
    }
    complete_step();
  }
  return true;
}

template <class T>
void NbAllreduce<T>::finish() {
  while (!done()) {
    if (recv_ticket_ >= 0) comm_.wait(recv_ticket_), recv_ticket_ = -1;
    if (send_ticket_ >= 0) comm_.wait(send_ticket_), send_ticket_ = -1;
    complete_step();
  }
}

template class NbAllreduce<float>;
template class NbAllreduce<double>;

}  // namespace wulf
