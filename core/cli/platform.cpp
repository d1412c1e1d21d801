// `wulf platform info FILE` and `wulf platform bench FILE`: what SimGrid makes of a platform
// file, and what MPI costs on it in simulation. Any valid SimGrid platform works: the
// platform is read by SimGrid's loader (wulf-platform) and measured by wulf-rank-sim under
// smpirun.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "util/machine.hpp"
#include "job/job_json.hpp"
#include "cli/train_options.hpp"
#include "cli/options.hpp"
#include "comm/allreduce_algorithms.hpp"
#include "comm/staged_reduce.hpp"
#include "comm/collective_choice.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"
#include "job/memory_estimate.hpp"
#include "job/train_job.hpp"
#include "comm/comm_bench.hpp"
#include "comm/nb_allreduce.hpp"
#include "comm/own_comm.hpp"
#include "comm/compute.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <thread>

namespace po = boost::program_options;

namespace wulf {
namespace {

// The lists' ranges: ping-pong messages up to 1 GiB, simulated ranks (those above the cores
// are skipped); values per rank in a collective, kBenchElementsRange.
constexpr Range message_bytes{.lo = 1, .hi = 1 << 30};
constexpr Range bench_ranks = kRanksRange;

std::string human_rate(double bytes_per_s) { return fmt::format("{:.4g} Mbit/s", bytes_per_s * 8 / 1e6); }

std::string human_time(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.4g} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.4g} ms", seconds * 1e3);
  return fmt::format("{:.4g} s", seconds);
}

// A name from the platform file, as the summary prints it: control characters escaped.
std::string name_in(const Json& j, const char* key) { return safe_to_print(j.at(key).get<std::string>()); }

void print_zone(std::ostream& out, const Json& zone, int depth) {
  out << std::string(static_cast<std::size_t>(2 * depth + 2), ' ') << name_in(zone, "name");
  const double hosts = zone.at("hosts").get<double>();
  if (hosts > 0) fmt::print(out, " ({:g} hosts)", hosts);
  out << "\n";
  for (const Json& child : zone.at("zones")) print_zone(out, child, depth + 1);
}

int info_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description options("wulf platform info FILE.xml [options]", 110, 55);
  options.add_options()("help,h", "print this help")("file", po::value<std::string>(), "the platform file")(
      "out", po::value<std::string>(), "write the description (JSON) to FILE");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  if (!vm.count("file")) throw InputError("wulf platform info: no platform file given");
  const std::string file = vm["file"].as<std::string>();
  if (vm.count("out")) check_output(vm["out"].as<std::string>(), "--out", {{"FILE", file}});

  Json info = platform_info(file);
  const auto& hosts = info.at("hosts");
  const auto& links = info.at("links");
  double cores = 0;
  std::map<std::pair<double, double>, int> kinds;  // (cores, speed) -> hosts
  for (const Json& h : hosts) {
    cores += h.at("cores").get<double>();
    kinds[{h.at("cores").get<double>(), h.at("speed_flops").get<double>()}] += 1;
  }
  out << "platform " << file << ": " << hosts.size() << " hosts, " << cores << " cores, " << links.size()
      << " links\n";
  out << "hosts:\n";
  for (const auto& [kind, count] : kinds)
    fmt::print(out, "  {:>5} x {:g} core{} at {:.4g} Gflop/s\n", count, kind.first, kind.first == 1 ? "" : "s",
               kind.second / 1e9);
  for (std::size_t i = 0; i < hosts.size() && i < 6; ++i)
    out << "  " << name_in(hosts[i], "name") << " (zone " << name_in(hosts[i], "zone")
        << ")\n";
  if (hosts.size() > 6) out << "  ... " << hosts.size() - 6 << " more\n";
  std::map<std::pair<double, double>, int> link_kinds;  // (bandwidth, latency) -> links
  for (const Json& l : links) link_kinds[{l.at("bandwidth_Bps").get<double>(), l.at("latency_s").get<double>()}] += 1;
  out << "links (bandwidth, latency):\n";
  for (const auto& [kind, count] : link_kinds)
    fmt::print(out, "  {:>5} x {}, {}\n", count, human_rate(kind.first), human_time(kind.second));
  out << "zones:\n";
  print_zone(out, info.at("zone"), 0);
  out << "slowest route between each pair of zones:\n";
  for (const Json& r : info.at("routes")) {
    out << "  " << name_in(r, "from_zone") << " -> " << name_in(r, "to_zone") << ": "
        << name_in(r, "from") << " -> " << name_in(r, "to") << ": ";
    if (r.at("bottleneck_link").is_null()) {
      out << "no route\n";
      continue;
    }
    out << r.at("links").size() << " links, latency " << human_time(r.at("latency_s").get<double>()) << ", bottleneck "
        << human_rate(r.at("bottleneck_Bps").get<double>()) << " (" << name_in(r, "bottleneck_link")
        << ")\n";
  }
  if (vm.count("out")) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"]["command"] = "platform info";
    record["config"]["platform"] = file;
    record["config"]["versions"] = versions_json();
    record["platform"] = std::move(info);
    write_file_atomically(vm["out"].as<std::string>(), record_text(record) + "\n");
    out << "record: " << vm["out"].as<std::string>() << "\n";
  }
  return exit_ok;
}

