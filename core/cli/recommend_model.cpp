// `wulf recommend --screen model` (cli/recommend_search.hpp): every candidate's update by the
// platform model (cli/platform_model.hpp, what `wulf model --overlap` and `--strategy fsdp`
// print), p by p; their ranking; and the tables and record of the search with the best ones
// simulated beside them.
#include "cli/platform_model.hpp"
#include "cli/recommend_search.hpp"

#include "engine/testbed.hpp"
#include "train/buckets.hpp"
#include "train/shard_units.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <ostream>

namespace wulf {
namespace {

// The strategy's own default of a setting where the candidate leaves it unsearched.
std::string or_default(const std::string& value, const TrainConfig& config, std::string_view option) {
  return value.empty() ? setting_text(config, option) : value;
}

// The net as the model reads it for one strategy (overlap or fsdp), resolved by wulf train
// for a run of as many ranks as the file holds (at most the largest p), blocks of that many.
PlatformJob model_job(const Request& r, const std::string& strategy, int most) {
  PlatformJob job;
  job.strategy = strategy;
  job.platform = r.platform;
  job.problem_spec = r.problem_spec;
  job.hosts = platform_hosts(r.platform).hosts;
  const int np = std::min(most, static_cast<int>(job.hosts.size()));
  std::vector<std::string> passed = r.given;
  passed.insert(passed.end(), {"--learning", "block"});
  resolve_model_net(job, np, static_cast<std::size_t>(np), passed);
  if (strategy == "overlap") job.progress_flops = setting(job.config, "progress-flops");
  return job;
}

// One candidate's collectives at its p, made once for all the candidates that share them
// (every b): overlap's buckets' plans and their cuts, or fsdp's units, its options and the
// settings its work is charged by.
struct OverlapComm {
  std::vector<BucketCut> cuts;
  PlannedComm comm;
  bool rings = false;  // laid out on the book with the rings
};
struct FsdpComm {
  std::vector<FsdpUnit> units;
  std::size_t shard_values = 0;
  FsdpOptions options;
  CommPlan sums;
  bool rings = false;
};

// The books of one p: the ranks' nodes laid out (hierarchical allreduces, hybrid sharding) and
// with the rings too (the rings allreduce, fsdp's rings), each with why it cannot be ("": it can).
struct Books {
  std::unique_ptr<PatternBook> plain, rings;
  std::string nodes_fault, rings_fault;
};

Books open_books(const PlatformJob& job, int p) {
  Books books;
  NbLayout nodes;
  try {
    nodes = rank_layout(job, p, true, false, "the ranks' nodes");
  } catch (const InputError& e) {
    books.nodes_fault = e.what();
  }
  NbLayout rings;
  try {
    rings = rank_layout(job, p, books.nodes_fault.empty(), true, "the rings");
  } catch (const InputError& e) {
    books.rings_fault = e.what();
  }
  books.plain = std::make_unique<PatternBook>(p, std::move(nodes));
  books.rings = std::make_unique<PatternBook>(p, std::move(rings));
  return books;
}

// Every ordered pair of ranks a message of either book joins, each once.
std::vector<Message> pairs_of(const Books& books) {
  std::vector<Message> pairs = books.plain->pairs();
  const std::vector<Message> more = books.rings->pairs();
  pairs.insert(pairs.end(), more.begin(), more.end());
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// Models the candidates at one p (indices `at`), filling their model fields or skipping them
// with the model's reason. routes_beyond: the extension's routes, read once for every p beyond
// the file (with its hosts' description).
void model_at(const Request& r, const PlatformJob* overlap, const PlatformJob* fsdp, int p,
              const std::vector<std::size_t>& at, std::vector<Candidate>& candidates,
              std::optional<std::pair<RankRoutes, Json>>& routes_beyond) {
  const PlatformJob& any = overlap ? *overlap : *fsdp;
  Books books = open_books(any, p);
  std::map<std::string, OverlapComm> overlaps;
  std::map<std::string, FsdpComm> shards;
  const std::vector<GradientTensor> tensors = overlap ? backward_tensors(overlap->spec) : std::vector<GradientTensor>{};
  // Plans, once per collective setting; a candidate its layout refuses is skipped.
  std::vector<std::string> key_of(candidates.size());
  for (const std::size_t i : at) {
    Candidate& c = candidates[i];
    if (c.sequential()) continue;
    const std::string name(to_string(c.strategy));
    if (name == "overlap") {
      const std::string algorithm = or_default(c.allreduce, overlap->config, "bucket-allreduce");
      const NbAlgorithm a = parse_nb_algorithm(algorithm, "--bucket-allreduce");
      const bool rings = a == NbAlgorithm::rings;
      const std::string fault = rings ? books.rings_fault : is_hierarchical(a) ? books.nodes_fault : "";
      if (!fault.empty() && c.skipped.empty()) {
        c.skipped = "--bucket-allreduce " + algorithm + ": " + fault;
        continue;
      }
      const std::size_t bytes =
          c.bucket_bytes ? *c.bucket_bytes : static_cast<std::size_t>(setting(overlap->config, "bucket-bytes"));
      key_of[i] = algorithm + " " + std::to_string(bytes);
      if (overlaps.count(key_of[i])) continue;
      OverlapComm& o = overlaps[key_of[i]];
      PatternBook& book = rings ? *books.rings : *books.plain;
      o.rings = rings;
      o.cuts = cut_buckets(tensors, overlap->sent_bytes, bytes);
      o.comm.ranks = p;
      for (const BucketCut& cut : o.cuts)
        o.comm.buckets.push_back(allreduce_plan(book, a, overlap->wire(cut.values), overlap->element_bytes));
      o.comm.sums = allreduce_plan(book, NbAlgorithm::rdb, 4, sizeof(double));
    } else {
      const std::string sharding = or_default(c.sharding, fsdp->config, "sharding");
      const std::string algorithm = or_default(c.shard_algorithm, fsdp->config, "shard-algorithm");
      const bool rings = algorithm == "rings";
      const std::string fault = rings ? books.rings_fault : sharding == "hybrid" ? books.nodes_fault : "";
      if (!fault.empty() && c.skipped.empty()) {
        c.skipped = "--sharding " + sharding + " --shard-algorithm " + algorithm + ": " + fault;
        continue;
      }
      key_of[i] = sharding + " " + algorithm;
      if (shards.count(key_of[i])) continue;
      FsdpComm& f = shards[key_of[i]];
      TrainConfig config = fsdp->config;
      config.settings.set_text("sharding", sharding);
      config.settings.set_text("shard-algorithm", algorithm);
      PatternBook& book = rings ? *books.rings : *books.plain;
      f.rings = rings;
      f.options = fsdp_options(config);
      for (const ShardUnitLayers& u : shard_units(fsdp->spec, static_cast<int>(setting_count(config, "shard-unit")))) {
        ShardComm plan = shard_comm_plan(book, f.options.sharding, fsdp->wire(u.parameters), fsdp->element_bytes);
        f.shard_values += plan.shard;
        f.units.push_back({u.first, u.last, std::move(plan.gather), std::move(plan.reduce)});
      }
      f.sums = allreduce_plan(book, NbAlgorithm::rdb, 4, sizeof(double));
    }
  }
  // The routes of the pairs the plans send between (beyond the file: the extension's, the same
  // at every p), and each pattern's step alone.
  Json hosts_read;
  std::optional<RankRoutes> routes_here;
  const RankRoutes* routes = nullptr;
  const Json* hosts = &hosts_read;
  if (static_cast<std::size_t>(p) > any.hosts.size()) {
    if (!routes_beyond) {
      Json described;
      RankRoutes extended = rank_routes(any, p, {}, described);
      routes_beyond.emplace(std::move(extended), std::move(described));
    }
    routes = &routes_beyond->first, hosts = &routes_beyond->second;
  } else {
    routes_here.emplace(rank_routes(any, p, pairs_of(books), hosts_read));
    routes = &*routes_here;
  }
  const std::vector<StepNetwork> plain_steps = pattern_networks(*routes, *books.plain);
  const std::vector<StepNetwork> ring_steps =
      books.rings->size() ? pattern_networks(*routes, *books.rings) : std::vector<StepNetwork>{};
  for (auto& [key, o] : overlaps) o.comm.patterns = o.rings ? ring_steps : plain_steps;
  const double call_s = p > 1 ? collective_overhead_s(hosts->at(0), r.platform) : 0.0;
  const ComputeConfig host = host_compute(hosts->at(0), any.hosts[0], r.platform);
  const bool extrapolated = static_cast<std::size_t>(p) > any.hosts.size();
  // Each candidate's update.
  for (const std::size_t i : at) {
    Candidate& c = candidates[i];
    if (!c.skipped.empty()) continue;
    check_interrupt();
    if (c.sequential()) {
      const PlatformJob& job = overlap ? *overlap : *fsdp;
      const OverlapPrediction one = predict_blocking(
          rank_work(job, host, 0, 1, c.b), PlannedComm{.ranks = 1, .buckets = {}, .sums = {}, .patterns = {}});
      c.model_update_s = one.update_s, c.model_exposed_s = 0;
    } else if (c.strategy->name == "overlap") {
      const OverlapComm& o = overlaps.at(key_of[i]);
      const OverlapPrediction pred = predict_overlap(rank_work(*overlap, host, call_s, p, c.b), o.cuts, o.comm);
      c.model_update_s = pred.update_s, c.model_exposed_s = pred.exposed_s;
    } else {
      const FsdpComm& f = shards.at(key_of[i]);
      const FsdpPrediction pred = predict_fsdp(fsdp_work(*fsdp, host, call_s, p, c.b, f.shard_values), f.units,
                                               f.options, f.rings ? ring_steps : plain_steps, f.sums, p);
      c.model_update_s = pred.update_s, c.model_exposed_s = pred.gather_wait_s + pred.reduce_wait_s;
    }
    c.updates = updates_per_epoch(r.problem.train_total, c.b);
    c.model_epoch_s = static_cast<double>(c.updates) * c.model_update_s;
    c.model_meets = c.model_epoch_s <= r.target;
    c.extrapolated = extrapolated;
  }
}

}  // namespace

ModelScreening screen_by_model(const Request& r, std::vector<Candidate>& candidates) {
  ModelScreening s;
  s.file_gpus = static_cast<std::size_t>(r.cores);
  std::map<int, std::vector<std::size_t>> by_p;
  bool overlaps = false, shards = false;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.skipped.empty()) continue;
    by_p[c.p].push_back(i);
    overlaps = overlaps || (!c.sequential() && c.strategy->name == "overlap");
    shards = shards || (!c.sequential() && c.strategy->name == "fsdp");
  }
  if (by_p.empty()) return s;
  const int most = by_p.rbegin()->first;
  // The job of each strategy searched (overlap's also times the sequential candidates).
  std::optional<PlatformJob> overlap, fsdp;
  if (overlaps || !shards) overlap = model_job(r, "overlap", most);
  if (shards) fsdp = model_job(r, "fsdp", most);
  extended_servers_of(overlap ? *overlap : *fsdp, most);  // refused where the file does not extend
  std::optional<std::pair<RankRoutes, Json>> routes_beyond;
  for (const auto& [p, at] : by_p) {
    model_at(r, overlap ? &*overlap : nullptr, fsdp ? &*fsdp : nullptr, p, at, candidates, routes_beyond);
    for (const std::size_t i : at) s.modelled += candidates[i].skipped.empty();
  }
  s.gpu_counts = by_p.size();
  return s;
}

