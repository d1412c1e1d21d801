#include "predict/recommend.hpp"

#include "job/device_memory.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

namespace wulf {

namespace {

// The check error of one history entry (null where it was not measured).
double check_error(const Json& entry, bool has_test) {
  const auto e = entry.find(has_test ? "test_error" : "train_error");
  return e != entry.end() && e->is_number() ? e->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// Faster first; at equal times fewer processors, then the earlier candidate.
bool sooner(const Candidate& a, double ta, const Candidate& b, double tb) {
  if (ta != tb) return ta < tb;
  return a.p < b.p;
}

long fastest(const std::vector<Candidate>& candidates, bool sequential_only) {
  long best = -1;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.confirmed || !c.confirmed->reached || (sequential_only && !c.sequential())) continue;
    if (best < 0 || sooner(c, c.confirmed->time_s, candidates[static_cast<std::size_t>(best)],
                           candidates[static_cast<std::size_t>(best)].confirmed->time_s))
      best = static_cast<long>(i);
  }
  return best;
}

}  // namespace

RunOutcome outcome_of_record(const Json& record, const std::string& source) {
  return read_fields(source, [&] {
    RunOutcome o;
    const Json& fin = record.at("final");
    o.status = fin.at("status").get<std::string>();
    o.reached = o.status == "target_reached";
    if (const auto it = fin.find("iterations"); it != fin.end() && it->is_number()) o.iterations = it->get<int>();
    if (const auto t = fin.find("time_s"); t != fin.end() && t->is_number()) o.time_s = t->get<double>();
    const bool has_test = record.at("config").at("test_patterns").get<double>() > 0;
    for (const Json& entry : record.at("history")) {
      const int iteration = entry.at("iteration").get<int>();
      const double e = check_error(entry, has_test);
      if (iteration == 0 || !std::isfinite(e)) continue;
      o.final_error = e;
      if (!(e >= o.best_error)) o.best_error = e, o.best_iteration = iteration;
    }
    return o;
  });
}

std::string_view to_string(ConvergenceBasis b) {
  switch (b) {
    case ConvergenceBasis::exact:
      return "exact: the sequential run";
    case ConvergenceBasis::same:
      return "the sequential run's updates (blocks drawn per rank)";
    case ConvergenceBasis::assumed:
      return "assumed from the sequential run (this strategy's arithmetic changes with p)";
  }
  return "?";
}

std::string Candidate::label() const {
  if (sequential()) return "sequential";
  std::string s(to_string(strategy));
  if (!strategy->search->interval_option.empty())
    s += " " + std::string(strategy->search->interval_label) + "=" + (interval ? std::to_string(interval) : std::string("b"));
  if (bucket_bytes) s += " " + (*bucket_bytes == 0 ? std::string("tensor") : human_bytes(static_cast<double>(*bucket_bytes)));
  if (!allreduce.empty()) s += " " + allreduce;
  if (!sharding.empty()) s += " " + sharding;
  if (!shard_algorithm.empty()) s += " " + shard_algorithm;
  return s;
}

std::vector<Strategy> searched_strategies() {
  std::vector<Strategy> out;
  for (const Strategy s : registered_strategies())
    if (s->search) out.push_back(s);
  return out;
}

std::string searched_strategy_names(std::string_view last) {
  std::vector<std::string> names;
  for (const Strategy s : searched_strategies()) names.emplace_back(to_string(s));
  return listed(names, last);
}

std::vector<LearningPoint> learning_points(const SearchSpace& space) {
  std::vector<LearningPoint> points;
  for (std::size_t b : space.blocks)
    for (double eta : space.etas)
      for (double alpha : space.alphas) {
        const bool seen = std::any_of(points.begin(), points.end(), [&](const LearningPoint& q) {
          return q.b == b && q.eta == eta && q.alpha == alpha;
        });
        if (!seen) points.push_back({b, eta, alpha});
      }
  return points;
}

