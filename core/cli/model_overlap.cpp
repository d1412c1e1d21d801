// `wulf model --overlap`: the time per iteration of --strategy overlap and of block with the
// same allreduce, predicted (predict/overlap_model.hpp) for lists of p, b and bucket sizes,
// with the constants of the platform: each host's speed over the net's flops (as --compute
// flops charges them), the route and links between the ranks' hosts, and the platform's
// collective overhead. One rank per host, in the platform's order.
#include "cli/cli.hpp"
#include "cli/model_overlap.hpp"
#include "cli/options.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "comm/allreduce_algorithms.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "nn/mlp.hpp"
#include "predict/overlap_model.hpp"
#include "predict/fsdp_model.hpp"
#include "train/shard_units.hpp"
#include "train/buckets.hpp"
#include "train/run.hpp"
#include "job/train_job.hpp"
#include "job/device_memory.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace po = boost::program_options;

namespace wulf {
namespace {

constexpr Range bucket_range{.lo = 0, .hi = 1099511627776.0};  // --bucket-bytes, as wulf train's
constexpr Range progress_range{.lo = 0, .hi = 1e18};

// The options only --overlap reads, and those it passes to wulf train's resolution of the net.
constexpr const char* overlap_only[] = {"platform", "problem", "hidden", "precision", "bias", "train-size",
                                        "test-size", "bucket-bytes", "bucket-allreduce", "progress-flops",
                                        "strategy", "learning", "pipeline"};
constexpr const char* passed[] = {"hidden", "precision", "bias", "train-size", "test-size", "learning"};
// --strategy fsdp's options the model reads, passed as they are to wulf train's resolution
// (which checks them).
constexpr const char* fsdp_passed[] = {"sharding",           "shard-unit",  "shard-algorithm",     "forward-prefetch",
                                       "backward-prefetch",  "gather-limit", "shard-progress-flops", "shard-stream",
                                       "recompute"};
constexpr const char* bucket_options[] = {"bucket-bytes", "bucket-allreduce", "progress-flops"};

struct OverlapJob {
  std::string strategy = "overlap";  // overlap (and block beside it) or fsdp
  std::string platform, problem_spec;
  std::vector<int> ps;
  std::vector<std::size_t> bs, buckets;
  NbAlgorithm algorithm = NbAlgorithm::ring;
  double progress_flops = 0;
  NetSpec spec;
  std::string net_text;  // "digits 784-256-10 float"
  std::size_t train = 0, checked = 0;  // checked: patterns of the iteration's test pass
  std::size_t element_bytes = 4;  // the schedules' values: float or double (bf16 travels in floats)
  std::size_t sent_bytes = 4;     // a value's bytes in a bucket (2 under bf16)
  // The schedules' values that carry n parameters (train/run.hpp's wire_values).
  std::size_t wire(std::size_t n) const {
    return element_bytes == sizeof(double) ? wire_values<double>(sent_bytes, n) : wire_values<float>(sent_bytes, n);
  }
  bool half = false;
  Learning learning = Learning::block;
  TrainConfig config;  // as wulf train resolves it: fsdp's settings
  std::vector<PlatformHost> hosts;
  std::string out;
  bool pipeline = false;  // --pipeline: each cell's collectives printed
};

// The GPUs a server of the platform (its hosts in order, each with its wulf:node, as many on
// every node, the nodes 0, 1, ... in order), or 0 where its hosts are not so.
int per_server(const std::vector<PlatformHost>& hosts) {
  std::size_t G = 0;
  while (G < hosts.size() && hosts[G].node == hosts[0].node && hosts[G].group == hosts[0].group) ++G;
  if (G == 0 || hosts.size() % G != 0 || hosts[0].node < 0) return 0;
  for (std::size_t k = 0; k < hosts.size(); ++k)
    if (hosts[k].node != hosts[0].node + static_cast<int>(k / G) || hosts[k].group != hosts[0].group) return 0;
  return static_cast<int>(G);
}

// Rank r's host at r: the platform's first p hosts, or for more ranks than it has, its servers
// repeated (server s of the model is a copy of the file's server 0, node s), for
// predict/rank_routes' extension. InputError where the platform is not servers alike.
// The GPUs a server where p ranks need the platform extended (0: they do not); InputError
// where it cannot be.
int extended_servers_of(const OverlapJob& job, int p) {
  if (static_cast<std::size_t>(p) <= job.hosts.size()) return 0;
  const int G = per_server(job.hosts);
  if (G == 0 || job.hosts.size() < 3 * static_cast<std::size_t>(G))
    throw InputError(fmt::format("--np {}: {} has {} hosts; for more ranks the model extends a platform of servers "
                                 "(hosts with wulf:node, as many on each, in order, at least three servers, as "
                                 "platforms/gpu/generate.py writes them), and its hosts are not so",
                                 p, job.platform, job.hosts.size()));
  return G;
}

std::vector<PlatformHost> model_hosts(const OverlapJob& job, int p) {
  const auto n = static_cast<std::size_t>(p);
  const int G = extended_servers_of(job, p);
  if (G == 0) return {job.hosts.begin(), job.hosts.begin() + p};
  std::vector<PlatformHost> placed;
  placed.reserve(n);
  for (std::size_t r = 0; r < n; ++r) {
    PlatformHost h = job.hosts[r % static_cast<std::size_t>(G)];
    h.node = job.hosts[0].node + static_cast<int>(r / static_cast<std::size_t>(G));
    placed.push_back(std::move(h));
  }
  return placed;
}

// The routes between the p ranks for the book's messages: read from the platform for its first
// p hosts, or extended from its first three servers (predict/rank_routes.hpp). hosts: the
// network's description of its hosts (rank 0's first).
RankRoutes rank_routes(const OverlapJob& job, int p, const PatternBook& book, Json& hosts) {
  std::string list;
  if (static_cast<std::size_t>(p) <= job.hosts.size()) {
    for (int r = 0; r < p; ++r) list += (r ? "," : "") + job.hosts[static_cast<std::size_t>(r)].name;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (const Message& m : book.pairs()) pairs.emplace_back(m.first, m.second);
    return RankRoutes(read_network(job.platform, list, 1.0, hosts, pairs));
  }
  const int G = per_server(job.hosts);
  for (int r = 0; r < 3 * G; ++r) list += (r ? "," : "") + job.hosts[static_cast<std::size_t>(r)].name;
  return RankRoutes::extended(read_network(job.platform, list, 1.0, hosts), G, job.platform);
}

// What the model says of the platform at p: read, or extended beyond its hosts.
std::string extension_note(const OverlapJob& job, int p) {
  if (static_cast<std::size_t>(p) <= job.hosts.size()) return "";
  const int G = per_server(job.hosts);
  return fmt::format("; {} servers of {} GPUs extended from the file's {} (its servers alike, each its own links): "
                     "extrapolated beyond the {} GPUs a simulation of the file checks",
                     (p + G - 1) / G, G, job.hosts.size() / static_cast<std::size_t>(G), job.hosts.size());
}

OverlapJob read_overlap_job(const po::variables_map& vm) {
  for (const char* required : {"platform", "problem"})
    if (!vm.count(required)) throw InputError("wulf model --overlap: --" + std::string(required) + " is required");
  if (vm.count("profile"))
    throw InputError("wulf model --overlap: the constants come from --platform (its hosts' speed and links), "
                     "not a --profile");
  if (vm.count("average-interval")) throw InputError("--average-interval is seed 000's model's, not --overlap's");
  OverlapJob job;
  job.platform = vm["platform"].as<std::string>();
  job.problem_spec = vm["problem"].as<std::string>();
  if (vm.count("out")) job.out = vm["out"].as<std::string>();
  job.pipeline = vm.count("pipeline") && vm["pipeline"].as<bool>();
  for (long long p : whole_list(vm["np"].as<std::string>(), "np", kRanksRange)) job.ps.push_back(static_cast<int>(p));
  job.bs = size_list(vm["block"].as<std::string>(), "block", kBlockRange);
  job.buckets = size_list(vm["bucket-bytes"].as<std::string>(), "bucket-bytes", bucket_range);
  job.algorithm = parse_nb_algorithm(vm["bucket-allreduce"].as<std::string>(), "--bucket-allreduce");
  if (vm.count("strategy")) job.strategy = vm["strategy"].as<std::string>();
  if (job.strategy != "overlap" && job.strategy != "block" && job.strategy != "fsdp")
    throw InputError("--strategy \"" + job.strategy + "\": the platform model works out overlap (with block beside it) "
                     "and fsdp; simulate the others (wulf train --engine sim)");
  for (const char* name : fsdp_passed)
    if (vm.count(name) && job.strategy != "fsdp") throw InputError("--" + std::string(name) + " is for --strategy fsdp");
  for (const char* name : bucket_options)
    if (job.strategy == "fsdp" && vm.count(name) && !vm[name].defaulted())
      throw InputError("--" + std::string(name) + " is for --strategy overlap (fsdp's collectives are its units')");
  job.progress_flops = vm["progress-flops"].as<double>();
  const int most = *std::max_element(job.ps.begin(), job.ps.end());
  job.hosts = platform_hosts(job.platform).hosts;
  extended_servers_of(job, most);  // refused unless it extends
  for (int p : job.ps)
    for (std::size_t b : job.bs)
      if (b < static_cast<std::size_t>(p))
        throw InputError(fmt::format("--block {} < --np {}: every rank needs a pattern of each block", b, p));
  // The net, its precision and the data's sizes as wulf train resolves them for a time-only
  // simulation of the largest cell (no data read beyond its shape).
  std::vector<std::string> args{"--problem", job.problem_spec, "--engine", "sim", "--platform", job.platform,
                                "--np", std::to_string(std::min<std::size_t>(static_cast<std::size_t>(most), job.hosts.size())),
                                "--ranks-per-host", "1", "--strategy",
                                job.strategy == "fsdp" ? "fsdp" : "overlap",
                                "--numerics", "off", "--compute", "flops", "--quiet",
                                "--block", std::to_string(*std::max_element(job.bs.begin(), job.bs.end()))};
  for (const char* name : passed)
    if (vm.count(name)) args.insert(args.end(), {std::string("--") + name, vm[name].as<std::string>()});
  for (const char* name : fsdp_passed)
    if (vm.count(name)) args.insert(args.end(), {std::string("--") + name, vm[name].as<std::string>()});
  const TrainJob train = resolve(parse_train(args, train_options()));
  job.config = train.config;
  job.spec = train.spec;
  job.element_bytes = train.double_precision ? sizeof(double) : sizeof(float);
  job.sent_bytes = train.config.value_bytes ? train.config.value_bytes : job.element_bytes;
  job.half = !train.half.empty();
  job.learning = train.config.learning;
  job.train = train.problem.train_total;
  job.checked = train.problem.test_total > 0 ? train.problem.test_total : train.problem.train_total;
  job.net_text = fmt::format("{} {} {}", train.problem.name, job.spec.describe(), train.double_precision ? "double" : "float");
  if (!job.out.empty()) check_output(job.out, "--out", {{"--platform", job.platform}});
  return job;
}

// What one rank of p computes in one update of b patterns: the flops wulf charges on the
// platform's first host (--compute flops: its speed, its efficiency by kind of layer, its
// device's measured layer times, its 16-bit rate), as the simulation charges them.
OverlapWork rank_work(const OverlapJob& job, const ComputeConfig& host, double call_s, int p, std::size_t b) {
  const ChargedFlops charged = charged_kernel_flops(job.spec, host, job.half, job.learning);
  const double speed = host.host_speed;
  const double share = std::ceil(static_cast<double>(b) / p);  // the busiest rank's patterns
  OverlapWork w;
  w.forward_s = share * charged.kernels.forward / speed;
  for (int l = 1; l <= job.spec.timed_layers(); ++l) {
    const double flops = share * charged.backward[static_cast<std::size_t>(l - 1)];
    w.backward_s.push_back(flops / speed);
    w.slices.push_back(progress_slices(flops, job.progress_flops));
  }
  w.update_s = charged.kernels.update / speed;
  w.call_s = call_s;
  w.test_s = std::ceil(static_cast<double>(job.checked) / p) * charged.kernels.test() / speed;
  return w;
}

// The compute of a host as wulf-platform network describes it.
ComputeConfig host_compute(const Json& host, const PlatformHost& placed, const std::string& platform) {
  ComputeConfig c;
  c.mode = ComputeMode::flops;
  c.numerics = false;
  c.host_speed = host.at("speed_flops").get<double>();
  c.device = host.value("device", "");
  const std::string where = "platform " + platform + ", host " + host.at("name").get<std::string>();
  if (const std::string e = host.value("efficiency", ""); !e.empty())
    c.efficiency = parse_kind_efficiency(e, where + ": wulf:efficiency");
  c.speed16 = placed.speed16;  // checked when the hosts were read
  return c;
}

// What a rank's device holds for a cell of p ranks and blocks of b (job/device_memory), and
// whether the platform's device (its first host's wulf:memory) holds it: the simulation
// refuses a run that does not fit; the model says so of the cell.
struct DeviceFit {
  double bytes = 0, memory = 0;
  bool fits = true;
};
DeviceFit device_fit(const OverlapJob& job, int p, std::size_t b, const std::vector<int>& node_of) {
  if (!job.spec.table) return {};
  TrainConfig config = job.config;
  config.block = b;
  config.rank_nodes = node_of;
  const DeviceMemory need = device_memory(job.spec, config, p, static_cast<double>(job.element_bytes));
  const double memory = job.hosts[0].memory;
  return {need.total, memory, !(memory > 0) || need.total <= memory};
}

// A cell beyond the platform file's hosts: no simulation of this file checks it. The record
// says so, and from which size (the file's GPUs, the most a simulation of it runs).
void extrapolation(const OverlapJob& job, int p, Json& e) {
  if (static_cast<std::size_t>(p) <= job.hosts.size()) return;
  const int G = per_server(job.hosts);
  e["extrapolated"] = true;
  e["extrapolated_from_gpus"] = job.hosts.size();
  e["extended_servers"] = (p + G - 1) / G;
  e["gpus_per_server"] = G;
}

// A cell's record fields of the device, and its note in the table ("" where it fits).
std::string device_note(const DeviceFit& fit, Json& e) {
  e["device_bytes"] = fit.bytes;
  e["fits_device"] = fit.fits;
  return fit.fits ? "" : fmt::format(" (does not fit: {} of {})", gib(fit.bytes), gib(fit.memory));
}

// Where p ranks on the platform's hosts are (model_hosts), as a collective needs it: each
// rank's node (nodes) and the rings (rings). what: the option that needs it, for a refusal.
NbLayout rank_layout(const OverlapJob& job, int p, bool nodes, bool rings, const std::string& what) {
  NbLayout layout;
  if (p < 2 || (!nodes && !rings)) return layout;
  const std::vector<PlatformHost> placed = model_hosts(job, p);
  if (nodes) {
    layout.node_of = rank_nodes_of(rank_node_keys(placed, p));
    if (const std::string fault = node_layout_fault(layout.node_of, p); !fault.empty())
      throw InputError(fmt::format("{} on {} ranks of {}: {}", what, p, job.platform, fault));
  }
  if (rings) layout.rings = rank_rings_of(placed, p, job.platform);
  return layout;
}

// A model's record: the job's platform and net, the command's own settings, and its grid.
void write_model_record(const OverlapJob& job, const std::string& command, const Json& settings, Json grid,
                        std::ostream& out) {
  if (job.out.empty()) return;
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = settings;
  record["config"]["command"] = command;
  record["config"]["platform"] = job.platform;
  record["config"]["net"] = job.net_text;
  record["config"]["versions"] = versions_json();
  record["grid"] = std::move(grid);
  write_file_atomically(job.out, record_text(record) + "\n");
  out << "record: " << job.out << "\n";
}

// --strategy fsdp: the time per iteration of the units' gathers and reductions behind the
// passes (predict/fsdp_model.hpp), for each p and b.
int fsdp_model(const OverlapJob& job, std::ostream& out) {
  const TrainConfig& c = job.config;
  const Sharding sharding = *sharding_named(setting_text(c, "sharding"));
  const bool rings = setting_text(c, "shard-algorithm") == "rings";
  const FsdpOptions options{.sharding = sharding,
                            .forward_prefetch = setting_text(c, "forward-prefetch") == "on",
                            .backward_prefetch = setting_text(c, "backward-prefetch") == "on",
                            .gather_limit = setting_count(c, "gather-limit"),
                            .one_stream = setting_text(c, "shard-stream") == "one"};
  const double slice_flops = setting(c, "shard-progress-flops");
  const std::vector<ShardUnitLayers> layers_of = shard_units(job.spec, static_cast<int>(setting_count(c, "shard-unit")));
  const std::size_t weights = job.spec.parameter_count();
  fmt::print(out, "fsdp model, platform {}: {}, {} weights in {} units, sharding {}, {}, {} stream{}{}\n", job.platform,
             job.net_text, weights, layers_of.size(), setting_text(c, "sharding"),
             rings ? "rings" : "one ring", setting_text(c, "shard-stream"),
             options.backward_prefetch ? ", backward prefetch" : "", options.forward_prefetch ? ", forward prefetch" : "");
  Json grid = Json::array();
  std::string table;
  for (int p : job.ps) {
    const std::string what = rings ? "--shard-algorithm rings" : "--sharding hybrid";
    NbLayout layout = rank_layout(job, p, sharding == Sharding::hybrid, rings, what);
    PatternBook book(p, std::move(layout));
    std::vector<FsdpUnit> units;
    std::size_t shard_values = 0;
    for (const ShardUnitLayers& u : layers_of) {
      ShardComm plan = shard_comm_plan(book, sharding, job.wire(u.parameters), job.element_bytes);
      shard_values += plan.shard;
      units.push_back({u.first, u.last, std::move(plan.gather), std::move(plan.reduce)});
    }
    const CommPlan sums = allreduce_plan(book, NbAlgorithm::rdb, 4, sizeof(double));
    Json hosts;
    const std::vector<StepNetwork> steps = pattern_networks(rank_routes(job, p, book, hosts), book);
    if (const std::string note = extension_note(job, p); !note.empty()) fmt::print(out, "  p = {}{}\n", p, note);
    const double call_s = p > 1 ? collective_overhead_s(hosts.at(0), job.platform) : 0.0;
    const ComputeConfig host = host_compute(hosts.at(0), job.hosts[0], job.platform);
    const ChargedFlops charged = charged_kernel_flops(job.spec, host, job.half, job.learning);
    for (std::size_t b : job.bs) {
      check_interrupt();
      const double share = std::ceil(static_cast<double>(b) / p);
      FsdpWork work;
      for (int l = 1; l <= job.spec.timed_layers(); ++l) {
        const double f = share * charged.forward[static_cast<std::size_t>(l - 1)];
        const double g = share * charged.backward[static_cast<std::size_t>(l - 1)];
        work.forward_s.push_back(f / host.host_speed);
        work.forward_slices.push_back(progress_slices(f, slice_flops));
        work.backward_s.push_back(g / host.host_speed);
        work.backward_slices.push_back(progress_slices(g, slice_flops));
        work.recompute_s.push_back(c.recompute ? f / host.host_speed : 0.0);
      }
      work.update_s = charged.kernels.update * static_cast<double>(shard_values) / static_cast<double>(weights) /
                      host.host_speed;
      work.call_s = call_s;
      work.test_s = std::ceil(static_cast<double>(job.checked) / p) * charged.kernels.test() / host.host_speed;
      const FsdpPrediction f = predict_fsdp(work, units, options, steps, sums, p);
      const double updates = static_cast<double>(job.train) / static_cast<double>(b);
      const double time_s = f.iteration_s(updates);
      const double compute_s = f.update_s - f.gather_wait_s - f.reduce_wait_s;
      Json e = Json::object();
      const std::string note = device_note(device_fit(job, p, b, book.layout().node_of), e);
      table += fmt::format("{:>6} {:>8} | {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} | {:>10.4f}{}\n", p, b, time_s,
                           f.gather_wait_s, f.reduce_wait_s, f.comm_alone_s, compute_s, note);
      e["p"] = p, e["b"] = b, e["time_s"] = time_s, e["update_s"] = f.update_s;
      e["gather_wait_s"] = f.gather_wait_s, e["reduce_wait_s"] = f.reduce_wait_s;
      e["exposed_comm_s"] = f.gather_wait_s + f.reduce_wait_s, e["comm_alone_s"] = f.comm_alone_s;
      e["forward_end_s"] = f.forward_end_s, e["backward_end_s"] = f.backward_end_s;
      e["units"] = units.size(), e["gathers"] = f.gathers, e["reductions"] = f.reductions;
      e["progress_points"] = f.progress_points, e["patterns"] = steps.size(), e["collective_call_s"] = call_s;
      extrapolation(job, p, e);
      e["gather_issued_s"] = f.gather_issued_s, e["gather_done_s"] = f.gather_done_s;
      e["reduce_issued_s"] = f.reduce_issued_s, e["reduce_done_s"] = f.reduce_done_s;
      if (job.pipeline) {
        table += fmt::format("      units of p = {}, b = {} (ms from the update's start; the forward pass ends at "
                             "{:.3f}, the backward at {:.3f}; the last gather of each):\n",
                             p, b, 1e3 * f.forward_end_s, 1e3 * f.backward_end_s);
        for (std::size_t u = 0; u < units.size(); ++u)
          table += fmt::format("      {:>5}  layers {:>4}-{:<4}  gather {:>10.3f} to {:>10.3f}  reduction {:>10.3f} to "
                               "{:>10.3f}\n",
                               u, units[u].first, units[u].last, 1e3 * f.gather_issued_s[u], 1e3 * f.gather_done_s[u],
                               1e3 * f.reduce_issued_s[u], 1e3 * f.reduce_done_s[u]);
      }
      grid.push_back(std::move(e));
    }
  }
  fmt::print(out, "{:>6} {:>8} | {:>10} {:>10} {:>10} {:>10} | {:>10}\n", "p", "b", "time s", "gather w s",
             "reduce w s", "comm s", "rest s");
  out << table;
  out << "per iteration: n / b updates and the test pass; gather w, reduce w: waited for the gathers in the passes "
         "and for the reductions after them; comm s: every collective's steps one after another; rest: the update "
         "less the waits\n";
  Json settings = Json::object();
  for (const char* name : fsdp_passed) {
    if (const std::string* text = c.settings.find_text(name)) settings[name] = *text;
    else if (const double* number = c.settings.find(name)) settings[name] = *number;
  }
  settings["recompute"] = c.recompute;
  write_model_record(job, "model --strategy fsdp", settings, std::move(grid), out);
  return exit_ok;
}

}  // namespace

po::options_description model_overlap_options() {
  po::options_description options(
      "on a platform (--overlap, or --strategy overlap|fsdp): a layer net or a problem's, any allreduce, at any scale", 110, 55);
  options.add_options()
      ("overlap", po::bool_switch(), "predict --strategy overlap and block with the same allreduce on --platform")
      ("platform", po::value<std::string>(), "the SimGrid platform file: one rank on each host, in its order")
      ("problem", po::value<std::string>(), "the problem (wulf train's names), for its net's sizes")
      ("hidden", po::value<std::string>(), "as wulf train's (default: the problem's)")
      ("precision", po::value<std::string>(), "float|double, as wulf train's")
      ("bias", po::value<std::string>(), "on|off, as wulf train's")
      ("train-size", po::value<std::string>(), "training patterns n, as wulf train's: n / b updates per iteration")
      ("test-size", po::value<std::string>(), "test patterns, as wulf train's: each iteration's test pass")
      ("bucket-bytes", po::value<std::string>()->default_value("26214400"),
       fmt::format("bucket sizes, a list, each in {} (wulf train --bucket-bytes)", range_text(bucket_range)).c_str())
      ("bucket-allreduce", po::value<std::string>()->default_value("ring"),
       (allreduce_names(AllreduceRows::scheduled) + " (wulf train's)").c_str())
      ("progress-flops", number_in("progress-flops", progress_range)->default_value(0),
       "wulf train's: slices of a layer's backward part, a progress point between them")
      ("strategy", po::value<std::string>(),
       "overlap (the default: overlap and block beside it) or fsdp, with wulf train's options of it: --sharding, "
       "--shard-unit, --shard-algorithm, --forward-prefetch, --backward-prefetch, --gather-limit, "
       "--shard-progress-flops, --shard-stream, --recompute")
      ("learning", po::value<std::string>(), "as wulf train's: the update's flops (adam's 14 a parameter)")
      ("pipeline", po::bool_switch(), "print each cell's buckets or units: when each collective started and ended");
  po::options_description fsdp("--strategy fsdp's options, as wulf train's", 110, 55);
  for (const char* name : fsdp_passed) fsdp.add_options()(name, po::value<std::string>(), "as wulf train's");
  options.add(fsdp);
  return options;
}

void check_overlap_scope(const po::variables_map& vm) {
  if (vm["overlap"].as<bool>() || vm.count("strategy")) return;
  for (const char* name : fsdp_passed)
    if (vm.count(name)) throw InputError("--" + std::string(name) + " is for --strategy fsdp");
  for (const char* name : overlap_only)
    if (vm.count(name) && !vm[name].defaulted()) throw InputError("--" + std::string(name) + " is for --overlap");
}

int overlap_model_command(const po::variables_map& vm, std::ostream& out) {
  const OverlapJob job = read_overlap_job(vm);
  if (job.strategy == "fsdp") return fsdp_model(job, out);
  const std::vector<GradientTensor> tensors = backward_tensors(job.spec);
  const std::size_t weights = job.spec.parameter_count();
  fmt::print(out, "overlap model, platform {}: {}, {} weights ({:.2f} MiB of gradients in {} tensors), {} allreduce\n",
             job.platform, job.net_text, weights, static_cast<double>(weights * job.sent_bytes) / (1 << 20),
             tensors.size(), to_string(job.algorithm));
  Json grid = Json::array();
  std::string table;
  for (int p : job.ps) {
    // The plans of every collective of this p: each bucket size's buckets, block's one
    // allreduce, and the errors' sums (overlap's the default, recursive doubling at 32 bytes,
    // Open MPI 4.1's choice; block's the buckets' algorithm).
    PatternBook book(p, rank_layout(job, p, is_hierarchical(job.algorithm), job.algorithm == NbAlgorithm::rings,
                                    "--bucket-allreduce " + std::string(to_string(job.algorithm))));
    std::vector<std::vector<BucketCut>> cuts;
    std::vector<PlannedComm> overlaps;
    for (std::size_t bucket : job.buckets) {
      PlannedComm& comm = overlaps.emplace_back();
      comm.ranks = p;
      cuts.push_back(cut_buckets(tensors, job.sent_bytes, bucket));
      for (const BucketCut& c : cuts.back())
        comm.buckets.push_back(allreduce_plan(book, job.algorithm, job.wire(c.values), job.element_bytes));
      comm.sums = allreduce_plan(book, NbAlgorithm::rdb, 4, sizeof(double));
    }
    PlannedComm block{.ranks = p,
                      .buckets = {allreduce_plan(book, job.algorithm, job.wire(weights), job.element_bytes)},
                      .sums = allreduce_plan(book, job.algorithm, 4, sizeof(double))};
    // The routes of the pairs the plans send between, and each pattern's step alone.
    Json hosts;
    const std::vector<StepNetwork> steps = pattern_networks(rank_routes(job, p, book, hosts), book);
    for (PlannedComm& c : overlaps) c.patterns = steps;
    block.patterns = steps;
    const double call_s = p > 1 ? collective_overhead_s(hosts.at(0), job.platform) : 0.0;
    const ComputeConfig host = host_compute(hosts.at(0), job.hosts[0], job.platform);
    const StepNetwork& slowest = *std::max_element(steps.begin(), steps.end(), [](const StepNetwork& a, const StepNetwork& b) {
      return a.byte_s < b.byte_s;
    });
    fmt::print(out, "  p = {}: {} patterns of messages, the slowest {:.1f} us + {:.3f} ns per byte ({:.1f} MB/s); collective call {:.1f} us; host {:.3g} Gflop/s{}\n",
               p, steps.size(), slowest.latency_s * 1e6, slowest.byte_s * 1e9, p > 1 ? 1e-6 / slowest.byte_s : 0.0,
               call_s * 1e6, host.host_speed / 1e9, extension_note(job, p));
    for (std::size_t b : job.bs) {
      const OverlapWork work = rank_work(job, host, call_s, p, b);
      const DeviceFit fit = device_fit(job, p, b, book.layout().node_of);
      const double updates = static_cast<double>(job.train) / static_cast<double>(b);
      const OverlapPrediction blocked = predict_blocking(work, block);
      const double block_s = blocked.iteration_s(updates);
      for (std::size_t k = 0; k < job.buckets.size(); ++k) {
        check_interrupt();
        const std::size_t bucket = job.buckets[k];
        const OverlapPrediction o = predict_overlap(work, cuts[k], overlaps[k]);
        const double time_s = o.iteration_s(updates);
        const double hidden = o.comm_alone_s > 0 ? 1 - o.exposed_s / o.comm_alone_s : 0;
        Json e = Json::object();
        const std::string note = device_note(fit, e);
        table += fmt::format("{:>5} {:>7} {:>11} {:>7} | {:>9.4f} {:>9.4f} {:>7.1f}% | {:>9.4f} {:>9.4f} {:>6.1f}%{}\n", p,
                             b, bucket, cuts[k].size(), block_s, time_s, 100 * (1 - time_s / block_s), o.comm_alone_s,
                             o.exposed_s, 100 * hidden, note);
        e["p"] = p, e["b"] = b, e["bucket_bytes"] = bucket, e["buckets"] = cuts[k].size();
        e["time_s"] = time_s, e["block_s"] = block_s, e["saving"] = 1 - time_s / block_s;
        e["backward_end_s"] = o.backward_end_s, e["exposed_comm_s"] = o.exposed_s, e["comm_alone_s"] = o.comm_alone_s;
        e["hidden"] = hidden, e["block_comm_s"] = blocked.exposed_s, e["progress_points"] = o.progress_points;
        e["bucket_exposed_s"] = o.bucket_exposed_s;
        e["bucket_start_s"] = o.bucket_start_s, e["bucket_end_s"] = o.bucket_end_s;
        if (job.pipeline) {
          table += fmt::format("      buckets of p = {}, b = {}, {} B (ms from the update's start; the backward pass "
                               "ends at {:.3f}):\n", p, b, bucket, 1e3 * o.backward_end_s);
          for (std::size_t i = 0; i < cuts[k].size(); ++i)
            table += fmt::format("      {:>5}  {:>11} values  after layer {:>4}  {:>10.3f} to {:>10.3f}  exposed {:.3f}\n",
                                 i, cuts[k][i].values, cuts[k][i].ready_after, 1e3 * o.bucket_start_s[i],
                                 1e3 * o.bucket_end_s[i], 1e3 * o.bucket_exposed_s[i]);
        }
        e["step_latency_s"] = slowest.latency_s, e["step_byte_s"] = slowest.byte_s, e["collective_call_s"] = call_s;
        e["patterns"] = steps.size();
        extrapolation(job, p, e);
        grid.push_back(std::move(e));
      }
    }
  }
  fmt::print(out, "{:>5} {:>7} {:>11} {:>7} | {:>9} {:>9} {:>8} | {:>9} {:>9} {:>7}\n", "p", "b", "bucket B", "buckets",
             "block s", "overlap s", "saving", "comm s", "exposed s", "hidden");
  out << table;
  out << "per iteration: n / b updates and the test pass; comm s: the buckets' allreduces one after another (their "
         "collective calls included), hidden: the part of it behind the backward pass\n";
  Json settings = Json::object();
  settings["bucket_allreduce"] = to_string(job.algorithm);
  settings["progress_flops"] = job.progress_flops;
  write_model_record(job, "model --overlap", settings, std::move(grid), out);
  return exit_ok;
}

}  // namespace wulf