std::vector<std::size_t> rank_by_model(const std::vector<Candidate>& candidates) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].skipped.empty() && std::isfinite(candidates[i].model_epoch_s)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Candidate &ca = candidates[a], &cb = candidates[b];
    if (ca.model_meets != cb.model_meets) return ca.model_meets;
    if (ca.model_meets && ca.p != cb.p) return ca.p < cb.p;
    return ca.model_epoch_s < cb.model_epoch_s;
  });
  return order;
}

std::vector<std::size_t> pick_confirmed(const Request& r, const std::vector<Candidate>& candidates,
                                        const std::vector<std::size_t>& ranking,
                                        std::vector<std::string>& passed_over) {
  std::vector<std::size_t> picked;
  for (const std::size_t i : ranking) {
    if (picked.size() >= static_cast<std::size_t>(r.confirm)) break;
    const Candidate& c = candidates[i];
    if (c.extrapolated) {
      passed_over.push_back(fmt::format("{} on {} GPUs: beyond the {} of {}, no simulation of the file runs it",
                                        c.label(), c.p, r.cores, r.platform));
      continue;
    }
    if (2 * c.b > r.problem.train_total) {
      passed_over.push_back(
          fmt::format("{} on {} GPUs, b = {}: 2b is more than the {} training samples, and an "
                      "update is simulated as the second of two",
                      c.label(), c.p, c.b, r.problem.train_total));
      continue;
    }
    picked.push_back(i);
  }
  return picked;
}