std::vector<Candidate> make_candidates(const SearchSpace& space, const std::vector<LearningPoint>& points) {
  std::vector<Candidate> out;
  std::vector<int> nps = space.nps;
  std::sort(nps.begin(), nps.end());
  nps.erase(std::unique(nps.begin(), nps.end()), nps.end());
  std::vector<Strategy> strategies;
  for (Strategy s : space.strategies)
    if (std::find(strategies.begin(), strategies.end(), s) == strategies.end()) strategies.push_back(s);
  std::vector<std::size_t> intervals = space.intervals.empty() ? std::vector<std::size_t>{0} : space.intervals;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const LearningPoint& q = points[k];
    Candidate base;
    base.b = q.b, base.eta = q.eta, base.alpha = q.alpha, base.point = k;
    for (int p : nps) {
      const auto per_rank = [&](std::size_t batch) { return batch * static_cast<std::size_t>(p) == q.b; };
      if (!space.batches.empty() && std::none_of(space.batches.begin(), space.batches.end(), per_rank)) continue;
      // A rank's batch times p can be more than the training set.
      const std::string above = q.b > space.train_patterns
                                    ? "b = " + std::to_string(q.b) + " is more than the " +
                                          std::to_string(space.train_patterns) + " training samples"
                                    : "";
      if (p == 1) {
        out.push_back(base);
        out.back().skipped = above;
        continue;
      }
      for (Strategy s : strategies) {
        Candidate c = base;
        c.p = p, c.strategy = s;
        const SearchTraits& t = *s->search;
        c.basis = t.same_updates ? ConvergenceBasis::same : ConvergenceBasis::assumed;
        const std::size_t share = space.train_patterns / static_cast<std::size_t>(p);
        c.skipped = above;
        if (t.refuse && c.skipped.empty()) c.skipped = t.refuse(q.b, p, share);
        const std::vector<std::string> algorithms =
            t.allreduce_option.empty() || space.allreduces.empty() ? std::vector<std::string>{""} : space.allreduces;
        const std::size_t sizes = t.bucket_option.empty() ? 0 : space.bucket_bytes.size();
        const auto listed_or_default = [](std::string_view option, const std::vector<std::string>& list) {
          return option.empty() || list.empty() ? std::vector<std::string>{""} : list;
        };
        const std::vector<std::string> shardings = listed_or_default(t.sharding_option, space.shardings);
        const std::vector<std::string> shard_algorithms =
            listed_or_default(t.shard_algorithm_option, space.shard_algorithms);
        for (const std::string& algorithm : algorithms)
          for (std::size_t z = 0; z < std::max<std::size_t>(sizes, 1); ++z)
            for (const std::string& sharding : shardings)
              for (const std::string& shard_algorithm : shard_algorithms) {
                Candidate d = c;
                d.allreduce = algorithm;
                d.sharding = sharding, d.shard_algorithm = shard_algorithm;
                if (t.refuse_sharding && !sharding.empty() && !shard_algorithm.empty() && d.skipped.empty())
                  d.skipped = t.refuse_sharding(sharding, shard_algorithm);
                if (sizes) {
                  d.bucket_bytes = space.bucket_bytes[z], d.buckets = space.bucket_counts[z];
                  if (const std::size_t first = space.bucket_same_as[z]; first != z && d.skipped.empty())
                    d.skipped = "--bucket-bytes " + std::to_string(space.bucket_bytes[z]) + " cuts the same " +
                                std::to_string(d.buckets) + " bucket(s) as " +
                                std::to_string(space.bucket_bytes[first]);
                }
                if (t.interval_option.empty()) {
                  out.push_back(d);
                  continue;
                }
                for (std::size_t a : intervals) {
                  d.interval = a;
                  out.push_back(d);
                }
              }
      }
    }
  }
  return out;
}

TimingPlan plan_timings(const std::vector<Candidate>& candidates) {
  TimingPlan plan;
  plan.timing_of.assign(candidates.size(), 0);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.skipped.empty()) continue;
    std::size_t j = 0;
    for (; j < plan.timed.size(); ++j) {
      const Candidate& t = candidates[plan.timed[j]];
      if (t.p == c.p && t.b == c.b && t.strategy == c.strategy && t.interval == c.interval &&
          t.allreduce == c.allreduce && t.bucket_bytes == c.bucket_bytes && t.sharding == c.sharding &&
          t.shard_algorithm == c.shard_algorithm)
        break;
    }
    if (j == plan.timed.size()) plan.timed.push_back(i);
    plan.timing_of[i] = j;
  }
  return plan;
}

void set_iteration_times(std::vector<Candidate>& candidates, const TimingPlan& plan,
                         const std::vector<IterationTiming>& timings) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    if (!c.skipped.empty()) continue;
    const IterationTiming& t = timings[plan.timing_of[i]];
    c.iteration_s = t.time_s;
    if (!c.hides()) continue;
    c.exposed_s = t.exposed_s, c.alone_s = t.alone_s;
    if (t.alone_s > 0) c.hidden = 1 - t.exposed_s / t.alone_s;
  }
}