// wulf platform bench's options, checked: what to measure, on which platform.
struct BenchJob {
  std::string file;                       // the platform as given
  std::unique_ptr<GrownPlatform> grown;   // --grow's platform, or none
  std::string run_file;                   // the one the ranks run on: file or grown's
  std::vector<std::size_t> sizes, nps, elements;
  std::vector<std::string> collectives;   // allreduce, reduce, bcast, allgather, gather
  std::string type;                       // double or float
  std::string allreduce, reduce, bcast;   // the collectives' algorithms (the gathers': default)
  long long repeat = 0, grow = 0;
  long long ranks_per_host = 0;           // --ranks-per-host (0: each host filled to its cores)
  double bw_scale = 0, lat_scale = 0;
  double timeout = 0;                     // --timeout of each run (0: none)
  std::optional<std::vector<std::string>> hosts;  // the ping-pong pair's names (none: the first two)
  bool pingpong = true;
  bool back_to_back = false;              // the collectives' calls in a row, no barrier between them
  double gap_s = 0;                       // --gap: compute charged before each back-to-back call
  long long eager_limit = 0;              // --eager-limit bytes (0: the engine's default)
  bool unread = false;                    // --unread-sums: the collectives' sums are not computed
  std::string out;                        // the record to write (empty: none)
  std::string program;                    // wulf-rank-sim, or wulf-rank-real on the testbed
  bool force = false;                     // run even where the memory estimate says it does not fit
  Engine engine = Engine::sim;            // sim or testbed
  double dilation = 0;                    // testbed: --dilation (0: the default)
  bool drop_latencies = false;            // testbed: the first plan left the links' latencies out
};

// Checks the options, each with its own message, before anything runs; --grow's platform
// is written here.
BenchJob read_bench_job(const po::variables_map& vm) {
  if (!vm.count("file")) throw InputError("wulf platform bench: no platform file given");
  BenchJob job;
  job.file = vm["file"].as<std::string>();
  job.sizes = size_list(vm["sizes"].as<std::string>(), "sizes", message_bytes);
  job.nps = size_list(vm["np"].as<std::string>(), "np", bench_ranks);
  job.elements = size_list(vm["elements"].as<std::string>(), "elements", kBenchElementsRange);
  job.collectives = split_list(vm["collectives"].as<std::string>());
  for (const auto& c : job.collectives)
    if (!is_one_of(c, {"allreduce", "reduce", "bcast", "allgather", "gather"}))
      throw InputError("--collectives: unknown collective '" + c +
                       "' (expected allreduce, reduce, bcast, allgather or gather)");
  job.type = vm["type"].as<std::string>();
  job.allreduce = vm["allreduce"].as<std::string>();  // checked as it was read
  job.reduce = vm["reduce"].as<std::string>();
  job.bcast = vm["bcast"].as<std::string>();
  // The numbers are in their ranges (bench_options), checked as they were read.
  job.repeat = vm["repeat"].as<long long>();
  if (vm.count("out")) {
    job.out = vm["out"].as<std::string>();
    check_output(job.out, "--out", {{"FILE", job.file}});
  }
  job.bw_scale = vm["bw-scale"].as<double>();
  job.lat_scale = vm["lat-scale"].as<double>();
  if (vm.count("timeout")) job.timeout = vm["timeout"].as<double>();
  job.grow = vm["grow"].as<long long>();
  job.ranks_per_host = vm["ranks-per-host"].as<long long>();
  if (job.grow > 0) job.grown = std::make_unique<GrownPlatform>(job.file, job.grow);
  job.run_file = job.grown ? job.grown->path() : job.file;
  if (vm.count("hosts")) job.hosts = split_list(vm["hosts"].as<std::string>());
  job.pingpong = !vm.count("no-pingpong");
  job.back_to_back = vm.count("back-to-back") > 0;
  job.gap_s = vm["gap"].as<double>();
  if (job.gap_s > 0 && !job.back_to_back) throw InputError("--gap is for --back-to-back calls");
  job.unread = vm.count("unread-sums") > 0;
  if (vm.count("eager-limit")) job.eager_limit = vm["eager-limit"].as<long long>();
  job.engine = parse_engine(vm["engine"].as<std::string>());
  job.program = wulf_program(job.engine == Engine::testbed ? "wulf-rank-real" : "wulf-rank-sim");
  job.force = vm.count("force") > 0;
  if (vm.count("dilation")) {
    if (job.engine != Engine::testbed) throw InputError("--dilation is for --engine testbed");
    job.dilation = vm["dilation"].as<double>();
  }
  if (job.engine == Engine::testbed) {
    if (job.grow > 0 || job.lat_scale != 1.0)
      throw InputError("--grow and --lat-scale are for --engine sim (the testbed builds the platform's own hosts and latencies)");
  }
  return job;
}

