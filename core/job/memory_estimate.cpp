#include "job/memory_estimate.hpp"

#include "comm/comm.hpp"
#include "data/partition.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace wulf {
namespace {

using Kind = MemoryPart::Kind;
constexpr double KiB = 1024.0, MiB = 1024.0 * KiB;

// The fixed costs, measured as the largest resident set (/usr/bin/time -v) of small runs
// of the Release build and rounded up (ARCHITECTURE.md, "Memory").
constexpr double seq_process = 8 * MiB;   // wulf itself: code and libraries (measured 6 MiB)
constexpr double sim_process = 48 * MiB;  // smpirun's process, SimGrid and the platform (37 MiB), and wulf beside it
constexpr double sim_rank = 0.25 * MiB;   // SMPI's and wulf's state of one simulated rank (0.06 MiB measured at 1 024)
constexpr double real_rank = 24 * MiB;    // one rank process of Open MPI and wulf-rank-real (20 MiB)
constexpr double real_front = 16 * MiB;   // wulf and mpirun beside the rank processes

// What the estimate reads of a job, as doubles (a product of counts may pass 2^64).
struct Shape {
  int p = 1;               // ranks
  double T = 4;            // bytes of one value of the net
  double w = 0;            // weights
  double n = 0, m = 0;     // training and test patterns
  double in = 0, out = 0;  // inputs and outputs
  double input_bytes = 4;  // bytes of one stored input: a float, or 1 (Dataset::input_bytes)
  double pattern = 0;      // bytes of one stored pattern: its inputs, its float targets and its label
  double units = 0;        // units of the layers after the input, summed
  bool numerics = true;    // the arithmetic is done (the net, the data and the activations exist)
  bool sim = false;

