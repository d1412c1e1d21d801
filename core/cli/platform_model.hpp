// The platform model's pieces that `wulf model --overlap | --strategy fsdp` (cli/model_overlap.cpp)
// and `wulf recommend --screen model` (cli/recommend_model.cpp) share: the net as wulf train
// resolves it, the ranks placed on the platform's hosts (extended beyond them for servers
// alike), the routes between them, the host's compute, each cell's work and its device memory.
#pragma once

#include "comm/nb_allreduce.hpp"
#include "engine/launch.hpp"
#include "predict/comm_plan.hpp"
#include "predict/fsdp_model.hpp"
#include "predict/overlap_model.hpp"
#include "predict/rank_routes.hpp"
#include "train/run.hpp"
#include "train/trainer.hpp"
#include "util/json.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace wulf {

struct PlatformJob {
  std::string strategy = "overlap";  // overlap (and block beside it) or fsdp
  std::string platform, problem_spec;
  std::vector<int> ps;
  std::vector<std::size_t> bs, buckets;
  NbAlgorithm algorithm = NbAlgorithm::ring;
  double progress_flops = 0;
  NetSpec spec;
  std::string net_text;                // "digits 784-256-10 float"
  std::string problem_name;            // the problem as wulf train's record names it
  std::size_t train = 0, checked = 0;  // checked: patterns of the iteration's test pass
  std::size_t element_bytes = 4;       // the schedules' values: float or double (bf16 travels in floats)
  std::size_t sent_bytes = 4;          // a value's bytes in a bucket (2 under bf16)
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
// The net, its precision, its data's sizes and the strategy's settings (job.strategy: overlap
// or fsdp) as wulf train resolves them for a time-only simulation of np ranks (at most the
// file's hosts) in blocks of b, on job.platform with job.problem_spec; passed: wulf train's
// options given as they are (--precision bf16, --sharding grad-op, ...). job.hosts are read here where
// they were not.
void resolve_model_net(PlatformJob& job, int np, std::size_t b, const std::vector<std::string>& passed);

// The GPUs a server of the platform (its hosts in order, each with its wulf:node, as many on
// every node, the nodes 0, 1, ... in order), or 0 where its hosts are not so.
int per_server(const std::vector<PlatformHost>& hosts);
// The GPUs a server where p ranks need the platform extended (0: they do not); InputError
// where it cannot be.
int extended_servers_of(const PlatformJob& job, int p);
// Rank r's host: the platform's first p hosts, or for more ranks than it has, its servers
// repeated (server s of the model is a copy of the file's server 0, node s).
std::vector<PlatformHost> model_hosts(const PlatformJob& job, int p);
// Where p ranks are, as a collective needs it: each rank's node (nodes) and the rings (rings).
// what: the option that needs it, for a refusal (InputError).
NbLayout rank_layout(const PlatformJob& job, int p, bool nodes, bool rings, const std::string& what);
// The routes between the p ranks for the messages between `pairs` of ranks: read from the
// platform for its first p hosts, or extended from its first three servers (the same for any p,
// pairs unused). hosts: the network's description of its hosts (rank 0's first).
RankRoutes rank_routes(const PlatformJob& job, int p, const std::vector<Message>& pairs, Json& hosts);
// What the model says of the platform at p: "" where the file holds p ranks, else the extension.
std::string extension_note(const PlatformJob& job, int p);

// The compute of a host as wulf-platform network describes it.
ComputeConfig host_compute(const Json& host, const PlatformHost& placed, const std::string& platform);
// What one rank of p computes in one update of b patterns under overlap (and block): the flops
// wulf charges on the platform's first host, as the simulation charges them.
OverlapWork rank_work(const PlatformJob& job, const ComputeConfig& host, double call_s, int p, std::size_t b);
// The same under fsdp with the job's settings (job.config): each layer's forward and backward
// part (and recomputation), sliced at --shard-progress-flops, the update of a shard of
// shard_values values.
FsdpWork fsdp_work(const PlatformJob& job, const ComputeConfig& host, double call_s, int p, std::size_t b,
                   std::size_t shard_values);
// fsdp's loop as job.config's settings make it.
FsdpOptions fsdp_options(const TrainConfig& config);

// What a rank's device holds for a cell of p ranks and blocks of b (job/device_memory, with
// job.config's strategy settings), and whether the platform's device (its first host's
// wulf:memory) holds it: the simulation refuses a run that does not fit.
struct DeviceFit {
  double bytes = 0, memory = 0;
  bool fits = true;
};
DeviceFit device_fit(const PlatformJob& job, int p, std::size_t b, const std::vector<int>& node_of);
// A cell beyond the platform file's hosts: its record says it is extrapolated, and from which
// size (the file's GPUs, the most a simulation of it runs).
void extrapolation(const PlatformJob& job, int p, Json& e);
// A cell's record fields of the device, and its note in the table ("" where it fits).
std::string device_note(const DeviceFit& fit, Json& e);

}  // namespace wulf
