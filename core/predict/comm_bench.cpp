#include "predict/comm_bench.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "comm/staged_reduce.hpp"
#include "predict/gradient_bench.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace wulf {

CommBenchConfig parse_comm_bench(const std::vector<std::string>& args) {
  CommBenchConfig c;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw InputError("bench: " + a + " needs a value");
      return args[++i];
    };
    if (a == "--what") {
      c.what = value();
    } else if (a == "--sizes") {
      std::stringstream list(value());
      std::string item;
      while (std::getline(list, item, ',')) {
        const auto v = parse_number(item);
        if (!v || *v < 1 || *v != static_cast<double>(static_cast<std::size_t>(*v)))
          throw InputError("bench: size '" + item + "' is not a whole number >= 1");
        c.sizes.push_back(static_cast<std::size_t>(*v));
      }
    } else if (a == "--reduce") {
      c.reduce = value();
    } else if (a == "--reduce-layout") {
      c.reduce_layout = value();
    } else if (a == "--check") {
      c.check = true;
    } else if (a == "--root") {
      const auto v = parse_number(value());
      if (!v || *v < 0) throw InputError("bench: --root must be a rank");
      c.root = static_cast<int>(*v);
    } else if (a == "--net") {
      c.net = value();
    } else if (a == "--sgemm") {
      const auto v = parse_number(value());
      if (!v || *v < 1 || *v > 16384 || *v != static_cast<double>(static_cast<int>(*v)))
        throw InputError("bench: --sgemm must be a whole number in 1..16384");
      c.sgemm_n = static_cast<int>(*v);
    } else if (a == "--float") {
      c.doubles = false;
    } else if (a == "--bw-scale" || a == "--lat-scale") {
      const auto v = parse_number(value());
      if (!v || *v <= 0) throw InputError("bench: " + a + " must be a positive number");
      (a == "--bw-scale" ? c.bw_scale : c.lat_scale) = *v;
    } else if (a == "--repeat") {
      const auto v = parse_number(value());
      if (!v || *v < 1) throw InputError("bench: --repeat must be at least 1");
      c.repeat = static_cast<int>(*v);
    } else {
      throw InputError("bench: unknown argument '" + a + "'");
    }
  }
  if (c.what != "pingpong" && c.what != "allreduce" && c.what != "reduce" && c.what != "allgather" &&
      c.what != "gradient")
    throw InputError("bench: --what must be pingpong, allreduce, reduce, allgather or gradient");
  if (c.what == "gradient") gradient_bench_net(c.net);  // refuses an unknown net here
  if (c.sizes.empty()) throw InputError("bench: no --sizes");
  return c;
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

template <class T>
double time_collective(const std::string& what, std::size_t n, int repeat, Comm& comm, Compute& compute,
                       const PointToPointReduce* reducer, std::array<double, 4>& stages) {
  const int p = comm.size();
  std::vector<T> data(n, T(1)), gathered(what == "allgather" ? n * static_cast<std::size_t>(p) : 0);
  double total = 0;
  for (int r = 0; r < repeat; ++r) {
    comm.barrier();
    const double t0 = comm.now();
    compute.charge_collective();
    if (what == "allreduce") comm.allreduce_sum(std::span<T>(data));
    if (what == "reduce") comm.reduce_sum(std::span<T>(data), 0);
    if (what == "allgather") comm.allgather(std::span<const T>(data), std::span<T>(gathered));
    // The call's time is the last rank's: every rank's end, the latest of them.
    std::array<double, 1> elapsed{comm.now() - t0};
    comm.barrier();
    std::vector<double> all(static_cast<std::size_t>(p));
    comm.gather(std::span<const double>(elapsed), std::span<double>(all), 0);
    total += *std::max_element(all.begin(), all.end());
    if (reducer && what == "reduce") {
      const std::array<double, 4> ends = stage_ends(comm, *reducer);
      for (std::size_t s = 0; s < 4; ++s) stages[s] += ends[s] / repeat;
    }
  }
  return total / repeat;
}

// Every rank contributes (rank + 1) * (i % 13 + 1); the root must hold
// p (p + 1) / 2 * (i % 13 + 1) exactly, whatever the order of the additions.
template <class T>
bool check_reduce(std::size_t n, int root, Comm& comm, std::ostream& out) {
  const int p = comm.size(), q = comm.rank();
  std::vector<T> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<T>((q + 1) * static_cast<int>(i % 13 + 1));
  comm.reduce_sum(std::span<T>(data), root);
  std::array<double, 1> wrong{0};
  if (q == root)
    for (std::size_t i = 0; i < n; ++i)
      if (data[i] != static_cast<T>(p * (p + 1) / 2 * static_cast<int>(i % 13 + 1))) wrong[0] += 1;
  comm.bcast(std::span<double>(wrong), root);
  if (q == 0)
    out << json_line({{"check", "reduce"},
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
    if (c.what != "reduce") throw InputError("bench: --check is for --what reduce");
    if (c.root >= p) throw InputError("bench: --root " + std::to_string(c.root) + " is not a rank");
    for (std::size_t size : c.sizes) {
      const bool ok = c.doubles ? check_reduce<double>(size, c.root, comm, out) : check_reduce<float>(size, c.root, comm, out);
      if (!ok) throw std::runtime_error("the reduce of " + std::to_string(size) + " values gave a wrong sum");
    }
    return;
  }
  for (std::size_t size : c.sizes) {
    double seconds = 0;
    std::size_t bytes = 0;
    std::array<double, 4> stages{};
    if (c.what == "pingpong") {
      if (p < 2) throw InputError("bench: a ping-pong needs 2 ranks");
      // size bytes, rounded up to whole floats; one-way time = round trip / 2.
      std::vector<float> buf((size + sizeof(float) - 1) / sizeof(float));
      bytes = buf.size() * sizeof(float);
      comm.barrier();
      const double t0 = comm.now();
      for (int r = 0; r < c.repeat; ++r) {
        if (q == 0) comm.send(buf, 1), comm.recv(buf, 1);
        if (q == 1) comm.recv(buf, 0), comm.send(buf, 0);
      }
      seconds = (comm.now() - t0) / (2.0 * c.repeat);
    } else {
      bytes = size * (c.doubles ? 8 : 4);
      seconds = c.doubles ? time_collective<double>(c.what, size, c.repeat, comm, compute, reducer, stages)
                          : time_collective<float>(c.what, size, c.repeat, comm, compute, reducer, stages);
    }
    if (q == 0) {
      Json row = {{"what", c.what}, {"np", p}, {"size", size}, {"bytes", bytes}, {"time_s", seconds}};
      if (reducer && c.what == "reduce" && !reducer->falls_back() && c.reduce == "four-stage") row["stages_s"] = stages;
      out << json_line(row) << std::endl;
    }
  }
}

}  // namespace wulf