  // Rank 0's share of total over parts ranks, and the largest other one's.
  static double share(double total, int parts, bool first) {
    if (parts <= 1) return first ? total : 0;
    if (first) return static_cast<double>(share_of(static_cast<std::size_t>(total), parts, 0).count);
    return std::ceil(total / parts);
  }
  double share(double total, bool first) const { return share(total, p, first); }
};

Shape shape_of(const TrainJob& job) {
  Shape s;
  s.p = job.np;
  s.T = job.double_precision ? 8 : 4;
  s.w = static_cast<double>(job.spec.parameter_count());
  s.n = static_cast<double>(job.problem.train_total);
  s.m = static_cast<double>(job.problem.test_total);
  s.in = job.problem.inputs;
  s.out = job.problem.outputs;
  s.input_bytes = job.problem.bytes_per_input;
  s.pattern = s.input_bytes * s.in + 4 * s.out + (job.problem.classifier ? 4 : 0);
  for (std::size_t l = 1; l < job.spec.sizes.size(); ++l) s.units += job.spec.sizes[l];
  s.numerics = job.compute.numerics;
  s.sim = job.engine == Engine::sim;
  return s;
}

void add(std::vector<MemoryPart>& parts, std::string what, double first, double each, Kind kind, std::string shrink) {
  if (first > 0 || each > 0) parts.push_back({std::move(what), first, each, kind, std::move(shrink)});
}

// The net, the update's state and the last good weights.
void net_parts(const TrainJob& job, const Shape& s, std::vector<MemoryPart>& parts) {
  // --numerics off under sim: the simulated ranks share one block (Compute::shared_storage).
  const double net = s.numerics || !s.sim ? 2 * s.w * s.T : 0;
  add(parts, "the net's parameters and gradients, 2 x w values", net, net, Kind::held, "a smaller net (--hidden)");
  if (!s.numerics) {
    // The ranks share one mapping of the block over the net's 3 x w values (its parameters,
    // gradients and spare, Compute::net_storage): its page tables, 8 bytes a page of 4 KiB,
    // once.
    const double tables = s.sim ? 3 * s.w * s.T / 512 : 0;
    add(parts, "the page tables of the net's shared storage (SMPI's shared malloc)", tables, 0, Kind::held,
        "a smaller net (--hidden)");
    return;
  }
  const double step = (job.config.learning == Learning::rprop ? 2 : 1) * s.w * s.T, wT = s.w * s.T;
  double first = wT, each = wT;  // the last good weights (Run)
  switch (job.strategy) {
    case Strategy::block:
    case Strategy::average:
    case Strategy::session: first += step, each += step; break;
    case Strategy::scatter:
    case Strategy::root: first += step; break;  // rank 0 makes the update
    case Strategy::cg: first += 4 * wT, each += 2 * wT; break;  // w0 and d; the master's direction state
    case Strategy::ppt: break;  // its update is in its allgather buffers
  }
  add(parts, "the update's state (momentum, RPROP's steps or cg's vectors) and the last good weights", first, each,
      Kind::held, "a smaller net (--hidden)");
  // Under SMPI the allreduce of block and average sums into a spare buffer of w values
  // (Comm::allreduce_sum_anywhere); OpenMPI sums in place and never touches it.
  if (s.sim && s.p > 1 && (job.strategy == Strategy::block || job.strategy == Strategy::average))
    add(parts, "the spare buffer the allreduce sums into (SMPI), w values", wT, wT, Kind::held,
        "a smaller net (--hidden)");
  if (job.strategy == Strategy::root && job.config.threads > 1) {
    const double copies = (job.config.threads - 1) * 2 * wT;
    add(parts, "root's nets of the threads beyond the first", copies, copies, Kind::held, "fewer --threads");
  }
}

// The rank's data as its strategy's DataLayout holds it, and scatter's buffers.
void data_parts(const TrainJob& job, const Shape& s, std::vector<MemoryPart>& parts) {
  const DataLayout layout = data_layout(job.config);
  const double n0 = s.share(s.n, true), m0 = s.share(s.m, true), n1 = s.share(s.n, false), m1 = s.share(s.m, false);
  double first = 0, each = 0;
  std::string shrink = "fewer patterns (--train-size, --test-size)";
  if (layout == DataLayout::root_only) {
    // Every rank receives its share as floats; rank 0 also holds the whole sets (and, while
    // it sends inputs kept as bytes, them as floats), or without the arithmetic a stand-in
    // of one matrix's size, and the labels as floats.
    const double received = s.pattern + (4 - s.input_bytes) * s.in;
    first = (n0 + m0) * received + 4 * std::max(s.n, s.m);
    first += s.numerics ? (s.n + s.m) * s.pattern + (s.input_bytes < 4 ? std::max(s.n, s.m) * 4 * s.in : 0)
                        : std::max(s.n, s.m) * 4 * std::max(s.in, s.out);
    each = (n1 + m1) * received;
    shrink += " or --strategy block (whose ranks read their own shares)";
  } else if (s.numerics) {
    switch (layout) {
      case DataLayout::shares: first = (n0 + m0) * s.pattern, each = (n1 + m1) * s.pattern; break;
      case DataLayout::whole_train:  // and the share of it that the errors are measured on
        first = (s.n + n0 + m0) * s.pattern, each = (s.n + n1 + m1) * s.pattern;
        shrink += " or --strategy block (whose ranks hold shares)";
        break;
      case DataLayout::whole:
        first = each = (s.n + s.m) * s.pattern;
        shrink += " or fewer ranks (--np): every rank holds both sets";
        break;
      case DataLayout::workers:
        each = (std::ceil(s.n / std::max(1, s.p - 1)) + std::ceil(s.m / std::max(1, s.p - 1))) * s.pattern;
        first = s.p > 1 ? 0 : (s.n + s.m) * s.pattern;
        break;
      case DataLayout::root_only: break;
    }
  }
  add(parts, "the rank's data (inputs as stored, 4-byte targets, and a label per pattern)", first, each, Kind::held,
      shrink);
  // Loading: MNIST is read share by share; the other problems are made whole on every
  // rank, then its share kept (chars not at all without the arithmetic).
  const std::string& name = job.problem.name;
  double loading = 0;
  if (name.rfind("digits", 0) == 0) {
    // The bytes of the images read (the whole training set for ppt and scatter's rank 0),
    // and every label.
    const bool whole = layout == DataLayout::whole_train || layout == DataLayout::root_only ||
                       layout == DataLayout::whole || s.p == 1;
    if (s.numerics) loading = (whole ? s.n + s.m : std::max(n0, n1) + std::max(m0, m1)) * s.in + 4 * (s.n + s.m);
  } else if (s.numerics || name.rfind("chars", 0) != 0) {
    loading = (s.n + s.m) * s.pattern;
  }
  add(parts, "the data as it is loaded (the whole set, made before the rank's share is kept)", loading, loading,
      Kind::passing, "fewer patterns (--train-size, --test-size)");
}

// Patterns per forward and backward pass of one rank: its share of a block, PPT's local
// epoch, cg's chunk.
double training_columns(const TrainJob& job, const Shape& s) {
  const TrainConfig& c = job.config;
  const auto n = static_cast<std::size_t>(s.n);
  switch (job.strategy) {
    case Strategy::ppt:
      return c.local_epoch ? std::min(s.n, static_cast<double>(c.local_epoch)) : std::max(1.0, std::floor(s.n / s.p));
    case Strategy::average:
      return static_cast<double>(block_size(c, static_cast<std::size_t>(std::max(s.share(s.n, false), s.share(s.n, true)))));
    case Strategy::cg:
      return c.cg.load_balance > 0 ? static_cast<double>(c.cg.chunk)
                                   : std::min(static_cast<double>(c.eval_chunk), s.share(s.n, true));
    case Strategy::session: {
      double most = 0;
      for (const TrainConfig& one : job.sessions) most = std::max(most, static_cast<double>(block_size(one, n)));
      return most;
    }
    default: return std::ceil(static_cast<double>(block_size(c, n)) / s.p);
  }
}

// The activations and deltas of one block or evaluation chunk, and the orders of patterns.
void activation_parts(const TrainJob& job, const Shape& s, std::vector<MemoryPart>& parts) {
  const int holders = job.strategy == Strategy::session ? 1 : s.p;
  const double train_cols = training_columns(job, s);
  const double eval_cols = std::min(static_cast<double>(job.config.eval_chunk),
                                    std::max(Shape::share(s.n, holders, true), Shape::share(s.m, holders, true)));
  if (s.numerics) {
    const double held = s.T * (s.units * (std::max(train_cols, eval_cols) + train_cols) + (s.in + s.out) * train_cols) +
                        4 * train_cols;
    const std::string shrink = train_cols < eval_cols ? "a smaller net (--hidden)"
                               : job.strategy == Strategy::ppt ? "a smaller --local-epoch"
                               : job.strategy == Strategy::cg  ? "a smaller net (--hidden)"
                                                               : "a smaller --block";
    add(parts, "the activations and deltas of one block or evaluation chunk", held, held, Kind::held, shrink);
    const double chunk = s.T * (s.in + s.out) * eval_cols;
    add(parts, "an evaluation chunk's patterns", chunk, chunk, Kind::passing, "a smaller net (--hidden)");
  }
  // The pattern orders (8 bytes a pattern): PPT draws from the whole set.
  double order = 8 * (s.numerics || job.strategy != Strategy::cg ? s.share(s.n, false) + s.share(s.n, true) : 0);
  if (job.strategy == Strategy::ppt) order = 8 * (s.n + train_cols);
  add(parts, "the order of the rank's patterns", order, order, Kind::held, "fewer patterns (--train-size)");
}

// The collectives' buffers: PPT's allgather, scatter's gather, the MPI library's temporaries.
void collective_parts(const TrainJob& job, const Shape& s, std::vector<MemoryPart>& parts) {
  const double p = s.p;
  if (job.strategy == Strategy::ppt) {
    const double all = (s.w + 1) * (p + 1) * s.T;  // this rank's update and every rank's
    add(parts, "PPT's allgather buffers, (w + 1) x (p + 1) values per rank", all, all, Kind::held,
        "fewer ranks (--np) or --strategy block");
  }
  if (job.strategy == Strategy::scatter && s.p > 1)
    add(parts, "scatter's gather of the gradients at rank 0, w x p values", s.w * p * s.T, 0, Kind::held,
        "fewer ranks (--np) or --strategy block");
  // Allreduces and reduces of the w values: the library's temporaries (measured: two
  // buffers of the message), and wulf's own reduce's receive buffers.
  const bool reduces = job.strategy == Strategy::block || job.strategy == Strategy::average ||
                       job.strategy == Strategy::root || job.strategy == Strategy::cg;
  if (!reduces || s.p == 1) return;
  const int fan_in = job.has_reduce_layout ? job.reduce_layout.fan_in : 3;
  double scratch = 2;
  if (job.reduce == "wulf-binomial") scratch += 1;
  if (job.reduce == "four-stage") scratch += 1 + fan_in;
  // --numerics off under sim, learning by epoch: wulf's reduces receive into the ranks'
  // shared memory (Compute::shared_scratch), and only four-stage's last stage, at most one
  // rank in fan_in + 1, calls the library's reduce.
  if (s.sim && !s.numerics && job.strategy == Strategy::root) {
    if (job.reduce == "wulf-binomial") scratch = 0;
    if (job.reduce == "four-stage") scratch = 2.0 / (fan_in + 1);
  }
  add(parts, "the MPI library's temporaries of the reduces of the w values", scratch * s.w * s.T,
      scratch * s.w * s.T, Kind::held, "a smaller net (--hidden)");
}

void fixed_parts(const TrainJob& job, std::vector<MemoryPart>& parts) {
  if (job.engine == Engine::seq) {
    add(parts, "wulf itself (code and libraries)", seq_process, 0, Kind::process, "");
  } else if (job.engine == Engine::sim) {
    add(parts, "the simulator (SimGrid, the platform) and wulf beside it", sim_process, 0, Kind::process, "");
    add(parts, "the state of a simulated rank (SMPI's and wulf's; one copy of the program serves all)", sim_rank,
        sim_rank, Kind::held, "fewer ranks (--np)");
  } else {
    add(parts, "wulf and mpirun beside the ranks", real_front, 0, Kind::process, "");
    add(parts, "a rank process (Open MPI and the rank program)", real_rank, real_rank, Kind::held,
        "fewer ranks (--np)");
  }
}

// Ranks of a real run on this machine: the user's launcher says how many; with a hostfile
// the hosts are not known here, and one rank is checked.
int real_ranks_here(const TrainJob& job) {
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); local && *local)
    if (const auto v = parse_number(local); v && *v >= 1 && *v <= job.np) return static_cast<int>(*v);
  return job.hostfile.empty() ? job.np : 1;
}