namespace {

std::string model_row(const Candidate& c, std::size_t rank) {
  return fmt::format("{:>5} {:>6} {:>6} {:>9}  {:<44} {:>10.5f} {:>10.5f} {:>10.1f} {:>4}{}\n", rank, c.p,
                     c.b / static_cast<std::size_t>(c.p), c.b, c.label(), c.model_update_s, c.model_exposed_s,
                     c.model_epoch_s, c.model_meets ? "yes" : "no", c.extrapolated ? "  (extrapolated)" : "");
}

const char* kModelHeader =
    "    #      p  batch         b  candidate                                      update s  "
    "exposed s    epoch s  met\n";

}  // namespace

void print_model_ranking(const Request& r, const std::vector<Candidate>& candidates,
                         const std::vector<std::size_t>& ranking, std::ostream& out) {
  fmt::print(out,
             "\nranked by the model ({} candidates; the epoch's target {} s: those within it on the fewest GPUs "
             "first, then the shorter epoch; the others by their epoch), the best {}:\n",
             ranking.size(), shortest(r.target),
             std::min<std::size_t>(ranking.size(), static_cast<std::size_t>(r.show)));
  out << kModelHeader;
  for (std::size_t k = 0; k < ranking.size() && k < static_cast<std::size_t>(r.show); ++k)
    out << model_row(candidates[ranking[k]], k + 1);
  out << "update s: one update of b samples over the GPUs, its passes to its weights stepped; exposed s: the "
         "communication it waits for after the compute; epoch s: ceil(n / b) updates\n";
  // The skipped, by their reason with its numbers left out, with one example each.
  std::map<std::string, std::pair<std::size_t, std::string>> skipped;
  for (const Candidate& c : candidates)
    if (!c.skipped.empty()) {
      std::string reason;
      for (const char ch : c.skipped)
        if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != '.') reason += ch;
      auto& [count, example] = skipped[reason];
      if (count++ == 0) example = fmt::format("{} on {} GPUs, b = {}: {}", c.label(), c.p, c.b, c.skipped);
    }
  for (const auto& [reason, seen] : skipped) fmt::print(out, "skipped: {} like {}\n", seen.first, seen.second);
}

