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

MemoryShape shape_of(const TrainJob& job) {
  MemoryShape s;
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
  if (job.spec.table) s.smaller_net = "a smaller net (a layer file of fewer parameters: --problem layers:FILE)";
  s.sim = job.engine == Engine::sim;
  s.reduce = job.reduce;
  s.allreduce = job.allreduce;
  s.fan_in = job.has_reduce_layout ? job.reduce_layout.fan_in : 3;
  s.sessions = job.sessions;
  s.spec = &job.spec;
  return s;
}

// The strategy's terms, from block's defaults.
StrategyMemory strategy_terms(const TrainJob& job, const MemoryShape& s) {
  StrategyMemory m;
  m.columns = std::ceil(static_cast<double>(block_size(job.config, static_cast<std::size_t>(s.n))) / s.p);
  m.order_patterns = s.share(s.n, false) + s.share(s.n, true);
  m.reduce_scratch = 2;  // the library's temporaries: two buffers of the message
  if (s.reduce == "wulf-binomial") m.reduce_scratch += 1;  // and wulf's own reduce's receive buffers
  if (s.reduce == "four-stage") m.reduce_scratch += 1 + s.fan_in;
  if (job.strategy->memory) job.strategy->memory(s, job.config, m);
  return m;
}

void add(std::vector<MemoryPart>& parts, std::string what, double first, double each, Kind kind, std::string shrink) {
  add_part(parts, std::move(what), first, each, kind, std::move(shrink));
}

// The net, the update's state and the last good weights.
void net_parts(const MemoryShape& s, const StrategyMemory& m, bool two_states, std::vector<MemoryPart>& parts) {
  // --numerics off under sim: the simulated ranks share one block (Compute::shared_storage).
  const double net = m.net_storage && (s.numerics || !s.sim) ? 2 * s.w * s.T : 0;
  add(parts, "the net's parameters and gradients, 2 x w values", net, net, Kind::held, s.smaller_net);
  if (!s.numerics) {
    if (s.sim && m.net_storage)  // Compute::net_storage: parameters, gradients and spare, 3 x w values
      add(parts, "the net's parameters, gradients and spare, 3 x w values", 3 * s.wT(), 0,
          Kind::shared, s.smaller_net);
    return;
  }
  const double step = (two_states ? 2 : 1) * s.wT();
  // The update's state and the last good weights (Run).
  const double first = s.wT() + m.updates_first * step + m.vectors_first;
  const double each = s.wT() + m.updates_each * step + m.vectors_each;
  add(parts, "the update's state (momentum, RPROP's steps, Adam's moments or cg's vectors) and the last good weights",
      first, each,
      Kind::held, s.smaller_net);
  // Under SMPI Comm::allreduce_sum_anywhere sums into a spare buffer of w values; OpenMPI
  // sums in place and never touches it.
  if (s.sim && s.p > 1 && m.sums_anywhere)
    add(parts, "the spare buffer the allreduce sums into (SMPI), w values", s.wT(), s.wT(), Kind::held,
        s.smaller_net);
  parts.insert(parts.end(), m.beside_net.begin(), m.beside_net.end());
}

// The rank's data as its strategy's DataLayout holds it, and scatter's buffers.
void data_parts(const TrainJob& job, const MemoryShape& s, std::vector<MemoryPart>& parts) {
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
  // rank, then its share kept (chars not at all without the arithmetic; a net given by its
  // layers has no data to make).
  const ProblemKind* kind = problem_kind(job.problem.name);
  const ProblemData data = kind ? kind->data : ProblemData::made;
  double loading = 0;
  if (data == ProblemData::none) {
  } else if (data == ProblemData::mnist) {
    // The bytes of the images read (the whole training set for ppt and scatter's rank 0),
    // and every label.
    const bool whole = layout == DataLayout::whole_train || layout == DataLayout::root_only ||
                       layout == DataLayout::whole || s.p == 1;
    if (s.numerics) loading = (whole ? s.n + s.m : std::max(n0, n1) + std::max(m0, m1)) * s.in + 4 * (s.n + s.m);
  } else if (s.numerics || data != ProblemData::made_with_numerics) {
    loading = (s.n + s.m) * s.pattern;
  }
  add(parts, "the data as it is loaded (the whole set, made before the rank's share is kept)", loading, loading,
      Kind::passing, "fewer patterns (--train-size, --test-size)");
}

