// The platform model's shared pieces (cli/platform_model.hpp).
#include "cli/platform_model.hpp"

#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "engine/testbed.hpp"
#include "job/device_memory.hpp"
#include "job/train_job.hpp"
#include "train/shard_units.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace wulf {

void resolve_model_net(PlatformJob& job, int np, std::size_t b, const std::vector<std::string>& passed) {
  if (job.hosts.empty()) job.hosts = platform_hosts(job.platform).hosts;
  std::vector<std::string> args{"--problem",
                                job.problem_spec,
                                "--engine",
                                "sim",
                                "--platform",
                                job.platform,
                                "--np",
                                std::to_string(std::min<std::size_t>(static_cast<std::size_t>(np), job.hosts.size())),
                                "--ranks-per-host",
                                "1",
                                "--strategy",
                                job.strategy == "fsdp" ? "fsdp" : "overlap",
                                "--numerics",
                                "off",
                                "--compute",
                                "flops",
                                "--quiet",
                                "--block",
                                std::to_string(b)};
  args.insert(args.end(), passed.begin(), passed.end());
  const TrainJob train = resolve(parse_train(args, train_options()));
  job.config = train.config;
  job.spec = train.spec;
  job.element_bytes = train.double_precision ? sizeof(double) : sizeof(float);
  job.sent_bytes = train.config.value_bytes ? train.config.value_bytes : job.element_bytes;
  job.half = !train.half.empty();
  job.learning = train.config.learning;
  job.train = train.problem.train_total;
  job.checked = train.problem.test_total > 0 ? train.problem.test_total : train.problem.train_total;
  job.problem_name = train.problem.name;
  job.net_text =
      fmt::format("{} {} {}", train.problem.name, job.spec.describe(), train.double_precision ? "double" : "float");
}

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
int extended_servers_of(const PlatformJob& job, int p) {
  if (static_cast<std::size_t>(p) <= job.hosts.size()) return 0;
  const int G = per_server(job.hosts);
  if (G == 0 || job.hosts.size() < 3 * static_cast<std::size_t>(G))
    throw InputError(
        fmt::format("--np {}: {} has {} hosts; for more ranks the model extends a platform of servers "
                    "(hosts with wulf:node, as many on each, in order, at least three servers, as "
                    "platforms/gpu/generate.py writes them), and its hosts are not so",
                    p, job.platform, job.hosts.size()));
  return G;
}

std::vector<PlatformHost> model_hosts(const PlatformJob& job, int p) {
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
RankRoutes rank_routes(const PlatformJob& job, int p, const std::vector<Message>& pairs, Json& hosts) {
  std::string list;
  if (static_cast<std::size_t>(p) <= job.hosts.size()) {
    for (int r = 0; r < p; ++r) list += (r ? "," : "") + job.hosts[static_cast<std::size_t>(r)].name;
    std::vector<std::pair<std::size_t, std::size_t>> read;
    for (const Message& m : pairs) read.emplace_back(m.first, m.second);
    return RankRoutes(read_network(job.platform, list, 1.0, hosts, read));
  }
  const int G = per_server(job.hosts);
  for (int r = 0; r < 3 * G; ++r) list += (r ? "," : "") + job.hosts[static_cast<std::size_t>(r)].name;
  return RankRoutes::extended(read_network(job.platform, list, 1.0, hosts), G, job.platform);
}

// What the model says of the platform at p: read, or extended beyond its hosts.
std::string extension_note(const PlatformJob& job, int p) {
  if (static_cast<std::size_t>(p) <= job.hosts.size()) return "";
  const int G = per_server(job.hosts);
  return fmt::format(
      "; {} servers of {} GPUs extended from the file's {} (its servers alike, each its own links): "
      "extrapolated beyond the {} GPUs a simulation of the file checks",
      (p + G - 1) / G, G, job.hosts.size() / static_cast<std::size_t>(G), job.hosts.size());
}

// platform's first host (--compute flops: its speed, its efficiency by kind of layer, its
// device's measured layer times, its 16-bit rate), as the simulation charges them.
OverlapWork rank_work(const PlatformJob& job, const ComputeConfig& host, double call_s, int p, std::size_t b) {
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

DeviceFit device_fit(const PlatformJob& job, int p, std::size_t b, const std::vector<int>& node_of) {
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
void extrapolation(const PlatformJob& job, int p, Json& e) {
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
NbLayout rank_layout(const PlatformJob& job, int p, bool nodes, bool rings, const std::string& what) {
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

FsdpWork fsdp_work(const PlatformJob& job, const ComputeConfig& host, double call_s, int p, std::size_t b,
                   std::size_t shard_values) {
  const TrainConfig& c = job.config;
  const ChargedFlops charged = charged_kernel_flops(job.spec, host, job.half, job.learning);
  const double slice_flops = setting(c, "shard-progress-flops");
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
  work.update_s = charged.kernels.update * static_cast<double>(shard_values) /
                  static_cast<double>(job.spec.parameter_count()) / host.host_speed;
  work.call_s = call_s;
  work.test_s = std::ceil(static_cast<double>(job.checked) / p) * charged.kernels.test() / host.host_speed;
  return work;
}

FsdpOptions fsdp_options(const TrainConfig& c) {
  return {.sharding = *sharding_named(setting_text(c, "sharding")),
          .forward_prefetch = setting_text(c, "forward-prefetch") == "on",
          .backward_prefetch = setting_text(c, "backward-prefetch") == "on",
          .gather_limit = setting_count(c, "gather-limit"),
          .one_stream = setting_text(c, "shard-stream") == "one"};
}

}  // namespace wulf
