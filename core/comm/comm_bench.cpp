#include "comm/comm_bench.hpp"
#include "comm/nb_allreduce.hpp"
#include "comm/own_comm.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "comm/staged_reduce.hpp"
#include "comm/gradient_bench.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace wulf {

Json comm_bench_json(const CommBenchConfig& c) {
  return {{"what", c.what},         {"sizes", c.sizes},         {"doubles", c.doubles},
          {"repeat", c.repeat},     {"back_to_back", c.back_to_back}, {"gap_s", c.gap_s}, {"unread", c.unread},
          {"bw_scale", c.bw_scale}, {"lat_scale", c.lat_scale}, {"dilation", c.dilation},
          {"reduce", c.reduce},     {"reduce_layout", c.reduce_layout}, {"bcast", c.bcast},
          {"gather", c.gather},     {"allreduce", c.allreduce}, {"composed_redbcast", c.composed_redbcast},
          {"rank_nodes", c.rank_nodes},
          {"rank_rings", c.rank_rings},
          {"check", c.check},
          {"root", c.root},         {"net", c.net},             {"sgemm_n", c.sgemm_n}};
}

CommBenchConfig comm_bench_from_json(const Json& j, const std::string& source) {
  CommBenchConfig c;
  read_fields(source, [&] {
    c.what = j.at("what").get<std::string>();
    c.sizes = j.at("sizes").get<std::vector<std::size_t>>();
    c.doubles = j.at("doubles").get<bool>();
    c.repeat = j.at("repeat").get<int>();
    c.back_to_back = j.at("back_to_back").get<bool>();
    c.gap_s = j.at("gap_s").get<double>();
    c.unread = j.at("unread").get<bool>();
    c.bw_scale = j.at("bw_scale").get<double>();
    c.lat_scale = j.at("lat_scale").get<double>();
    c.dilation = j.at("dilation").get<double>();
    c.reduce = j.at("reduce").get<std::string>();
    c.reduce_layout = j.at("reduce_layout").get<std::string>();
    c.bcast = j.at("bcast").get<std::string>();
    c.gather = j.at("gather").get<std::string>();
    c.allreduce = j.at("allreduce").get<std::string>();
    c.composed_redbcast = j.at("composed_redbcast").get<bool>();
    c.rank_nodes = j.at("rank_nodes").get<std::vector<int>>();
    c.rank_rings = j.at("rank_rings").get<std::vector<std::vector<int>>>();
    c.check = j.at("check").get<bool>();
    c.root = j.at("root").get<int>();
    c.net = j.at("net").get<std::string>();
    c.sgemm_n = j.at("sgemm_n").get<int>();
    return 0;
  });
  validate(c);
  return c;
}

void validate(const CommBenchConfig& c) {
  if (!is_one_of(c.what, {"pingpong", "allreduce", "reduce", "bcast", "allgather", "gather", "gradient"}))
    throw InputError("bench: what must be pingpong, allreduce, reduce, bcast, allgather, gather or gradient");
  if (c.check && !is_one_of(c.what, {"reduce", "bcast", "allgather", "gather"}))
    throw InputError("bench: check is for what reduce, bcast, allgather or gather");
  if (c.what == "gradient") gradient_bench_net(c.net);  // refuses an unknown net here
  if (c.sizes.empty()) throw InputError("bench: no sizes");
  if (c.repeat < 1) throw InputError("bench: repeat must be at least 1");
  if (!(c.gap_s >= 0 && c.gap_s <= 60)) throw InputError("bench: gap_s must be a number of seconds in [0, 60]");
  if (c.gap_s > 0 && !c.back_to_back) throw InputError("bench: gap_s is for back_to_back calls");
  if (!(c.bw_scale > 0) || !std::isfinite(c.bw_scale)) throw InputError("bench: bw_scale must be a positive number");
  if (!(c.lat_scale > 0) || !std::isfinite(c.lat_scale)) throw InputError("bench: lat_scale must be a positive number");
  if (!(c.dilation >= 1) || !std::isfinite(c.dilation)) throw InputError("bench: dilation must be at least 1");
  if (c.root < CommBenchConfig::every_root) throw InputError("bench: root must be a rank, or every_root");
  const AllreduceAlgorithm* algorithm = find_allreduce(c.allreduce);
  const bool rings = algorithm && algorithm->needs == AllreduceNeeds::rings;
  if (rings ? c.rank_rings.empty() : algorithm && algorithm->own_only() && c.rank_nodes.empty())
    throw InputError("bench: the " + c.allreduce + " allreduce needs " +
                     (rings ? "rank_rings, its rings' ranks" : "rank_nodes, each rank's node"));
  if (c.composed_redbcast && !(c.allreduce == "redbcast" && redbcast_runs_the_runs(c.reduce, c.bcast)))
    throw InputError("bench: composed_redbcast is for allreduce redbcast with a reduce and a bcast of Open MPI's "
                     "(not default, wulf-binomial or four-stage)");
  if (c.sgemm_n < 1 || c.sgemm_n > 16384) throw InputError("bench: sgemm_n must be a whole number in 1..16384");
}