void estimate(std::vector<Candidate>& candidates, const std::vector<RunOutcome>& convergence) {
  for (Candidate& c : candidates) {
    if (!c.skipped.empty() || !std::isfinite(c.iteration_s) || c.point >= convergence.size()) continue;
    const RunOutcome& run = convergence[c.point];
    c.estimate_reached = run.reached;
    c.estimate_iterations = run.reached ? run.iterations : 0;
    c.estimate_s = run.reached ? run.iterations * c.iteration_s : std::numeric_limits<double>::quiet_NaN();
  }
}

std::vector<std::size_t> rank_by_estimate(const std::vector<Candidate>& candidates) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].skipped.empty() && candidates[i].estimate_reached) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sooner(candidates[a], candidates[a].estimate_s, candidates[b], candidates[b].estimate_s);
  });
  return order;
}

double sequential_estimate_reference(const std::vector<Candidate>& candidates) {
  double reference = 0;
  for (const Candidate& c : candidates)
    if (c.sequential() && c.estimate_reached && (reference == 0 || c.estimate_s < reference)) reference = c.estimate_s;
  return reference;
}

std::vector<std::size_t> pick_finalists(const std::vector<Candidate>& candidates, std::size_t k) {
  const std::vector<std::size_t> order = rank_by_estimate(candidates);
  std::vector<bool> chosen(order.size(), false);
  for (std::size_t r = 0; r < order.size() && r < k; ++r) chosen[r] = true;
  // The fastest of each strategy on p > 1 and the fastest sequential one (the reference):
  // an optimistic guess for one strategy must not push out another's.
  std::vector<std::string> seen;
  for (std::size_t r = 0; r < order.size(); ++r) {
    const Candidate& c = candidates[order[r]];
    const std::string kind = c.sequential() ? "sequential" : std::string(to_string(c.strategy));
    if (std::find(seen.begin(), seen.end(), kind) != seen.end()) continue;
    seen.push_back(kind);
    chosen[r] = true;
  }
  std::vector<std::size_t> finalists;
  for (std::size_t r = 0; r < order.size(); ++r)  // the reference first
    if (chosen[r] && candidates[order[r]].sequential()) {
      finalists.push_back(order[r]);
      chosen[r] = false;
      break;
    }
  for (std::size_t r = 0; r < order.size(); ++r)
    if (chosen[r]) finalists.push_back(order[r]);
  return finalists;
}

void confirm_finalists(std::vector<Candidate>& candidates, const std::vector<std::size_t>& finalists, bool prune,
                       const ConfirmRun& run) {
  double confirmed_best = 0;  // the fastest confirmed time so far (0: none)
  for (std::size_t f = 0; f < finalists.size(); ++f) {
    Candidate& c = candidates[finalists[f]];
    c.finalist = true;
    if (prune && confirmed_best > 0) c.bound_s = confirmed_best;
    c.confirmed = run(c, f);
    if (c.confirmed->reached && (confirmed_best == 0 || c.confirmed->time_s < confirmed_best))
      confirmed_best = c.confirmed->time_s;
  }
}

std::vector<std::size_t> order_by_confirmed(const std::vector<Candidate>& candidates,
                                            std::vector<std::size_t> finalists) {
  std::stable_sort(finalists.begin(), finalists.end(), [&](std::size_t a, std::size_t b) {
    const RunOutcome &ra = *candidates[a].confirmed, &rb = *candidates[b].confirmed;
    if (ra.reached != rb.reached) return ra.reached;
    return ra.reached && (ra.time_s < rb.time_s || (ra.time_s == rb.time_s && candidates[a].p < candidates[b].p));
  });
  return finalists;
}

long best_sequential(const std::vector<Candidate>& candidates) { return fastest(candidates, true); }
long best_confirmed(const std::vector<Candidate>& candidates) { return fastest(candidates, false); }

std::string shortest(double v) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}

