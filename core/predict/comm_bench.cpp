#include "predict/comm_bench.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "comm/staged_reduce.hpp"
#include "predict/gradient_bench.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace wulf {

namespace {

namespace po = boost::program_options;

// The rank program's bench options, as wulf platform bench and wulf calibrate pass them;
// CommBenchConfig holds their defaults. Values stay text here so that parse_comm_bench
// checks each with its own message; only whole option names are taken (no abbreviations).
po::variables_map read_bench_options(const std::vector<std::string>& args) {
  po::options_description options("bench");
  options.add_options()
      ("what", po::value<std::string>(), "pingpong, allreduce, reduce, allgather or gradient")
      ("sizes", po::value<std::string>(), "a list: bytes (pingpong), elements (collectives), patterns (gradient)")
      ("float", "collectives of floats instead of doubles")
      ("repeat", po::value<std::string>(), "calls per measurement")
      ("back-to-back", "collectives: the calls in a row, with no barrier between them")
      ("unread", "collectives: the sums are never read, as in a time-only training run")
      ("bw-scale", po::value<std::string>(), "what-if: links' bandwidth times this")
      ("lat-scale", po::value<std::string>(), "what-if: links' latency times this")
      ("dilation", po::value<std::string>(), "testbed: wall seconds per platform second")
      ("reduce", po::value<std::string>(), "wulf-binomial or four-stage: wulf's own reduce")
      ("reduce-layout", po::value<std::string>(), "four-stage: ReduceLayout's text")
      ("check", "reduce: check the sum exactly instead of timing")
      ("root", po::value<std::string>(), "reduce: the root of the check")
      ("net", po::value<std::string>(), "gradient: jocr or digits")
      ("sgemm", po::value<std::string>(), "gradient: the n x n SGEMM it is compared with");
  try {
    const auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
    const po::parsed_options parsed =
        po::command_line_parser(args).options(options).style(style).allow_unregistered().run();
    const std::vector<std::string> unknown = po::collect_unrecognized(parsed.options, po::include_positional);
    if (!unknown.empty()) throw InputError("bench: unknown argument '" + unknown.front() + "'");
    po::variables_map vm;
    po::store(parsed, vm);
    return vm;
  } catch (const po::invalid_command_line_syntax& e) {
    if (e.kind() != po::invalid_command_line_syntax::missing_parameter) throw;
    throw InputError("bench: " + e.get_option_name() + " needs a value");
  }
}

}  // namespace

CommBenchConfig parse_comm_bench(const std::vector<std::string>& args) {
  const po::variables_map vm = read_bench_options(args);
  auto given = [&](const char* option) { return vm.count(option) > 0; };
  auto text = [&](const char* option) { return vm[option].as<std::string>(); };
  // The number given for option, refused with "bench: --option rule" unless ok.
  auto number = [&](const char* option, bool (*ok)(double), const char* rule) {
    const auto v = parse_number(text(option));
    if (!v || !ok(*v)) throw InputError("bench: --" + std::string(option) + " " + rule);
    return *v;
  };
  auto at_least_1 = [](double v) { return v >= 1; };
  auto positive = [](double v) { return v > 0; };
  CommBenchConfig c;
  if (given("what")) c.what = text("what");
  if (given("sizes")) c.sizes = size_list(text("sizes"), "sizes");
  c.doubles = !given("float");
  c.back_to_back = given("back-to-back");
  c.unread = given("unread");
  if (given("repeat")) c.repeat = static_cast<int>(number("repeat", at_least_1, "must be at least 1"));
  if (given("bw-scale")) c.bw_scale = number("bw-scale", positive, "must be a positive number");
  if (given("lat-scale")) c.lat_scale = number("lat-scale", positive, "must be a positive number");
  if (given("dilation")) c.dilation = number("dilation", at_least_1, "must be at least 1");
  if (given("reduce")) c.reduce = text("reduce");
  if (given("reduce-layout")) c.reduce_layout = text("reduce-layout");
  c.check = given("check");
  if (given("root")) c.root = static_cast<int>(number("root", [](double v) { return v >= 0; }, "must be a rank"));
  if (given("net")) c.net = text("net");
  if (given("sgemm"))
    c.sgemm_n = static_cast<int>(number("sgemm", [](double v) { return v >= 1 && v <= 16384 && v == std::floor(v); },
                                        "must be a whole number in 1..16384"));
  if (!is_one_of(c.what, {"pingpong", "allreduce", "reduce", "allgather", "gradient"}))
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

// The latest over the ranks of each one's seconds (on rank 0).
double latest(Comm& comm, double seconds) {
  std::array<double, 1> mine{seconds};
  std::vector<double> all(static_cast<std::size_t>(comm.size()));
  comm.gather(std::span<const double>(mine), std::span<double>(all), 0);
  return *std::max_element(all.begin(), all.end());
}

template <class T>
double time_collective(const std::string& what, std::size_t n, int repeat, bool back_to_back, bool unread,
                       Comm& comm, Compute& compute, const PointToPointReduce* reducer,
                       std::array<double, 4>& stages) {
  const int p = comm.size();
  std::vector<T> data(n, T(1)), gathered(what == "allgather" ? n * static_cast<std::size_t>(p) : 0);
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
    if (what == "allgather") comm.allgather(std::span<const T>(data), std::span<T>(gathered));
  };
  // On a real network one call first, untimed: Open MPI opens a TCP connection to a peer at
  // the first message, which no later call pays (the simulator has no such cost).
  if (!compute.simulated()) comm.barrier(), call();
  if (back_to_back) {
    comm.barrier();
    const double t0 = comm.now();
    for (int r = 0; r < repeat; ++r) compute.charge_collective(), call();
    const double elapsed = comm.now() - t0;
    comm.barrier();
    return latest(comm, elapsed) / repeat;
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
      if (!compute.simulated()) {  // the connection opened, untimed (as for the collectives)
        if (q == 0) comm.send(buf, 1), comm.recv(buf, 1);
        if (q == 1) comm.recv(buf, 0), comm.send(buf, 0);
      }
      comm.barrier();
      const double t0 = comm.now();
      for (int r = 0; r < c.repeat; ++r) {
        if (q == 0) comm.send(buf, 1), comm.recv(buf, 1);
        if (q == 1) comm.recv(buf, 0), comm.send(buf, 0);
      }
      seconds = (comm.now() - t0) / (2.0 * c.repeat);
    } else {
      bytes = size * (c.doubles ? 8 : 4);
      seconds = c.doubles ? time_collective<double>(c.what, size, c.repeat, c.back_to_back, c.unread, comm, compute, reducer, stages)
                          : time_collective<float>(c.what, size, c.repeat, c.back_to_back, c.unread, comm, compute, reducer, stages);
    }
    if (q == 0) {
      Json row = {{"what", c.what}, {"np", p}, {"size", size}, {"bytes", bytes}, {"time_s", seconds}};
      if (reducer && c.what == "reduce" && !reducer->falls_back() && c.reduce == "four-stage" && !c.back_to_back)
        row["stages_s"] = stages;
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