namespace {

// The latest end of each stage over the ranks (the four-stage reducer's last call).
std::array<double, 4> stage_ends(Comm& comm, const PointToPointReduce& reducer) {
  const int p = comm.size();
  const std::array<double, 4> mine = reducer.last_stages().end_s;
  std::vector<double> all(4 * static_cast<std::size_t>(p));
  comm.gather(std::span<const double>(mine), std::span<double>(all), 0);
  std::array<double, 4> latest{};
  for (int r = 0; r < p; ++r)
    for (std::size_t s = 0; s < 4; ++s) latest[s] = std::max(latest[s], all[4 * static_cast<std::size_t>(r) + s]);
  return latest;
}

// The latest over the ranks of each one's seconds (on rank 0).
double latest(Comm& comm, double seconds) {
  std::array<double, 1> mine{seconds};
  std::vector<double> all(static_cast<std::size_t>(comm.size()));
  comm.gather(std::span<const double>(mine), std::span<double>(all), 0);
  return *std::max_element(all.begin(), all.end());
}

template <class T>
double time_collective(const CommBenchConfig& c, std::size_t n, Comm& comm, Compute& compute,
                       const PointToPointReduce* reducer, std::array<double, 4>& stages, std::vector<double>& calls) {
  const std::string& what = c.what;
  const int repeat = c.repeat;
  const bool unread = c.unread;
  const int p = comm.size();
  const bool gathers = what == "allgather" || what == "gather";
  std::vector<T> data(n, T(1)), gathered(gathers ? n * static_cast<std::size_t>(p) : 0);
  // --unread: the data's sums are declared unread for these calls only.
  struct Unread {
    Comm& comm;
    Unread(Comm& c, const void* begin, std::size_t bytes, bool on) : comm(c) {
      if (on) comm.set_unread_storage(begin, bytes);
    }
    ~Unread() { comm.set_unread_storage(nullptr, 0); }
  } const unread_data(comm, data.data(), n * sizeof(T), unread);
  auto call = [&] {
    if (what == "allreduce") comm.allreduce_sum(std::span<T>(data));
    if (what == "reduce") comm.reduce_sum(std::span<T>(data), 0);
    if (what == "bcast") comm.bcast(std::span<T>(data), 0);
    if (what == "allgather") comm.allgather(std::span<const T>(data), std::span<T>(gathered));
    if (what == "gather") comm.gather(std::span<const T>(data), std::span<T>(gathered), 0);
  };
  // On a real network one call first, untimed: Open MPI opens a TCP connection to a peer at
  // the first message, which no later call pays (the simulator has no such cost).
  if (!compute.simulated()) comm.barrier(), call();
  if (c.back_to_back) {
    comm.barrier();
    const double t0 = comm.now();
    for (int r = 0; r < repeat; ++r) {
      if (c.gap_s > 0) compute.begin(), compute.charge(Phase::forward, 1, 0);  // the gap: the profile's Tf
      const double start = comm.now();
      compute.charge_collective(), call();
      calls.push_back(comm.now() - start);
    }
    const double elapsed = comm.now() - t0;
    comm.barrier();
    return latest(comm, elapsed) / repeat - c.gap_s;
  }
  double total = 0;
  for (int r = 0; r < repeat; ++r) {
    comm.barrier();
    const double t0 = comm.now();
    compute.charge_collective();
    call();
    // The call's time is the last rank's: every rank's end, the latest of them.
    const double elapsed = comm.now() - t0;
    comm.barrier();
    total += latest(comm, elapsed);
    if (reducer && what == "reduce") {
      const std::array<double, 4> ends = stage_ends(comm, *reducer);
      for (std::size_t s = 0; s < 4; ++s) stages[s] += ends[s] / repeat;
    }
  }
  return total / repeat;
}

// Whole numbers, exact in float whatever the order of the additions: rank q's value i is
// (q + 1) * (i % 13 + 1). A reduce to root must leave there p (p + 1) / 2 * (i % 13 + 1); a
// bcast the root's values on every rank; a gather every rank's block at the root, an
// allgather on every rank. Rank 0
// prints {"check": what, ..., "wrong": values that differ, "ok": true|false}.
template <class T>
bool check_collective(const std::string& what, std::size_t n, int root, Comm& comm, std::ostream& out) {
  const int p = comm.size(), q = comm.rank();
  const auto value = [](int rank, std::size_t i) { return static_cast<T>((rank + 1) * static_cast<int>(i % 13 + 1)); };
  const bool gathers = what == "allgather" || (what == "gather" && q == root);
  std::vector<T> data(n), gathered(gathers ? n * static_cast<std::size_t>(p) : 0);
  for (std::size_t i = 0; i < n; ++i) data[i] = what == "bcast" && q != root ? T(0) : value(q, i);
  std::array<double, 1> wrong{0};
  if (what == "reduce") {
    comm.reduce_sum(std::span<T>(data), root);
    for (std::size_t i = 0; q == root && i < n; ++i)
      wrong[0] += data[i] != static_cast<T>(p * (p + 1) / 2 * static_cast<int>(i % 13 + 1));
  } else if (what == "bcast") {
    comm.bcast(std::span<T>(data), root);
    for (std::size_t i = 0; i < n; ++i) wrong[0] += data[i] != value(root, i);
  } else {
    if (what == "gather") comm.gather(std::span<const T>(data), std::span<T>(gathered), root);
    if (what == "allgather") comm.allgather(std::span<const T>(data), std::span<T>(gathered));
    for (std::size_t i = 0; i < gathered.size(); ++i) wrong[0] += gathered[i] != value(static_cast<int>(i / n), i % n);
  }
  // Counted by the library's allreduce, never one of wulf's own collectives under test.
  comm.allreduce_sum(std::span<double>(wrong));
  if (q == 0)
    out << json_line({{"check", what},
                      {"np", p},
                      {"size", n},
                      {"root", root},
                      {"wrong", static_cast<long long>(wrong[0])},
                      {"ok", wrong[0] == 0}})
        << std::endl;
  return wrong[0] == 0;
}

}  // namespace