std::vector<std::string> candidate_args(const Candidate& c, bool learning) {
  const Strategy s = c.sequential() ? Strategy() : c.strategy;  // the sequential run: block on one rank
  const SearchTraits& t = *s->search;
  std::vector<std::string> args{"--np", std::to_string(c.p), "--strategy", std::string(to_string(s)),
                                "--" + std::string(t.block_option), std::to_string(c.b)};
  if (learning) args.insert(args.end(), {"--eta", shortest(c.eta), "--alpha", shortest(c.alpha)});
  if (!t.interval_option.empty() && c.interval > 0)
    args.insert(args.end(), {"--" + std::string(t.interval_option), std::to_string(c.interval)});
  if (!c.sequential() && !c.allreduce.empty())
    args.insert(args.end(), {"--" + std::string(t.allreduce_option), c.allreduce});
  if (!c.sequential() && c.bucket_bytes)
    args.insert(args.end(), {"--" + std::string(t.bucket_option), std::to_string(*c.bucket_bytes)});
  if (!c.sequential() && !c.sharding.empty()) args.insert(args.end(), {"--" + std::string(t.sharding_option), c.sharding});
  if (!c.sequential() && !c.shard_algorithm.empty())
    args.insert(args.end(), {"--" + std::string(t.shard_algorithm_option), c.shard_algorithm});
  return args;
}

std::size_t updates_per_epoch(std::size_t n, std::size_t b) { return (n + b - 1) / b; }

double check_pass_growth_s(double per_sample_s, std::size_t b, int p) {
  const auto ranks = static_cast<std::size_t>(p);
  const std::size_t largest_one = (b + ranks - 1) / ranks, largest_two = (2 * b + ranks - 1) / ranks;
  return per_sample_s * static_cast<double>(largest_two - largest_one);
}

IterationTiming second_update(const UpdateRuns& runs) {
  return {.time_s = runs.two_s - runs.one_s - runs.check_s,
          .exposed_s = runs.exposed_two_s - runs.exposed_one_s,
          .alone_s = runs.alone_two_s - runs.alone_one_s};
}

void skip_unfit(std::vector<Candidate>& candidates, const NetSpec& spec, const TrainConfig& base, double value_bytes,
                double device_bytes) {
  if (!spec.table || !(device_bytes > 0)) return;
  for (Candidate& c : candidates) {
    if (!c.skipped.empty()) continue;
    TrainConfig config = base;
    config.strategy = c.sequential() ? Strategy{} : c.strategy;
    config.settings = {};
    config.block = c.b;
    if (c.bucket_bytes && !c.sequential() && !c.strategy->search->bucket_option.empty())
      config.settings.set(c.strategy->search->bucket_option, static_cast<double>(*c.bucket_bytes));
    if (!c.sequential() && !c.sharding.empty()) config.settings.set_text(c.strategy->search->sharding_option, c.sharding);
    const DeviceMemory need = device_memory(spec, config, c.p, value_bytes);
    if (need.total > device_bytes)
      c.skipped = "does not fit the devices: " + gib(need.total) + " a rank of their " + gib(device_bytes) +
                  " (wulf:memory)";
  }
}

void skip_without_two_updates(std::vector<Candidate>& candidates, std::size_t n) {
  for (Candidate& c : candidates)
    if (c.skipped.empty() && 2 * c.b > n)
      c.skipped = "2b = " + std::to_string(2 * c.b) + " is more than the " + std::to_string(n) +
                  " training samples: an update is timed as the second of two";
}

void set_epoch_times(std::vector<Candidate>& candidates, const TimingPlan& plan, const std::vector<UpdateRuns>& runs,
                     std::size_t n, double target_s) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    if (!c.skipped.empty()) continue;
    c.runs = runs[plan.timing_of[i]];
    const IterationTiming t = second_update(*c.runs);
    c.update_s = t.time_s;
    c.updates = updates_per_epoch(n, c.b);
    c.epoch_s = static_cast<double>(c.updates) * c.update_s;
    c.meets = c.epoch_s <= target_s;
    if (!c.hides()) continue;
    c.exposed_s = t.exposed_s, c.alone_s = t.alone_s;
    if (t.alone_s > 0) c.hidden = 1 - t.exposed_s / t.alone_s;
  }
}

std::vector<std::size_t> order_by_processors(const std::vector<Candidate>& candidates) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].skipped.empty() && std::isfinite(candidates[i].epoch_s)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Candidate &ca = candidates[a], &cb = candidates[b];
    return ca.p != cb.p ? ca.p < cb.p : ca.epoch_s < cb.epoch_s;
  });
  return order;
}

long choose_by_epoch(const std::vector<Candidate>& candidates) {
  for (std::size_t i : order_by_processors(candidates))
    if (candidates[i].meets) return static_cast<long>(i);
  return -1;
}