// The activations and deltas of one block or evaluation chunk, and the orders of patterns.
void activation_parts(const TrainJob& job, const MemoryShape& s, const StrategyMemory& m,
                      std::vector<MemoryPart>& parts) {
  const int holders = m.holders > 0 ? m.holders : s.p;
  const double train_cols = m.columns;
  const double eval_cols = std::min(static_cast<double>(job.config.eval_chunk),
                                    std::max(MemoryShape::share(s.n, holders, true), MemoryShape::share(s.m, holders, true)));
  if (s.numerics) {
    const double held = s.T * (s.units * (std::max(train_cols, eval_cols) + train_cols) + (s.in + s.out) * train_cols) +
                        4 * train_cols;
    const std::string shrink = train_cols < eval_cols ? s.smaller_net : m.columns_shrink;
    add(parts, "the activations and deltas of one block or evaluation chunk", held, held, Kind::held, shrink);
    const double chunk = s.T * (s.in + s.out) * eval_cols;
    add(parts, "an evaluation chunk's patterns", chunk, chunk, Kind::passing, s.smaller_net);
  }
  // The pattern orders, 8 bytes a pattern.
  const double order = 8 * m.order_patterns;
  add(parts, "the order of the rank's patterns", order, order, Kind::held, "fewer patterns (--train-size)");
}

// The collectives' buffers: the strategy's own, the MPI library's temporaries.
void collective_parts(const MemoryShape& s, const StrategyMemory& m, std::vector<MemoryPart>& parts) {
  parts.insert(parts.end(), m.collectives.begin(), m.collectives.end());
  // Allreduces and reduces of the w values: the library's temporaries (measured: two
  // buffers of the message), and wulf's own reduce's receive buffers.
  if (!m.reduces_weights || s.p == 1) return;
  add(parts, "the MPI library's temporaries of the reduces of the w values", m.reduce_scratch * s.wT(),
      m.reduce_scratch * s.wT(), Kind::held, s.smaller_net);
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

// The file block SMPI maps over the shared parts, a part of its own.
void add_shared_block(MemoryEstimate& e) {
  for (const MemoryPart& part : e.parts)
    if (part.kind == Kind::shared) e.shared_bytes += part.first;
  if (e.shared_bytes <= 0) return;
  e.shared_block = smpi_shared_block_bytes(e.shared_bytes);
  add(e.parts, "the file block SMPI maps over the shared memory (smpi/shared-malloc-blocksize)",
      static_cast<double>(e.shared_block), 0, Kind::process, "");
}

Json byte_count(double bytes) {
  if (bytes < 9e18) return Json(static_cast<std::uint64_t>(std::llround(bytes)));
  return Json(bytes);
}

}  // namespace

std::size_t smpi_shared_block_bytes(double shared_bytes, long long max_map_count) {
  if (max_map_count <= 0) max_map_count = wulf::max_map_count();
  const double mappings = std::max(1.0, static_cast<double>(max_map_count / 2));
  std::size_t block = std::size_t{1} << 20;  // SimGrid's default
  while (shared_bytes / static_cast<double>(block) > mappings && block < (std::size_t{1} << 40)) block <<= 1;
  return block;
}

double MemoryEstimate::weight(const MemoryPart& part) const {
  const double others = std::max(0, ranks_here - 1);
  switch (part.kind) {
    case Kind::process: return part.first;
    case Kind::shared: return part.first / 512;  // the mappings' page tables; the block is a part of its own
    case Kind::passing: return one_process ? std::max(part.first, ranks_here > 1 ? part.each : 0)
                                           : part.first + others * part.each;
    case Kind::held: break;
  }
  return part.first + others * part.each;
}