Json byte_count(double bytes) {
  if (bytes < 9e18) return Json(static_cast<std::uint64_t>(std::llround(bytes)));
  return Json(bytes);
}

}  // namespace

double MemoryEstimate::weight(const MemoryPart& part) const {
  const double others = std::max(0, ranks_here - 1);
  switch (part.kind) {
    case Kind::process: return part.first;
    case Kind::passing: return one_process ? std::max(part.first, ranks_here > 1 ? part.each : 0)
                                           : part.first + others * part.each;
    case Kind::held: break;
  }
  return part.first + others * part.each;
}

const MemoryPart& MemoryEstimate::biggest() const {
  static const MemoryPart none{"nothing", 0, 0, Kind::process, ""};
  if (parts.empty()) return none;
  return *std::max_element(parts.begin(), parts.end(),
                           [&](const MemoryPart& a, const MemoryPart& b) { return weight(a) < weight(b); });
}

Json MemoryEstimate::to_json() const {
  Json j = Json::object();
  j["per_rank_bytes"] = byte_count(per_rank_bytes);
  j["process_bytes"] = byte_count(process_bytes);
  j["machine_bytes"] = byte_count(machine_bytes);
  j["ranks_here"] = ranks_here;
  j["where"] = where;
  const MemoryPart& big = biggest();
  j["biggest"] = {{"what", big.what}, {"bytes", byte_count(weight(big))}, {"shrink", big.shrink}};
  Json all = Json::array();
  for (const MemoryPart& part : parts) all.push_back({{"what", part.what}, {"bytes", byte_count(weight(part))}});
  j["parts"] = std::move(all);
  return j;
}