long fastest_epoch(const std::vector<Candidate>& candidates) {
  long best = -1;
  for (std::size_t i : order_by_processors(candidates)) {
    const Candidate& c = candidates[i];
    if (best < 0 || c.epoch_s < candidates[static_cast<std::size_t>(best)].epoch_s) best = static_cast<long>(i);
  }
  return best;
}

Json epoch_candidate_json(const Candidate& c) {
  Json j = Json::object();
  j["strategy"] = c.sequential() ? "sequential" : std::string(to_string(c.strategy));
  j["label"] = c.label();
  j["p"] = c.p;
  j["b"] = c.b;
  j["allreduce"] = c.allreduce.empty() ? Json(nullptr) : Json(c.allreduce);
  if (c.bucket_bytes) j["bucket_bytes"] = *c.bucket_bytes, j["buckets"] = c.buckets;
  j["train_args"] = candidate_args(c, false);
  j["skipped"] = c.skipped.empty() ? Json(nullptr) : Json(c.skipped);
  Json screen = Json::object();
  screen["one_update_run_s"] = c.runs ? Json(c.runs->one_s) : Json(nullptr);
  screen["two_update_run_s"] = c.runs ? Json(c.runs->two_s) : Json(nullptr);
  screen["check_pass_growth_s"] = c.runs ? Json(c.runs->check_s) : Json(nullptr);
  screen["update_s"] = c.update_s;  // NaN: null in the record
  screen["updates"] = c.runs ? Json(c.updates) : Json(nullptr);
  screen["epoch_s"] = c.epoch_s;
  screen["meets_target"] = c.runs ? Json(c.meets) : Json(nullptr);
  screen["exposed_comm_s"] = c.exposed_s;  // per update
  screen["alone_comm_s"] = c.alone_s;
  screen["hidden"] = c.hidden;
  j["screening"] = std::move(screen);
  return j;
}

Json outcome_json(const RunOutcome& o) {
  return {{"status", o.status},
          {"reached", o.reached},
          {"iterations", o.iterations},
          {"time_s", o.time_s},
          {"final_error", o.final_error},
          {"best_error", o.best_error},
          {"best_iteration", o.best_iteration},
          {"wall_s", o.wall_s}};
}

Json candidate_json(const Candidate& c, double estimate_reference_s, double confirmed_reference_s) {
  Json j = Json::object();
  j["strategy"] = c.sequential() ? "sequential" : std::string(to_string(c.strategy));
  j["p"] = c.p;
  j["b"] = c.b;
  j["eta"] = c.eta;
  j["alpha"] = c.alpha;
  if (!c.sequential() && !c.strategy->search->interval_option.empty())
    j[std::string(c.strategy->option(c.strategy->search->interval_option)->key)] = c.interval;
  j["allreduce"] = c.allreduce.empty() ? Json(nullptr) : Json(c.allreduce);
  if (c.bucket_bytes) j["bucket_bytes"] = *c.bucket_bytes, j["buckets"] = c.buckets;
  j["train_args"] = candidate_args(c);
  j["skipped"] = c.skipped.empty() ? Json(nullptr) : Json(c.skipped);
  Json screen = Json::object();
  screen["iteration_s"] = c.iteration_s;
  screen["exposed_comm_s"] = c.exposed_s;  // NaN: null in the record
  screen["alone_comm_s"] = c.alone_s;
  screen["hidden"] = c.hidden;
  screen["convergence"] = to_string(c.basis);
  screen["reached"] = c.estimate_reached;
  screen["iterations"] = c.estimate_reached ? Json(c.estimate_iterations) : Json(nullptr);
  screen["time_s"] = c.estimate_s;
  screen["speedup"] =
      c.estimate_reached && estimate_reference_s > 0 ? Json(estimate_reference_s / c.estimate_s) : Json(nullptr);
  j["screening"] = std::move(screen);
  j["finalist"] = c.finalist;
  if (c.confirmed) {
    Json conf = outcome_json(*c.confirmed);
    conf["max_seconds"] = c.bound_s > 0 ? Json(c.bound_s) : Json(nullptr);
    conf["speedup"] = c.confirmed->reached && confirmed_reference_s > 0
                          ? Json(confirmed_reference_s / c.confirmed->time_s)
                          : Json(nullptr);
    conf["estimate_error"] =
        c.confirmed->reached && c.estimate_reached ? Json(c.confirmed->time_s / c.estimate_s - 1) : Json(nullptr);
    j["confirmed"] = std::move(conf);
  } else {
    j["confirmed"] = nullptr;
  }
  return j;
}

}  // namespace wulf