// Every smpirun the benchmark will start (np above the platform's cores is skipped), its
// memory estimated against this machine's before the first one: an allgather's receive
// buffers grow as elements x np on each of np ranks, all in one process.
void check_bench_memory(const BenchJob& job, long long total_cores) {
  const std::optional<MachineMemory> machine = machine_memory();
  if (job.pingpong) {
    const std::size_t largest = *std::max_element(job.sizes.begin(), job.sizes.end());
    check_memory_fits(estimate_bench_memory("pingpong", 2, largest, 1, job.reduce), machine, job.force,
                      fmt::format("wulf platform bench: the ping-pong of {} bytes", largest));
  }
  const std::size_t most = *std::max_element(job.elements.begin(), job.elements.end());
  const std::size_t value = job.type == "float" ? 4 : 8;
  for (const std::string& what : job.collectives)
    for (const std::size_t np : job.nps)
      if (static_cast<long long>(np) <= total_cores)
        check_memory_fits(estimate_bench_memory(what, static_cast<int>(np), most, value, job.reduce), machine,
                          job.force, fmt::format("wulf platform bench: the {} of {} values on {} ranks", what, most, np));
}

// The ping-pong pair: the hosts named, or the platform's first two; one core each.
std::vector<PlatformHost> pingpong_pair(const BenchJob& job, const std::vector<PlatformHost>& hosts) {
  std::vector<PlatformHost> pair;
  if (job.hosts) {
    for (const std::string& name : *job.hosts) {
      const auto it = std::find_if(hosts.begin(), hosts.end(), [&](const PlatformHost& h) { return h.name == name; });
      if (it == hosts.end()) throw InputError("--hosts: the platform " + job.file + " has no host '" + name + "'");
      pair.push_back(*it);
    }
    if (pair.size() != 2 || pair[0].name == pair[1].name) throw InputError("--hosts: name two different hosts");
  } else {
    if (hosts.size() < 2) throw InputError("platform " + job.file + ": a ping-pong needs two hosts");
    pair = {hosts[0], hosts[1]};
  }
  for (auto& h : pair) h.cores = 1;
  return pair;
}

// The rank program's benchmark: what, the sizes, the repeats, the what-ifs.
CommBenchConfig bench_config(const BenchJob& job, const std::string& what, const std::vector<std::size_t>& list) {
  CommBenchConfig c;
  c.what = what;
  c.sizes = list;
  c.repeat = static_cast<int>(job.repeat);  // in its range
  c.bw_scale = job.bw_scale;
  c.lat_scale = job.lat_scale;
  c.doubles = job.type != "float";
  c.back_to_back = job.back_to_back;
  c.gap_s = job.gap_s;
  c.unread = job.unread;
  return c;
}