void run_comm_bench(const CommBenchConfig& c, Comm& comm, Compute& compute, std::ostream& out,
                    const PointToPointReduce* reducer) {
  if (c.what == "gradient")
    return run_gradient_bench({c.net, c.sizes, c.repeat, c.sgemm_n}, comm, compute.simulated(), out);
  const int p = comm.size(), q = comm.rank();
  if (c.check) {
    if (c.root >= p) throw InputError("bench: root " + std::to_string(c.root) + " is not a rank");
    for (int root = std::max(c.root, 0); root < (c.root == CommBenchConfig::every_root ? p : c.root + 1); ++root)
      for (std::size_t size : c.sizes) {
        const bool ok = c.doubles ? check_collective<double>(c.what, size, root, comm, out)
                                  : check_collective<float>(c.what, size, root, comm, out);
        if (!ok) throw std::runtime_error("the " + c.what + " of " + std::to_string(size) + " values gave wrong values");
      }
    return;
  }
  for (std::size_t size : c.sizes) {
    double seconds = 0;
    std::size_t bytes = 0;
    std::array<double, 4> stages{};
    std::vector<double> calls;
    if (c.what == "pingpong") {
      if (p < 2) throw InputError("bench: a ping-pong needs 2 ranks");
      // size bytes, rounded up to whole floats; one-way time = round trip / 2.
      std::vector<float> buf((size + sizeof(float) - 1) / sizeof(float));
      bytes = buf.size() * sizeof(float);
      auto round_trip = [&] {
        if (q == 0) comm.send(buf, 1), comm.recv(buf, 1);
        if (q == 1) comm.recv(buf, 0), comm.send(buf, 0);
      };
      // One round trip untimed after the barrier: it opens the connection on a real network,
      // and it starts the clock when both ranks are in step. A barrier lets its ranks go at
      // different times (in SMPI's, rank 1 one latency after rank 0), which the first timed
      // message would otherwise wait for: the simulated 4 bytes of far2.xml took 1.168 times
      // the route's latency (3 round trips), 1.000 with this.
      comm.barrier();
      round_trip();
      // Each round trip's half is kept too: on a real network a loaded machine delays some of
      // them (a forwarder or a rank not scheduled), which the mean carries and the least does not.
      for (int r = 0; r < c.repeat; ++r) {
        const double start = comm.now();
        round_trip();
        calls.push_back((comm.now() - start) / 2.0);
      }
      seconds = std::accumulate(calls.begin(), calls.end(), 0.0) / c.repeat;
    } else {
      bytes = size * (c.doubles ? 8 : 4);
      seconds = c.doubles ? time_collective<double>(c, size, comm, compute, reducer, stages, calls)
                          : time_collective<float>(c, size, comm, compute, reducer, stages, calls);
    }
    if (q == 0) {
      Json row = {{"what", c.what}, {"np", p}, {"size", size}, {"bytes", bytes}, {"time_s", seconds}};
      if (reducer && c.what == "reduce" && !reducer->falls_back() && c.reduce == "four-stage" && !c.back_to_back)
        row["stages_s"] = stages;
      if (!calls.empty()) row["calls_s"] = calls;
      out << json_line(row) << std::endl;
    }
  }
}

std::vector<Json> read_bench_rows(const std::string& output, const std::string& source) {
  std::vector<Json> rows;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line.front() == '{') rows.push_back(parse_json(line, source));
  return rows;
}

}  // namespace wulf