void print_model_confirmed(const Request& r, const std::vector<Candidate>& candidates,
                           const std::vector<std::size_t>& ranking, const std::vector<std::size_t>& confirmed,
                           const std::vector<std::string>& passed_over, std::ostream& out) {
  if (!passed_over.empty()) {
    out << "not simulated, though ranked above the last one confirmed:\n";
    for (const std::string& why : passed_over) out << "  " << why << "\n";
  }
  if (confirmed.empty()) return;
  // The confirmed ones by their simulated epoch, beside the model's order.
  std::vector<std::size_t> by_sim;
  for (const std::size_t i : confirmed)
    if (std::isfinite(candidates[i].epoch_s)) by_sim.push_back(i);
  std::stable_sort(by_sim.begin(), by_sim.end(), [&](std::size_t a, std::size_t b) {
    const Candidate &ca = candidates[a], &cb = candidates[b];
    const bool ma = ca.epoch_s <= r.target, mb = cb.epoch_s <= r.target;
    if (ma != mb) return ma;
    if (ma && ca.p != cb.p) return ca.p < cb.p;
    return ca.epoch_s < cb.epoch_s;
  });
  fmt::print(out, "\nthe model's best {} simulated (without arithmetic, b and 2b samples: the second update):\n",
             confirmed.size());
  out << " model   sim      p  candidate                                     model update s    sim update s   "
         "model epoch s     sim epoch s  model - sim\n";
  for (const std::size_t i : confirmed) {
    const Candidate& c = candidates[i];
    const auto model_rank = std::find(ranking.begin(), ranking.end(), i) - ranking.begin() + 1;
    const auto at = std::find(by_sim.begin(), by_sim.end(), i);
    const std::string sim_rank = at == by_sim.end() ? "-" : std::to_string(at - by_sim.begin() + 1);
    if (!c.skipped.empty()) {
      fmt::print(out, "{:>6} {:>5} {:>6}  {:<44} {:>14.6f}  {}\n", model_rank, sim_rank, c.p, c.label(),
                 c.model_update_s, c.skipped);
      continue;
    }
    fmt::print(out, "{:>6} {:>5} {:>6}  {:<44} {:>14.6f} {:>15.6f} {:>15.2f} {:>15.2f} {:>+11.2f}%\n", model_rank,
               sim_rank, c.p, c.label(), c.model_update_s, c.update_s, c.model_epoch_s, c.epoch_s,
               std::abs(c.model_update_s / c.update_s - 1) < 5e-5 ? 0.0 : 100 * (c.model_update_s / c.update_s - 1));
  }
}