// The same on the testbed: the hosts `on` (their cores cut to np ranks) built as an
// emulated cluster, np ranks of wulf-rank-real under mpirun across it, times in the
// platform's seconds (the ranks divide by the dilation).
std::vector<Json> measure_on_testbed(const BenchJob& job, const std::vector<PlatformHost>& on, std::size_t np,
                                     const std::string& what, CommBenchConfig bench, const Collectives& chosen) {
  TestbedPlan plan = plan_testbed(job.run_file, hosts_of_ranks(on, static_cast<long long>(np)), static_cast<int>(np),
                                  job.dilation, job.bw_scale, job.drop_latencies);
  plan.platform = job.file;
  if (job.eager_limit > 0) plan.eager_bytes = job.eager_limit;
  const Testbed bed(std::move(plan));
  const MpiSessionDir session;
  std::vector<std::string> cmd = bed.command(job.program, session, chosen);
  bench.dilation = bed.plan().dilation;
  validate(bench);
  const RankJobArgs args(comm_bench_json(bench), job.engine == Engine::testbed);
  cmd.push_back("bench");
  cmd.insert(cmd.end(), args.args().begin(), args.args().end());
  RanksOutcome o;
  try {
    o = run_ranks(cmd, false, true, job.timeout, bed.environment());
  } catch (const TimedOut& e) {
    throw TimedOut{"platform " + job.file + ": the testbed's " + what + " run " + e.message};
  }
  if (o.code != 0) throw InputError("platform " + job.file + ": the testbed's " + what + " run failed: " + o.failure);
  return read_bench_rows(o.output, "the testbed's " + what + " run's output");
}

// The algorithms a bench run forces: `algorithm` for `what`; the others are the engine's own
// (the run makes none of those calls).
Collectives forced_for(const std::string& what, const std::string& algorithm) {
  Collectives c;
  if (what == "allreduce") c.allreduce = algorithm;
  if (what == "reduce") c.reduce = algorithm;
  if (what == "bcast") c.bcast = algorithm;
  if (what == "allgather") c.allgather = algorithm;
  if (what == "gather") c.gather = algorithm;
  return c;
}

// The hierarchical allreduce's layout of np ranks on the hosts `on` (as wulf train's): rank
// r's node, by its host's wulf:node (with its group), else its host. Uneven nodes are refused.
std::vector<int> bench_rank_nodes(const BenchJob& job, const std::vector<PlatformHost>& on, std::size_t np) {
  std::vector<int> nodes = rank_nodes_of(rank_node_keys(on, static_cast<long long>(np)));
  if (const std::string fault = node_layout_fault(nodes, static_cast<int>(np)); !fault.empty())
    throw InputError("platform " + job.file + ": the hierarchical allreduce on " + std::to_string(np) +
                     " ranks (nodes by the hosts' wulf:node, else the host): " + fault);
  return nodes;
}

// What the redbcast allreduce runs inside: Open MPI's (its nonoverlapping allreduce) calls
// the communicator's reduce to rank 0 and bcast from rank 0 of the whole vector, the ones
// mpirun forces (--reduce, --bcast) or, where the option is default or names wulf's own
// reduce that Open MPI has no number for, its fixed choice for the ranks and that size.
struct RedbcastParts {
  ResolvedCollective reduce, bcast;
};

RedbcastParts redbcast_parts(const BenchJob& job, std::size_t np, std::size_t bytes) {
  const auto ranks = static_cast<long long>(np);
  RedbcastParts parts{resolve_collective(Collective::reduce, job.reduce, ranks, bytes),
                      resolve_collective(Collective::bcast, job.bcast, ranks, bytes)};
  if (!redbcast_runs_the_runs(parts.reduce.name, parts.bcast.name)) {  // a reduce of wulf's own only
    parts.reduce = resolve_collective(Collective::reduce, "default", ranks, bytes);
    parts.reduce.chosen_by += " (Open MPI's redbcast cannot run --reduce " + job.reduce + ", wulf's own)";
  }
  return parts;
}