const MemoryPart* MemoryEstimate::largest_shared() const {
  const MemoryPart* largest = nullptr;
  for (const MemoryPart& part : parts)
    if (part.kind == Kind::shared && (!largest || part.first > largest->first)) largest = &part;
  return largest;
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
  if (shared_bytes > 0) {
    j["shared_bytes"] = byte_count(shared_bytes);
    j["shared_block_bytes"] = shared_block;
  }
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
    if (part.kind == Kind::shared) process += e.weight(part);
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
  const MemoryShape s = shape_of(job);
  const StrategyMemory m = strategy_terms(job, s);
  MemoryEstimate e;
  e.ranks = job.np;
  e.ranks_here = job.engine == Engine::real ? real_ranks_here(job) : job.np;
  if (job.engine == Engine::seq) e.where = "this process";
  else if (job.engine == Engine::sim) e.where = fmt::format("the smpirun process of {} simulated ranks", job.np);
  else if (e.ranks_here < job.np && !job.hostfile.empty())
    e.where = "one rank process (--hostfile spreads the ranks; their hosts are not checked from here)";
  else e.where = fmt::format("{} rank processes on this machine", e.ranks_here);
  fixed_parts(job, e.parts);
  net_parts(s, m, job.config.learning == Learning::rprop || job.config.learning == Learning::adam, e.parts);
  data_parts(job, s, e.parts);
  activation_parts(job, s, m, e.parts);
  collective_parts(s, m, e.parts);
  add_shared_block(e);
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
    // The gather's receive buffer is the bench's on every rank (only the root's is used).
    if (what == "allgather" || what == "gather")
      add(e.parts, what + "'s receive buffer, elements x np values per rank", n * v * np, n * v * np, Kind::held,
          "fewer values (--elements) or ranks (--np), or no " + what + " (--collectives allreduce,reduce)");
    double scratch = 2;  // the library's temporaries (two buffers of the message), or wulf's tree reduces'
    if (what == "reduce" && reduce == "wulf-binomial") scratch += 1;
    if (what == "reduce" && reduce == "four-stage") scratch += 4;
    if (what != "allgather" && what != "gather")
      add(e.parts, "the MPI library's temporaries", scratch * n * v, scratch * n * v, Kind::held,
          "fewer values (--elements)");
  }
  total_memory(e, true);
  return e;
}


namespace {

// "the biggest part is the training set: 1.2 GiB; to shrink it: fewer patterns (...)".
std::string biggest_part(const MemoryEstimate& e) {
  const MemoryPart& big = e.biggest();
  return fmt::format("the biggest part is {}: {}{}", big.what, human_bytes(e.weight(big)),
                     big.shrink.empty() ? "" : "; to shrink it: " + big.shrink);
}

}  // namespace

void check_memory_fits(const MemoryEstimate& e, const std::optional<MachineMemory>& machine, bool force,
                       const std::string& who) {
  if (force || !machine || e.machine_bytes <= machine->bytes) return;
  throw InputError(
      fmt::format("{}the memory estimate is {} ({}), more than the {} this machine has ({}); {}; "
                  "--force runs it all the same",
                  who.empty() ? "" : who + ": ", human_bytes(e.machine_bytes), e.where, human_bytes(machine->bytes),
                  machine->source, biggest_part(e)));
}

void check_shared_mapping(const MemoryEstimate& e, const std::optional<MachineMemory>& limit, bool force) {
  const MemoryPart* part = e.largest_shared();
  if (force || !limit || !part || part->first <= limit->bytes) return;
  throw InputError(fmt::format(
      "the simulated ranks share memory in which no value is read (--numerics off), {} of it {}; SMPI reserves that "
      "as one mapping and holds a block of {} of it, but this machine's kernel grants one mapping at most {} ({}); "
      "to run it: {}, or `sysctl vm.overcommit_memory=1` (as root), under which the kernel grants it (this machine "
      "then holds about {}); --force runs it all the same",
      human_bytes(part->first), part->what, human_bytes(static_cast<double>(e.shared_block)), human_bytes(limit->bytes),
      limit->source, part->shrink.empty() ? "a smaller net" : part->shrink, human_bytes(e.machine_bytes)));
}

std::string out_of_memory_advice(const TrainJob& job) {
  const MemoryEstimate e = estimate_memory(job);
  std::string s = fmt::format("the run's memory estimate is {} ({})", human_bytes(e.machine_bytes), e.where);
  if (const std::optional<MachineMemory> machine = machine_memory())
    s += fmt::format(", this machine has {} ({})", human_bytes(machine->bytes), machine->source);
  s += "; " + biggest_part(e);
  if (job.double_precision) s += "; or --precision float (this run computes in double)";
  return s;
}

void check_message_counts(const TrainJob& job) {
  if (job.engine == Engine::seq) return;
  const std::size_t w = job.spec.parameter_count();
  // The strategies that move the whole net's values in one library call; the others' own
  // messages are their hook's to check.
  const StrategyDescriptor& d = *job.strategy;
  if (d.allreduces_weights || d.reduces || d.broadcasts)
    mpi_count(w, "the net's weights in one allreduce, reduce or broadcast", shape_of(job).smaller_net);
  if (d.message_counts) d.message_counts(shape_of(job), job.config);
}

}  // namespace wulf