void total_memory(MemoryEstimate& e, bool one_process) {
  double process = 0, held_first = 0, held_each = 0, pass_first = 0, pass_each = 0;
  for (const MemoryPart& part : e.parts) {
    if (part.kind == Kind::process) process += part.first;
    if (part.kind == Kind::held) held_first += part.first, held_each += part.each;
    // What a rank holds a while is not held at once with its other passing parts.
    if (part.kind == Kind::passing) pass_first = std::max(pass_first, part.first), pass_each = std::max(pass_each, part.each);
  }
  if (e.ranks == 1) held_each = pass_each = 0;
  const double others = std::max(0, e.ranks_here - 1);
  e.one_process = one_process;
  e.per_rank_bytes = std::max(held_first + pass_first, held_each + pass_each);
  if (one_process) {
    e.process_bytes = process + held_first + others * held_each + std::max(pass_first, e.ranks_here > 1 ? pass_each : 0);
    e.machine_bytes = e.process_bytes;
  } else {
    e.process_bytes = e.per_rank_bytes;
    e.machine_bytes = process + held_first + pass_first + others * (held_each + pass_each);
  }
}

MemoryEstimate estimate_memory(const TrainJob& job) {
  const Shape s = shape_of(job);
  MemoryEstimate e;
  e.ranks = job.np;
  e.ranks_here = job.engine == Engine::real ? real_ranks_here(job) : job.np;
  if (job.engine == Engine::seq) e.where = "this process";
  else if (job.engine == Engine::sim) e.where = fmt::format("the smpirun process of {} simulated ranks", job.np);
  else if (e.ranks_here < job.np && !job.hostfile.empty())
    e.where = "one rank process (--hostfile spreads the ranks; their hosts are not checked from here)";
  else e.where = fmt::format("{} rank processes on this machine", e.ranks_here);
  fixed_parts(job, e.parts);
  net_parts(job, s, e.parts);
  data_parts(job, s, e.parts);
  activation_parts(job, s, e.parts);
  collective_parts(job, s, e.parts);
  // Under mpirun (real, and testbed, whose hosts are all on this machine) every rank is a
  // process of its own; seq and sim run in one.
  total_memory(e, job.engine == Engine::seq || job.engine == Engine::sim);
  return e;
}