// One run of the rank program's bench on the hosts `on` (smpirun, or mpirun on the
// testbed): np ranks measure `what` at each size of list with the algorithm named
// ("default": each engine's own; the collectives' rows come through measure_sizes, which
// names one) and, for the redbcast allreduce, its parts (both engines forced to them, and
// under smpirun redbcast composed of them: SMPI's own would run SMPI's reduce and bcast); the
// rows rank 0 printed.
std::vector<Json> measure(const BenchJob& job, const std::vector<PlatformHost>& on, std::size_t np,
                          const std::string& what, const std::vector<std::size_t>& list,
                          const std::string& algorithm = "default",
                          const std::optional<RedbcastParts>& parts = std::nullopt) {
  CommBenchConfig bench = bench_config(job, what, list);
  // wulf's own algorithms run in the ranks: the bench is told them.
  if (what == "reduce" && is_point_to_point_reduce(algorithm)) {
    bench.reduce = algorithm;
    if (algorithm == "four-stage") bench.reduce_layout = reduce_layout_of(on, static_cast<int>(np));
  }
  if (what == "bcast") bench.bcast = algorithm;
  if (what == "gather") bench.gather = algorithm;
  if (what == "allreduce" && is_own_blocking_allreduce(algorithm)) {
    bench.allreduce = algorithm;
    if (find_allreduce(algorithm)->needs == AllreduceNeeds::rings)  // its rings: the hosts' wulf:rings
      bench.rank_rings = rank_rings_of(on, static_cast<long long>(np), "platform " + job.file);
    else  // its nodes: the hosts' wulf:node, else the host
      bench.rank_nodes = bench_rank_nodes(job, on, np);
  }
  Collectives chosen = forced_for(what, algorithm);
  if (parts) {
    bench.allreduce = algorithm;
    bench.reduce = chosen.reduce = parts->reduce.name;
    bench.bcast = chosen.bcast = parts->bcast.name;
    bench.composed_redbcast = job.engine == Engine::sim;
  }
  if (job.engine == Engine::testbed) return measure_on_testbed(job, on, np, what, bench, chosen);
  std::vector<std::string> cfg = smpi_collective_config(chosen);
  for (const std::string& setting : smpi_eager_config(job.eager_limit)) cfg.push_back(setting);
  const Hostfile hostfile(on, static_cast<long long>(np));
  std::vector<std::string> cmd = smpirun_command(job.run_file, hostfile, static_cast<int>(np), cfg, job.program);
  validate(bench);
  const RankJobArgs args(comm_bench_json(bench), job.engine == Engine::testbed);
  cmd.push_back("bench");
  cmd.insert(cmd.end(), args.args().begin(), args.args().end());
  RanksOutcome o;
  try {
    o = run_ranks(cmd, true, true, job.timeout);
  } catch (const TimedOut& e) {
    throw TimedOut{"platform " + job.file + ": the " + what + " run " + e.message};
  }
  if (o.code != 0) throw InputError("platform " + job.file + ": the " + what + " run failed: " + o.failure);
  return read_bench_rows(o.output, "the " + what + " run's output");
}

// The record's config: the platform, the pair, the algorithms and the what-ifs.
Json bench_config(const BenchJob& job, const std::vector<PlatformHost>& pair) {
  Json config = Json::object();
  config["command"] = "platform bench";
  config["platform"] = job.file;
  config["pingpong_hosts"] = Json::array({pair[0].name, pair[1].name});
  config["type"] = job.type;
  config["repeat"] = job.repeat;
  config["measured_as"] = {
      {"pingpong", "half the round trip, the mean over the calls (calls_s: each call's)"},
      {"collectives", job.back_to_back ? "the calls back to back, from one barrier to the last rank's finish of "
                                         "the last call, over the calls"
                                       : "from a barrier to the last rank's finish, the mean over the calls"}};
  config["back_to_back"] = job.back_to_back;
  config["gap_s"] = job.gap_s;
  config["eager_limit_bytes"] = job.eager_limit > 0 ? Json(job.eager_limit) : Json(nullptr);
  config["protocol"] = protocol_json(job.engine == Engine::testbed, job.eager_limit);
  config["unread_sums"] = job.unread;
  config["collective_algorithm"] = "allreduce:" + job.allreduce + ", reduce:" + job.reduce + ", bcast:" + job.bcast +
                                   ", allgather:default, gather:default";
  config["ranks_per_host"] = job.ranks_per_host;
  config["what_if"]["bw_scale"] = job.bw_scale;
  config["what_if"]["lat_scale"] = job.lat_scale;
  config["what_if"]["grow"] = job.grow;
  config["versions"] = versions_json();
  return config;
}

