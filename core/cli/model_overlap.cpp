// `wulf model --overlap`: the time per iteration of --strategy overlap and of block with the
// same allreduce, predicted (predict/overlap_model.hpp) for lists of p, b and bucket sizes,
// with the constants of the platform: each host's speed over the net's flops (as --compute
// flops charges them), the route and links between the ranks' hosts, and the platform's
// collective overhead. One rank per host, in the platform's order.
#include "cli/cli.hpp"
#include "cli/model_overlap.hpp"
#include "cli/platform_model.hpp"
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

PlatformJob read_overlap_job(const po::variables_map& vm) {
  for (const char* required : {"platform", "problem"})
    if (!vm.count(required)) throw InputError("wulf model --overlap: --" + std::string(required) + " is required");
  if (vm.count("profile"))
    throw InputError("wulf model --overlap: the constants come from --platform (its hosts' speed and links), "
                     "not a --profile");
  if (vm.count("average-interval")) throw InputError("--average-interval is seed 000's model's, not --overlap's");
  PlatformJob job;
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
  std::vector<std::string> args;
  for (const char* name : passed)
    if (vm.count(name)) args.insert(args.end(), {std::string("--") + name, vm[name].as<std::string>()});
  for (const char* name : fsdp_passed)
    if (vm.count(name)) args.insert(args.end(), {std::string("--") + name, vm[name].as<std::string>()});
  resolve_model_net(job, most, *std::max_element(job.bs.begin(), job.bs.end()), args);
  if (!job.out.empty()) check_output(job.out, "--out", {{"--platform", job.platform}});
  return job;
}

// What one rank of p computes in one update of b patterns: the flops wulf charges on the
// A model's record: the job's platform and net, the command's own settings, and its grid.
void write_model_record(const PlatformJob& job, const std::string& command, const Json& settings, Json grid,
                        std::ostream& out) {
  if (job.out.empty()) return;
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = settings;
  record["config"]["command"] = command;
  record["config"]["platform"] = job.platform;
  record["config"]["net"] = job.net_text;
  record["config"]["problem"] = job.problem_name;
  record["config"]["strategy"] = job.strategy;
  record["config"]["versions"] = versions_json();
  record["grid"] = std::move(grid);
  write_file_atomically(job.out, record_text(record) + "\n");
  out << "record: " << job.out << "\n";
}

// --strategy fsdp: the time per iteration of the units' gathers and reductions behind the
// passes (predict/fsdp_model.hpp), for each p and b.
int fsdp_model(const PlatformJob& job, std::ostream& out) {
  const TrainConfig& c = job.config;
  const Sharding sharding = *sharding_named(setting_text(c, "sharding"));
  const bool rings = setting_text(c, "shard-algorithm") == "rings";
  const FsdpOptions options = fsdp_options(c);
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
    const std::vector<StepNetwork> steps = pattern_networks(rank_routes(job, p, book.pairs(), hosts), book);
    if (const std::string note = extension_note(job, p); !note.empty()) fmt::print(out, "  p = {}{}\n", p, note);
    const double call_s = p > 1 ? collective_overhead_s(hosts.at(0), job.platform) : 0.0;
    const ComputeConfig host = host_compute(hosts.at(0), job.hosts[0], job.platform);
    const ChargedFlops charged = charged_kernel_flops(job.spec, host, job.half, job.learning);
    for (std::size_t b : job.bs) {
      check_interrupt();
      const FsdpWork work = fsdp_work(job, host, call_s, p, b, shard_values);
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
  const PlatformJob job = read_overlap_job(vm);
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
                      .sums = allreduce_plan(book, job.algorithm, 4, sizeof(double)),
                      .patterns = {}};
    // The routes of the pairs the plans send between, and each pattern's step alone.
    Json hosts;
    const std::vector<StepNetwork> steps = pattern_networks(rank_routes(job, p, book.pairs(), hosts), book);
    for (PlannedComm& c : overlaps) c.patterns = steps;
    block.patterns = steps;
    const double call_s = p > 1 ? collective_overhead_s(hosts.at(0), job.platform) : 0.0;
    const ComputeConfig host = host_compute(hosts.at(0), job.hosts[0], job.platform);
    // One rank sends nothing: no pattern, no slowest step.
    const StepNetwork slowest =
        steps.empty() ? StepNetwork{}
                      : *std::max_element(steps.begin(), steps.end(),
                                          [](const StepNetwork& a, const StepNetwork& b) { return a.byte_s < b.byte_s; });
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
        e["time_s"] = time_s, e["update_s"] = o.update_s, e["block_s"] = block_s, e["saving"] = 1 - time_s / block_s;
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