Json model_candidate_json(const Candidate& c) {
  Json j = Json::object();
  j["strategy"] = c.sequential() ? "sequential" : std::string(to_string(c.strategy));
  j["label"] = c.label();
  j["p"] = c.p;
  j["b"] = c.b;
  j["batch"] = c.b / static_cast<std::size_t>(c.p);
  if (!c.allreduce.empty()) j["allreduce"] = c.allreduce;
  if (c.bucket_bytes) j["bucket_bytes"] = *c.bucket_bytes, j["buckets"] = c.buckets;
  if (!c.sharding.empty()) j["sharding"] = c.sharding;
  if (!c.shard_algorithm.empty()) j["shard_algorithm"] = c.shard_algorithm;
  j["skipped"] = c.skipped.empty() ? Json(nullptr) : Json(c.skipped);
  if (c.runs) {  // simulated
    j["simulation"] = {{"one_update_run_s", c.runs->one_s},
                       {"two_update_run_s", c.runs->two_s},
                       {"check_pass_growth_s", c.runs->check_s},
                       {"update_s", c.update_s},
                       {"epoch_s", c.epoch_s},
                       {"meets_target", c.meets}};
  }
  if (!std::isfinite(c.model_update_s)) return j;
  Json m = Json::object();
  m["update_s"] = c.model_update_s;
  m["exposed_comm_s"] = c.model_exposed_s;
  m["epoch_s"] = c.model_epoch_s;
  m["meets_target"] = c.model_meets;
  m["extrapolated"] = c.extrapolated;
  j["model"] = std::move(m);
  return j;
}

}  // namespace wulf