// The ping-pong's table, its latency and bandwidth, into record.
void bench_pingpong(const BenchJob& job, const std::vector<PlatformHost>& pair, std::ostream& out, Json& record) {
  out << "ping-pong " << pair[0].name << " <-> " << pair[1].name << " (one way):\n";
  fmt::print(out, "{:>12}{:>14}{:>18}\n", "bytes", "time", "rate");
  Json pingpong = Json::array();
  const std::vector<Json> pp = measure(job, pair, 2, "pingpong", job.sizes);
  for (const Json& row : pp) {
    const double t = row.at("time_s").get<double>(), bytes = row.at("bytes").get<double>();
    fmt::print(out, "{:>12g}{:>14}{:>18}\n", bytes, human_time(t), human_rate(bytes / t));
    pingpong.push_back(row);
  }
  // Latency: the smallest message's time; bandwidth: the largest's bytes over its time
  // beyond that latency (with one size, that size's rate).
  const double latency = pp.front().at("time_s").get<double>();
  const double beyond = pp.size() > 1 ? pp.back().at("time_s").get<double>() - latency : pp.back().at("time_s").get<double>();
  const double bandwidth = pp.back().at("bytes").get<double>() / std::max(1e-30, beyond);
  out << "latency " << human_time(latency) << ", bandwidth " << human_rate(bandwidth) << "\n";
  record["pingpong"] = std::move(pingpong);
  record["summary"]["latency_s"] = latency;
  record["summary"]["bandwidth_Bps"] = bandwidth;
}

// measure's rows for every size of --elements. A collective runs the algorithm its option
// names, or where it is `default`, Open MPI 4.1's choice for np ranks and each size
// (comm/collective_choice; a gather's by each rank's block): the sizes that share one are
// measured in one run, forced on the engine, and each row names its algorithm and how it
// was chosen.
std::vector<Json> measure_sizes(const BenchJob& job, const std::vector<PlatformHost>& hosts, std::size_t np,
                                const std::string& what) {
  Collective collective = Collective::allreduce;
  for (const Collective c : {Collective::allreduce, Collective::reduce, Collective::bcast, Collective::allgather,
                             Collective::gather})
    if (to_string(c) == what) collective = c;
  const std::string choice = what == "allreduce" ? job.allreduce
                             : what == "reduce"  ? job.reduce
                             : what == "bcast"   ? job.bcast
                                                 : "default";
  const std::size_t value_bytes = job.type == "float" ? sizeof(float) : sizeof(double);
  const auto pick = [&](std::size_t elements) {
    return resolve_collective(collective, choice, static_cast<long long>(np), elements * value_bytes);
  };
  // The redbcast allreduce's reduce and bcast, chosen for each size as well.
  const auto parts_of = [&](std::size_t elements) -> std::optional<RedbcastParts> {
    if (collective != Collective::allreduce || pick(elements).name != "redbcast") return std::nullopt;
    return redbcast_parts(job, np, elements * value_bytes);
  };
  const auto runs = [&](std::size_t elements) {  // what a run of the size forces
    const std::optional<RedbcastParts> parts = parts_of(elements);
    return pick(elements).name + (parts ? " " + parts->reduce.name + " " + parts->bcast.name : "");
  };
  std::vector<Json> rows;
  for (std::size_t first = 0; first < job.elements.size();) {
    const std::string algorithm = pick(job.elements[first]).name, forced = runs(job.elements[first]);
    std::size_t end = first + 1;
    while (end < job.elements.size() && runs(job.elements[end]) == forced) ++end;
    const std::vector<std::size_t> sizes(job.elements.begin() + static_cast<std::ptrdiff_t>(first),
                                         job.elements.begin() + static_cast<std::ptrdiff_t>(end));
    for (Json& row : measure(job, hosts, np, what, sizes, algorithm, parts_of(job.elements[first]))) {
      const std::size_t size = row.at("size").get<std::size_t>();
      row["algorithm"] = algorithm;
      row["chosen_by"] = pick(size).chosen_by;
      if (const std::optional<RedbcastParts> parts = parts_of(size)) {
        row["reduce"] = parts->reduce.name, row["reduce_chosen_by"] = parts->reduce.chosen_by;
        row["bcast"] = parts->bcast.name, row["bcast_chosen_by"] = parts->bcast.chosen_by;
      }
      rows.push_back(std::move(row));
    }
    first = end;
  }
  return rows;
}