MemoryEstimate estimate_bench_memory(const std::string& what, int np, std::size_t elements, std::size_t value_bytes,
                                     const std::string& reduce) {
  MemoryEstimate e;
  e.ranks = e.ranks_here = np;
  e.where = fmt::format("the smpirun process of {} simulated ranks", np);
  add(e.parts, "the simulator (SimGrid, the platform) and wulf beside it", sim_process, 0, Kind::process, "");
  add(e.parts, "SMPI's private copy of the rank program, per simulated rank", sim_rank, sim_rank, Kind::held,
      "fewer ranks (--np)");
  const double n = static_cast<double>(elements), v = static_cast<double>(value_bytes);
  if (what == "pingpong") {
    add(e.parts, "the ping-pong's message buffer", n, n, Kind::held, "smaller messages (--sizes)");
  } else {
    add(e.parts, "each rank's values", n * v, n * v, Kind::held, "fewer values (--elements)");
    if (what == "allgather")
      add(e.parts, "allgather's receive buffer, elements x np values per rank", n * v * np, n * v * np, Kind::held,
          "fewer values (--elements) or ranks (--np), or no allgather (--collectives allreduce,reduce)");
    double scratch = 2;  // the library's temporaries (two buffers of the message)
    if (what == "reduce" && reduce == "wulf-binomial") scratch += 1;
    if (what == "reduce" && reduce == "four-stage") scratch += 4;
    if (what != "allgather")
      add(e.parts, "the MPI library's temporaries", scratch * n * v, scratch * n * v, Kind::held,
          "fewer values (--elements)");
  }
  total_memory(e, true);
  return e;
}

std::optional<MachineMemory> machine_memory() {
  if (const char* limit = std::getenv("WULF_MEMORY_LIMIT_BYTES"); limit && *limit) {
    const auto v = parse_number(limit);
    if (!v || !std::isfinite(*v) || *v <= 0)
      throw InputError(std::string("WULF_MEMORY_LIMIT_BYTES: '") + limit + "' is not a positive number of bytes");
    return MachineMemory{*v, "WULF_MEMORY_LIMIT_BYTES"};
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line))
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      double kib = 0;
      if (fields >> kib && kib > 0) return MachineMemory{kib * KiB, "MemAvailable"};
    }
  return std::nullopt;
}

void check_memory_fits(const MemoryEstimate& e, const std::optional<MachineMemory>& machine, bool force,
                       const std::string& who) {
  if (force || !machine || e.machine_bytes <= machine->bytes) return;
  const MemoryPart& big = e.biggest();
  throw InputError(fmt::format(
      "{}the memory estimate is {} ({}), more than the {} this machine has ({}); the biggest part is {}: {}{}; "
      "--force runs it all the same",
      who.empty() ? "" : who + ": ", human_bytes(e.machine_bytes), e.where, human_bytes(machine->bytes),
      machine->source, big.what, human_bytes(e.weight(big)),
      big.shrink.empty() ? "" : "; to shrink it: " + big.shrink));
}

void check_message_counts(const TrainJob& job) {
  if (job.engine == Engine::seq) return;
  const std::size_t w = job.spec.parameter_count();
  mpi_count(w, "the net's weights in one allreduce, reduce or broadcast", "a smaller net (--hidden)");
  if (job.strategy == Strategy::ppt)
    mpi_count(w + 1, "--strategy ppt: each rank's w + 1 values in the allgather", "a smaller net (--hidden)");
  if (job.strategy != Strategy::scatter) return;
  // scatter.cpp's scatters: every share's count and their sum, the last displacement.
  const Problem& p = job.problem;
  for (const std::size_t patterns : {p.train_total, p.test_total})
    for (const int per : {p.inputs, p.outputs})
      mpi_count(patterns * static_cast<std::size_t>(per),
                fmt::format("--strategy scatter: the scatter of {} patterns x {} values", patterns, per),
                "--strategy block (whose ranks read their own shares) or fewer patterns (--train-size, --test-size)");
}

}  // namespace wulf