// The collectives' table and rows; np above the platform's cores is skipped with a note.
Json bench_collectives(const BenchJob& job, const std::vector<PlatformHost>& hosts, long long total_cores,
                       std::ostream& out, std::ostream& err) {
  Json rows = Json::array();
  if (job.back_to_back)
    out << "collectives (" << job.type << ", " << job.repeat << " calls back to back, per call, the last rank's return):\n";
  else
    out << "collectives (" << job.type << ", mean of " << job.repeat << " calls, the last rank's return):\n";
  fmt::print(out, "{:>11}{:>6}{:>12}{:>14}\n", "collective", "np", "elements", "time");
  for (const std::string& what : job.collectives)
    for (std::size_t np : job.nps) {
      if (static_cast<long long>(np) > total_cores) {
        err << "wulf platform bench: np " << np << " skipped: the platform has " << total_cores << " cores\n";
        continue;
      }
      for (Json& row : measure_sizes(job, hosts, np, what)) {
        fmt::print(out, "{:>11}{:>6}{:>12}{:>14}  {}{}\n", what, np, row.at("size").get<long long>(),
                   human_time(row.at("time_s").get<double>()), row.at("algorithm").get<std::string>(),
                   row.contains("reduce") ? fmt::format(" ({} reduce, {} bcast)", row.at("reduce").get<std::string>(),
                                                        row.at("bcast").get<std::string>())
                                          : "");
        rows.push_back(std::move(row));
      }
    }
  return rows;
}

}  // namespace

po::options_description bench_options() {
  po::options_description options("wulf platform bench FILE.xml [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("file", po::value<std::string>(), "the platform file")
      ("hosts", po::value<std::string>(), "ping-pong between these two hosts, e.g. a,b (default: the first two)")
      ("sizes", po::value<std::string>()->default_value("1,1024,65536,1048576,16777216"),
       fmt::format("ping-pong message sizes, bytes, each in {}", range_text(message_bytes)).c_str())
      ("np", po::value<std::string>()->default_value("2,4,8,16"),
       fmt::format("ranks of the collectives, each in {} (those above the cores are skipped)", range_text(bench_ranks))
           .c_str())
      ("collectives", po::value<std::string>()->default_value("allreduce,reduce,allgather"),
       "which: allreduce, reduce, bcast, allgather, gather (each row names its algorithm)")
      ("elements", po::value<std::string>()->default_value("4096,16768,54912"),
       fmt::format("values per rank in the collectives, each in {}", range_text(kBenchElementsRange)).c_str())
      ("type", one_of({"double", "float"}, "--type: '{}' (expected double or float)")->default_value("double"),
       "value type: double|float")
      ("allreduce", allreduce_value()->default_value("default"),
       ("allreduce algorithm, the same on both engines: default (Open MPI 4.1's choice for each np and size, named "
        "in each row), or " + allreduce_names(AllreduceRows::all) + " (wulf train --help says what each is; redbcast's "
        "--reduce and --bcast, where default, are Open MPI's choice for the whole vector, named in each row)").c_str())
      ("reduce", reduce_value()->default_value("default"),
       "reduce algorithm, the same on both engines: default (Open MPI 4.1's choice for each np and size), Open "
       "MPI's linear, chain, pipeline, binary, binomial or in-order-binary, or wulf's own wulf-binomial or "
       "four-stage (seed 002's, its layout from the platform's host properties) (wulf train --help)")
      ("bcast", bcast_value()->default_value("default"),
       "broadcast algorithm, the same on both engines: default (Open MPI 4.1's choice for each np and size), "
       "linear, chain, pipeline, split-bintree, bintree, binomial, knomial or scatter-allgather (wulf train --help); the "
       "gathers' is always default")
      ("repeat", whole_in("repeat", {.lo = 1, .hi = 1e6})->default_value(3),
       "calls per measurement: a collective's time is the mean over the calls of the last rank's finish "
       "(every call starts after a barrier); a ping-pong's is half the mean round trip")
      ("ranks-per-host", whole_in("ranks-per-host", {.lo = 0, .hi = bench_ranks.hi})->default_value(0),
       "at most this many of the collectives' ranks on a host, e.g. 1 to measure the network between hosts only "
       "(0: each host filled to its cores, in the platform's order)")
      ("no-pingpong", "measure only the collectives")
      ("back-to-back", "the collectives' calls in a row, as training makes them: one barrier before the first "
                       "call, none between calls; the time is the last rank's finish of the last call over --repeat")
      ("gap", number_in("gap", {.lo = 0, .hi = 60})->default_value(0.0),
       "back to back: seconds of compute charged before each call, as a training's between its allreduces (the time "
       "is then per call less the gap; the record's rows hold rank 0's time in each call, calls_s)")
      ("bw-scale", number_in("bw-scale", kWhatIfScaleRange)->default_value(1.0), "what-if: every link's bandwidth times this")
      ("lat-scale", number_in("lat-scale", kWhatIfScaleRange)->default_value(1.0), "what-if: every link's latency times this")
      ("grow", whole_in("grow", kGrowRange)->default_value(0),
       "what-if: the platform's one homogeneous cluster with this many hosts (0: as it is)")
      ("engine", one_of({"sim", "testbed"}, "--engine: '{}' (expected sim or testbed)")->default_value("sim"),
       "sim (smpirun on the platform) or testbed (real Open MPI over an emulated cluster of the platform's hosts "
       "and links on this machine, as root; times in the platform's seconds)")
      ("dilation", number_in("dilation", kDilationRange), "testbed: time dilation D (default: as wulf train --engine testbed)")
      ("unread-sums", "the collectives' sums are not computed, as in a time-only training run (--numerics off): "
                      "the same messages and times, less of the simulator's arithmetic")
      ("eager-limit", whole_in("eager-limit", kEagerLimitRange),
       "messages up to this many bytes are sent without waiting for the receiver (default: sim SMPI's, where no "
       "data flows before the receive is posted; testbed 4194304, Open MPI's btl_tcp_eager_limit)")
      ("timeout", timeout_value(), timeout_help("each run (one smpirun or mpirun): ").c_str())
      ("out", po::value<std::string>(), "write the measurements (JSON) to FILE")
      ("force", "run even where the memory estimate of a run exceeds this machine's memory (MemAvailable, or "
                "$WULF_MEMORY_LIMIT_BYTES)");
  return options;
}

namespace {

int bench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = bench_options();
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  BenchJob job = read_bench_job(vm);
  const long long most_np = static_cast<long long>(*std::max_element(job.nps.begin(), job.nps.end()));
  const std::vector<PlatformHost> hosts =
      platform_hosts(job.run_file, most_np, job.ranks_per_host, {job.bw_scale, job.lat_scale, 1}).hosts;
  long long total_cores = 0;
  for (const auto& h : hosts) total_cores += h.cores;
  const std::vector<PlatformHost> pair = pingpong_pair(job, hosts);
  if (job.engine == Engine::sim) check_bench_memory(job, total_cores);

  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = bench_config(job, pair);
  record["config"]["engine"] = to_string(job.engine);
  out << "platform " << job.file << ": " << hosts.size() << " hosts, " << total_cores << " cores\n";
  if (job.engine == Engine::testbed) {
    // One dilation for every run of the bench: the one the largest run would get.
    ready_testbed("wulf platform bench --engine testbed", err);
    const long long largest = std::min(most_np, total_cores);
    TestbedPlan plan = plan_testbed(job.run_file, hosts_of_ranks(hosts, largest), static_cast<int>(largest),
                                    job.dilation, job.bw_scale);
    plan.platform = job.file;
    // Every run builds the network this plan does: its dilation, and its latencies left out
    // where it left them out (a run given the dilation would hold them, with forwarders
    // the dilation is too small for).
    job.dilation = plan.dilation;
    job.drop_latencies = !plan.latencies_held;
    print_testbed(out, plan);
    record["config"]["testbed"] = plan.to_json();
  }
  // On the testbed the wall clock is the measure: what else the machine did meanwhile, and what
  // its hypervisor took, go into the record beside the times.
  const MachineSample before = sample_machine();
  if (job.pingpong) bench_pingpong(job, pair, out, record);
  record["collectives"] = bench_collectives(job, hosts, total_cores, out, err);
  if (job.engine == Engine::testbed)
    record["machine"] = machine_use_json(before, sample_machine(), std::thread::hardware_concurrency());
  if (!job.out.empty()) {
    write_file_atomically(job.out, record_text(record) + "\n");
    out << "record: " << job.out << "\n";
  }
  return exit_ok;
}

}  // namespace

int platform_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? err : out) << "usage: wulf platform info FILE.xml [--out F.json]\n"
                               << "       wulf platform bench FILE.xml [options] (wulf platform bench --help)\n";
    return args.empty() ? exit_input : exit_ok;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "info") return info_command(rest, out);
  if (args[0] == "bench") return bench_command(rest, out, err);
  throw InputError("wulf platform: unknown verb '" + args[0] + "' (expected info or bench)");
}

}  // namespace wulf
